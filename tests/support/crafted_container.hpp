// Containers crafted in memory, bypassing the writer's checks, so that a test can hand a reader
// exactly the rule violation it means: a valid base, one field changed, the checksum made right.
#pragma once

#include "mpspack/file.hpp"
#include "mpspack/format/container.hpp"
#include "mpspack/format/header.hpp"
#include "mpspack/format/metadata.hpp"
#include "mpspack/manifest.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

namespace mpspack::test {

inline constexpr uint64_t kCraftedDataOffset = 65536;  // the base's metadata is far smaller than this

// A valid container: one embedded library with a restore patch, its weights (with a constants
// table) and one cubin, and an example with one input and one output. `data` is the data region;
// the manifest's segment offsets are absolute.
struct Crafted {
  Manifest manifest;
  std::vector<uint8_t> data;
};

inline SegmentInfo crafted_segment(SegmentKind kind, std::string name, uint64_t offset, uint64_t size) {
  return SegmentInfo{kind, std::move(name), kCraftedDataOffset + offset, size, 64, 0, {}};
}

inline Crafted crafted_base() {
  Crafted c;
  Manifest& m = c.manifest;
  m.producer_version = "test";
  m.sources.push_back(SourceInfo{"model.so", 4096 + 256, std::string(64, 'a'), "so", "embedded"});
  m.segments = {crafted_segment(SegmentKind::Library, "model.so", 0, 4096),
                crafted_segment(SegmentKind::Weights, "model_weights.blob", 4096, 256),
                crafted_segment(SegmentKind::Cubin, "kernel.cubin", 4096 + 256, 64),
                crafted_segment(SegmentKind::Example, "input0", 4096 + 320, 16),
                crafted_segment(SegmentKind::Example, "output0", 4096 + 384, 8)};
  LibraryInfo l;
  l.name = "model";
  l.device = "cpu";
  l.machine = "x86_64";
  l.segment = 0;
  l.weights = 0;
  l.cubins = {2};
  l.original_size = 4096 + 256;
  l.original_sha256 = std::string(64, 'a');
  l.removed_offset = 1024;
  l.removed_size = 256;
  l.restore = {Patch{16, {1, 2, 3}}};
  l.region = ConstantsRegion{0x10000, 0x10100, 1024, ".lrodata", false};
  m.libraries.push_back(l);
  ConstantInfo w{"w", "fc.weight", dtype::float32, {2, 3}, {3, 1}, 0, 0, 64, 1, false};
  ConstantInfo b{"b", "fc.bias", dtype::float32, {4}, {1}, 0, 64, 64, 1, false};
  m.weights.push_back(WeightsInfo{1, {w, b}});
  m.examples.push_back(ExampleInfo{0, {TensorInfo{dtype::float32, {4}, 3}}, {TensorInfo{dtype::float32, {2}, 4}}});
  c.data.assign(4096 + 392, 0x5a);
  return c;
}

// Recomputes the header checksum of a whole file from its own header fields (left as is when
// those fields do not describe ranges inside the file: a reader refuses it before the checksum).
inline void fix_checksum(std::vector<uint8_t>& file) {
  namespace f = format::field;
  const uint32_t header_size = load_u32le(file.data() + f::header_size);
  const uint64_t meta_offset = load_u64le(file.data() + f::metadata_offset);
  const uint64_t meta_size = load_u64le(file.data() + f::metadata_size);
  if (header_size < f::end || header_size > file.size() || !range_fits(meta_offset, meta_size, file.size())) return;
  ByteView header({file.data(), header_size});
  ByteView meta({file.data() + meta_offset, meta_size});
  store_u64le(file.data() + f::checksum, format::header_checksum(header, meta));
}

// The bytes of a container holding `metadata` and `data`; the header is right for them.
inline std::vector<uint8_t> crafted_file(const std::vector<uint8_t>& metadata, const std::vector<uint8_t>& data) {
  const uint64_t data_offset = align_up(format::kHeaderSize + metadata.size(), format::kSegmentAlignment);
  format::Header h;
  h.metadata_offset = format::kHeaderSize;
  h.metadata_size = metadata.size();
  h.data_offset = data_offset;
  h.data_size = data.size();
  h.file_size = data_offset + data.size();
  std::vector<uint8_t> file(h.file_size, 0);
  auto header = format::encode_header(h);
  std::memcpy(file.data(), header.data(), header.size());
  std::memcpy(file.data() + format::kHeaderSize, metadata.data(), metadata.size());
  if (!data.empty()) std::memcpy(file.data() + data_offset, data.data(), data.size());
  fix_checksum(file);
  return file;
}

inline std::vector<uint8_t> crafted_file(const Crafted& c) {
  return crafted_file(format::encode_metadata(c.manifest), c.data);
}

// Opens `file` the way every command does (Container::parse over a mapping of it).
inline Result<format::Container> open_crafted(const std::vector<uint8_t>& file) {
  const int fd = ::memfd_create("mpspack-crafted", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error("memfd_create failed");
  for (size_t done = 0; done < file.size();) {
    const ssize_t n = ::write(fd, file.data() + done, file.size() - done);
    if (n <= 0) throw std::runtime_error("write to memfd failed");
    done += size_t(n);
  }
  MPK_TRY(auto mapped, MappedFile::from_fd(fd, "crafted.mpk"));
  return format::Container::parse(std::move(mapped));
}

}  // namespace mpspack::test
