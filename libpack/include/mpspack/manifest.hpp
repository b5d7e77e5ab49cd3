// The container's manifest: plain descriptions of what it holds, shared by every part of libpack. These mirror the
// FlatBuffers metadata (schema/container.fbs) so that no caller ever touches generated code.
#pragma once

#include "mpspack/dtype.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mpspack {

enum class Flavour : uint8_t { Embedded = 0, MmapSelf = 1, ExternalBlob = 2 };
enum class SegmentKind : uint8_t { Library = 0, Weights = 1, Cubin = 2, Example = 3 };

const char* to_string(Flavour f);      // "embedded", "mmap-self", "external-blob"
const char* to_string(SegmentKind k);  // "library", "weights", "cubin", "example"

// "f32", "bf16", ... (the name in dtype.hpp's table); "dtype<N>" for codes mpspack does not name.
std::string dtype_name(int32_t code);

struct SegmentInfo {
  SegmentKind kind = SegmentKind::Library;
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t alignment = 0;
  uint64_t xxh3 = 0;
  std::vector<uint64_t> chunk_xxh3;  // of each format::kHashChunkBytes piece; empty up to that size (or minor 0)
};

struct SourceInfo {
  std::string name;
  uint64_t size = 0;
  std::string sha256;   // lowercase hex
  std::string kind;     // "so", "blob", "pt2", "cubin", "tensor"
  std::string flavour;  // for libraries; else empty
  uint32_t mode = 0;    // permission bits of the file as build read it; 0 when not recorded
};

struct Patch {
  uint64_t offset = 0;  // in the original library
  std::vector<uint8_t> bytes;
};

struct ConstantsRegion {
  uint64_t start_vaddr = 0;
  uint64_t end_vaddr = 0;
  uint64_t file_offset = 0;
  std::string section;
  bool writable = false;
};

struct ConstantInfo {
  std::string name;
  std::string fqn;
  int32_t dtype = -1;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  int64_t storage_offset = 0;
  uint64_t offset = 0;  // byte offset inside the weights blob
  uint64_t size = 0;    // bytes (padded as AOTInductor pads)
  int32_t type = 0;     // 0 unknown, 1 parameter, 2 buffer, 3 tensor constant, 4 folded
  bool from_folded = false;
};

struct LibraryInfo {
  std::string name;
  std::string device;  // "cpu", "cuda", "mps"
  std::string abi = "aoti-c-shim";
  std::string machine;  // "x86_64", "aarch64"
  Flavour flavour = Flavour::Embedded;
  uint32_t segment = 0;
  std::vector<std::string> needed;
  std::vector<std::string> dropped_needed;
  std::vector<std::string> imports;
  std::optional<ConstantsRegion> region;
  int32_t weights = -1;
  std::vector<uint32_t> cubins;
  uint64_t original_size = 0;
  std::string original_sha256;
  uint64_t removed_offset = 0;
  uint64_t removed_size = 0;
  std::vector<Patch> restore;
};

struct WeightsInfo {
  uint32_t segment = 0;
  std::vector<ConstantInfo> constants;
};

struct TensorInfo {
  int32_t dtype = dtype::float32;
  std::vector<int64_t> shape;
  uint32_t segment = 0;
};

struct ExampleInfo {
  uint32_t library = 0;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

// Everything the metadata block says.
struct Manifest {
  std::string producer = "mpspack";
  std::string producer_version;
  std::vector<SourceInfo> sources;
  std::vector<SegmentInfo> segments;
  std::vector<LibraryInfo> libraries;
  std::vector<WeightsInfo> weights;
  std::vector<ExampleInfo> examples;
};

}  // namespace mpspack
