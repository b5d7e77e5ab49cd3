// Writes the crafted containers and library of bench/hostile/run.sh into OUTPUT_DIR (run.sh writes its .pt2): the
// resource-exhaustion shapes of the hostile round (docs/SECURITY.md), each as a file a user could hand mpspack.
//   shared_strings.mpk   one 4 KiB string referenced 2^20 times from one library's imports (rule M4)
//   shared_library.mpk   one library table referenced 64 times, each with 4,096 references to a 4 KiB string
//   shared_segment.mpk   2,000 libraries sharing one 1 MiB library segment (rule S5: unpack would write 2 GB)
//   shared_weights.mpk   4,096 weights entries sharing one 256 MiB segment (hashing per reference would read 1 TiB)
//   weights_256m.mpk     a valid container of one 256 MiB weights segment: what the commands cost when they accept
//   long_names.so        2,000 section headers and 2,000 symbols all named by one 16 KiB name
//   make_inputs OUTPUT_DIR
#include "crafted_container.hpp"
#include "mpspack/format/hash.hpp"
#include "long_names_elf.hpp"
#include "shared_metadata.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace mpspack;

namespace {

bool write(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return bool(out);
}

// The file of `c`, its segments moved to where crafted_file puts the data: after a metadata block larger than the
// crafted base's, the data region starts later than kCraftedDataOffset.
std::vector<uint8_t> file_of(test::Crafted c) {
  uint64_t at = test::kCraftedDataOffset;  // where the segment offsets take the data to start
  for (;;) {
    const uint64_t data_offset =
        align_up(format::kHeaderSize + format::encode_metadata(c.manifest).size(), format::kSegmentAlignment);
    if (data_offset == at) return test::crafted_file(c);
    for (SegmentInfo& seg : c.manifest.segments) seg.offset = seg.offset - at + data_offset;
    at = data_offset;
  }
}

std::vector<uint8_t> shared_segment() {
  test::Crafted c = test::crafted_base();
  c.manifest.segments[0].size = 1 << 20;
  c.manifest.segments.resize(1);
  c.manifest.sources.clear();
  c.manifest.weights.clear();
  c.manifest.examples.clear();
  LibraryInfo l = c.manifest.libraries[0];
  l.weights = -1;
  l.cubins.clear();
  l.restore.clear();
  l.region.reset();
  l.removed_size = 0;
  l.original_size = 1 << 20;
  c.manifest.libraries.clear();
  for (int i = 0; i < 2000; ++i) {
    l.name = "l" + std::to_string(i);
    c.manifest.libraries.push_back(l);
  }
  c.data.assign(1 << 20, 0x5a);
  return file_of(c);
}

std::vector<uint8_t> weights_only(size_t entries) {
  test::Crafted c = test::crafted_base();
  const uint64_t big = uint64_t(256) << 20;
  c.manifest.segments = {test::crafted_segment(SegmentKind::Weights, "w.blob", 0, big)};
  c.manifest.sources.clear();
  c.manifest.libraries.clear();
  c.manifest.examples.clear();
  c.manifest.weights.assign(entries, WeightsInfo{0, {}});
  c.data.assign(big, 0x5a);
  c.manifest.segments[0].xxh3 = format::xxh3_64(c.data);
  return file_of(c);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: make_inputs OUTPUT_DIR\n"), 2;
  const std::filesystem::path dir = argv[1];
  const bool ok =
      write(dir / "shared_strings.mpk", test::crafted_file(test::shared_block(1, 1u << 20, 4096), {})) &&
      write(dir / "shared_library.mpk", test::crafted_file(test::shared_block(64, 4096, 4096), {})) &&
      write(dir / "shared_segment.mpk", shared_segment()) && write(dir / "shared_weights.mpk", weights_only(4096)) &&
      write(dir / "weights_256m.mpk", weights_only(1)) && write(dir / "long_names.so", test::one_long_name());
  if (!ok) return std::fprintf(stderr, "make_inputs: cannot write into %s\n", argv[1]), 1;
  return 0;
}
