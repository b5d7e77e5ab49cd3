// Writes fuzz_container seeds whose metadata shares one string, patch or library table many times
// (docs/FORMAT.md, rule M4), as header + metadata (fuzz_container zero-extends an input to the
// file_size its header declares). Run by make_corpus.sh: make_shared_seeds OUTPUT_DIR
#include "crafted_container.hpp"
#include "shared_metadata.hpp"

#include <cstdio>
#include <fstream>
#include <string>

using namespace mpspack;

namespace {

bool write_head(const std::string& path, const std::vector<uint8_t>& block) {
  const auto file = test::crafted_file(block, {});
  const size_t head = format::kHeaderSize + block.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(file.data()), std::streamsize(head));
  return bool(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_shared_seeds OUTPUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const bool ok =
      // 2^14 references to one 4 KiB string: 64 KiB of metadata, 66 MB decoded.
      write_head(dir + "/shared_string.head", test::shared_block(1, 1u << 14, 4096)) &&
      // 1024 references to a library holding 1024 references to a 4 KiB string.
      write_head(dir + "/shared_library.head", test::shared_block(1024, 1024, 4096)) &&
      // 1024 references to a library whose restore list is 4096 references to one 16 KiB patch.
      write_head(dir + "/shared_patch.head", test::shared_block(1024, 0, 1, 4096, 16u << 10)) &&
      // Under the limits: 3 references to a library with 100 imports, decoded in full.
      write_head(dir + "/shared_small.head", test::shared_block(3, 100, 64));
  if (!ok) std::perror("make_shared_seeds");
  return ok ? 0 : 1;
}
