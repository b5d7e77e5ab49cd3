// release_file_pages (file_pages.hpp): pagemap's entry per page says whether it is present (bit 63) and whether it
// is a file page or shared memory (bit 61), which a private mapping's page stops being once written.
#include "file_pages.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace mpspack::shim {
namespace {

constexpr uint64_t kPresent = uint64_t(1) << 63, kFileOrShared = uint64_t(1) << 61;

// Madvises [first, first + count) pages of `page` bytes, runs of droppable ones at a time.
void drop_runs(const std::vector<uint64_t>& entries, uintptr_t first, std::size_t page, std::size_t& kept) {
  std::size_t run = 0;
  auto flush = [&](std::size_t end) {
    if (run == 0) return;
    const uintptr_t start = first + (end - run) * page;
    if (::madvise(reinterpret_cast<void*>(start), run * page, MADV_DONTNEED) != 0) kept += run * page;
    run = 0;
  };
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const uint64_t e = entries[i];
    if (!(e & kPresent)) {
      flush(i);
      continue;
    }
    if (e & kFileOrShared) {
      ++run;
      continue;
    }
    flush(i);
    kept += page;  // written, or anonymous: its bytes are only here
  }
  flush(entries.size());
}

}  // namespace

std::size_t release_file_pages(const void* p, std::size_t bytes) {
  const auto page = std::size_t(::sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
  const uintptr_t first = (lo + page - 1) / page * page, last = hi / page * page;  // whole pages only
  if (last <= first) return 0;
  const std::size_t count = (last - first) / page;
  std::vector<uint64_t> entries(count);
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return last - first;
  const auto want = ssize_t(count * sizeof(uint64_t));
  const bool read_all = ::pread(fd, entries.data(), std::size_t(want), off_t(first / page * sizeof(uint64_t))) == want;
  ::close(fd);
  if (!read_all) return last - first;
  std::size_t kept = 0;
  drop_runs(entries, first, page, kept);
  return kept;
}

}  // namespace mpspack::shim
