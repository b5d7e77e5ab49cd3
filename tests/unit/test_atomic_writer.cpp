// AtomicWriter::write_sparse: the file holds exactly the bytes given, and all-zero 64 KiB blocks become holes.
#include "mpspack/file.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

using namespace mpspack;

namespace {

std::vector<uint8_t> read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("write_sparse keeps every byte and leaves zero blocks as holes", "[file]") {
  constexpr size_t kBlock = 64 << 10;
  // Blocks: data, zeros, a run of 5 data blocks (longer than one 256 KiB write), 8 zero blocks, a block with
  // one non-zero byte at its end, then a short zero tail. Written in two calls that split a block.
  std::vector<uint8_t> bytes;
  auto data = [&](size_t n, uint8_t seed) {
    for (size_t i = 0; i < n; ++i) bytes.push_back(uint8_t(seed + i * 7 + 1) | 1);
  };
  auto zeros = [&](size_t n) { bytes.insert(bytes.end(), n, 0); };
  data(kBlock, 1);
  zeros(kBlock);
  data(5 * kBlock, 2);
  zeros(8 * kBlock);
  zeros(kBlock - 1);
  bytes.push_back(0x5a);
  zeros(1000);

  const auto dir = std::filesystem::temp_directory_path() / ("mpspack-test-sparse-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "out.bin";
  auto w = AtomicWriter::create(path);
  REQUIRE(w.ok());
  const size_t split = 3 * kBlock + 123;
  REQUIRE(w->write_sparse(bytes.data(), split).ok());
  REQUIRE(w->write_sparse(bytes.data() + split, bytes.size() - split).ok());
  CHECK(w->position() == bytes.size());
  REQUIRE(w->commit().ok());

  CHECK(read_all(path) == bytes);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  // 8 whole zero blocks (and the one before the data run) are holes, where the file system keeps them.
  if (uint64_t(st.st_blocks) * 512 >= bytes.size())
    WARN("skipped the hole check: " << dir << " does not keep holes (" << st.st_blocks * 512 << " bytes allocated)");
  else CHECK(uint64_t(st.st_blocks) * 512 <= bytes.size() - 8 * kBlock);
  std::filesystem::remove_all(dir);
}
