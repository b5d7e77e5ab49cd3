// AtomicWriter::write_sparse and copy_sparse: the file holds exactly the bytes given, and all-zero 64 KiB blocks
// become holes, whether the bytes are written from memory or copied from a file by the kernel.
#include "mpspack/file.hpp"

#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <vector>

using namespace mpspack;

namespace {

std::vector<uint8_t> read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Blocks: data, zeros, a run of 5 data blocks (longer than one 256 KiB write), 8 zero blocks, a block with
// one non-zero byte at its end, then a short zero tail.
constexpr size_t kBlock = 64 << 10;
std::vector<uint8_t> sparse_bytes() {
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
  return bytes;
}

// Writes `bytes` with `put(writer, offset, size)` in two calls that split a block, then checks the file.
void check_sparse_output(const std::filesystem::path& dir, const std::vector<uint8_t>& bytes,
                         const std::function<Status(AtomicWriter&, size_t, size_t)>& put) {
  const auto path = dir / "out.bin";
  auto w = AtomicWriter::create(path);
  REQUIRE(w.ok());
  const size_t split = 3 * kBlock + 123;
  REQUIRE(put(*w, 0, split).ok());
  REQUIRE(put(*w, split, bytes.size() - split).ok());
  CHECK(w->position() == bytes.size());
  REQUIRE(w->commit().ok());

  CHECK(read_all(path) == bytes);
  struct stat st{};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  // 8 whole zero blocks (and the one before the data run) are holes, where the file system keeps them.
  if (uint64_t(st.st_blocks) * 512 >= bytes.size())
    WARN("skipped the hole check: " << dir << " does not keep holes (" << st.st_blocks * 512 << " bytes allocated)");
  else
    CHECK(uint64_t(st.st_blocks) * 512 <= bytes.size() - 8 * kBlock);
}

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("write_sparse keeps every byte and leaves zero blocks as holes", "[file]") {
  const auto bytes = sparse_bytes();
  const auto dir = fresh_dir("mpspack-test-sparse");
  check_sparse_output(dir, bytes, [&](AtomicWriter& w, size_t off, size_t n) {
    return w.write_sparse(bytes.data() + off, n);
  });
  std::filesystem::remove_all(dir);
}

TEST_CASE("copy_sparse copies a file's bytes at an offset, holes included, in the kernel or from memory",
          "[file]") {
  const auto bytes = sparse_bytes();
  const auto dir = fresh_dir("mpspack-test-copy-sparse");
  // The bytes lie in the input after 4096 + 17 bytes of something else: the offsets must be honoured.
  std::vector<uint8_t> file_bytes(4096 + 17, 0xee);
  const size_t at = file_bytes.size();
  file_bytes.insert(file_bytes.end(), bytes.begin(), bytes.end());

  SECTION("an input on the same file system: copy_file_range") {
    std::ofstream(dir / "in.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(file_bytes.data()), std::streamsize(file_bytes.size()));
    auto in = MappedFile::open(dir / "in.bin");
    REQUIRE(in.ok());
    check_sparse_output(dir, bytes, [&](AtomicWriter& w, size_t off, size_t n) {
      return w.copy_sparse(in->fd(), at + off, in->data() + at + off, n);
    });
  }
  SECTION("an input the kernel may refuse to copy from (a memfd, another file system): written from memory") {
    const int fd = ::memfd_create("mpspack-test-input", MFD_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, file_bytes.data(), file_bytes.size()) == ssize_t(file_bytes.size()));
    auto in = MappedFile::from_fd(fd, "memfd");
    REQUIRE(in.ok());
    check_sparse_output(dir, bytes, [&](AtomicWriter& w, size_t off, size_t n) {
      return w.copy_sparse(in->fd(), at + off, in->data() + at + off, n);
    });
  }
  std::filesystem::remove_all(dir);
}
