// release_file_pages (shim/file_pages.hpp): a mapped file's clean pages go, anything whose bytes live only in memory
// stays.
#include "runtime/shim/file_pages.hpp"

#include "shim_test_util.hpp"

#include <catch2/catch.hpp>
#include <cli_runner.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

using namespace mpspack::test;

namespace {

const std::size_t kPage = std::size_t(::sysconf(_SC_PAGESIZE));

bool resident(const void* p) { return present_pages(p, kPage) == 1; }  // p: a page's start

}  // namespace

TEST_CASE("release_file_pages drops a mapped file's clean pages and keeps written and anonymous ones",
          "[shim][packed]") {
  TempDir tmp;
  const std::size_t pages = 6;
  std::vector<unsigned char> bytes(pages * kPage);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + i / kPage);
  const auto path = tmp.path / "weights.bin";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  // Private and writable, as the loader maps a container's weights: page 2 written (copied on write).
  auto* file = static_cast<unsigned char*>(::mmap(nullptr, bytes.size(), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
  ::close(fd);
  REQUIRE(file != MAP_FAILED);
  volatile unsigned sum = 0;
  for (std::size_t i = 0; i < bytes.size(); i += kPage) sum = sum + file[i];  // every page present
  file[2 * kPage + 5] = 0xAB;
  for (std::size_t i = 0; i < pages; ++i) REQUIRE(resident(file + i * kPage));

  // Pages 0 and 5 only partly inside the range: left. Pages 1, 3, 4 dropped; page 2 (written) kept.
  CHECK(mpspack::shim::release_file_pages(file + 100, (pages - 1) * kPage) == kPage);
  CHECK(resident(file));
  CHECK(resident(file + 5 * kPage));
  CHECK(resident(file + 2 * kPage));
  CHECK_FALSE(resident(file + 1 * kPage));
  CHECK_FALSE(resident(file + 3 * kPage));
  CHECK_FALSE(resident(file + 4 * kPage));
  // Every byte as before: the dropped pages come back from the file, the written one kept its write.
  std::vector<unsigned char> want = bytes;
  want[2 * kPage + 5] = 0xAB;
  CHECK(std::memcmp(file, want.data(), want.size()) == 0);
  ::munmap(file, bytes.size());

  // Anonymous memory holds its only copy: nothing dropped.
  auto* anon = static_cast<unsigned char*>(
      ::mmap(nullptr, bytes.size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(anon != MAP_FAILED);
  std::memcpy(anon, bytes.data(), bytes.size());
  CHECK(mpspack::shim::release_file_pages(anon, bytes.size()) == bytes.size());
  for (std::size_t i = 0; i < pages; ++i) CHECK(resident(anon + i * kPage));
  CHECK(std::memcmp(anon, bytes.data(), bytes.size()) == 0);
  ::munmap(anon, bytes.size());
}
