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
  if (const DtypeInfo* d = find_dtype(code)) return d->name;
  return fmt::format("dtype{}", code);
}

}  // namespace mpspack
