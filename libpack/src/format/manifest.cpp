#include "mpspack/manifest.hpp"

#include <fmt/format.h>

namespace mpspack {

const char* to_string(Flavour f) {
  switch (f) {
    case Flavour::Embedded: return "embedded";
    case Flavour::MmapSelf: return "mmap-self";
    case Flavour::ExternalBlob: return "external-blob";
  }
  return "unknown";
}

const char* to_string(SegmentKind k) {
  switch (k) {
    case SegmentKind::Library: return "library";
    case SegmentKind::Weights: return "weights";
    case SegmentKind::Cubin: return "cubin";
    case SegmentKind::Example: return "example";
  }
  return "unknown";
}

std::string dtype_name(int32_t code) {
  switch (code) {
    case dtype::uint8: return "u8";
    case dtype::int8: return "i8";
    case dtype::int16: return "i16";
    case dtype::int32: return "i32";
    case dtype::int64: return "i64";
    case dtype::float16: return "f16";
    case dtype::float32: return "f32";
    case dtype::float64: return "f64";
    case dtype::bool_: return "bool";
    case dtype::bfloat16: return "bf16";
  }
  return fmt::format("dtype{}", code);
}

uint32_t dtype_size(int32_t code) {
  switch (code) {
    case dtype::uint8: case dtype::int8: case dtype::bool_: return 1;
    case dtype::int16: case dtype::float16: case dtype::bfloat16: return 2;
    case dtype::int32: case dtype::float32: return 4;
    case dtype::int64: case dtype::float64: return 8;
  }
  return 0;
}

}  // namespace mpspack
