// How a small library's bytes reach the memfd the loader dlopens, with the XXH3 check of those bytes: the ways of
// filling a fresh memfd from a page-cached file mapped as the container is, each alone and with the hash. Why the
// loader hashes a small library in one pass and copies it in another (loader/segment_checks.cpp, library_memory.cpp):
// hashing and writing each 64 KiB piece in turn costs more in write() calls than the second read of bytes the first
// left in the cache, and a mapping of the memfd costs a page fault per page (or, populated, as much in one call). Every
// case runs in a fresh memfd; the figure is the median of ROUNDS rounds, the cases taking turns within each round. CASE
// (0-7) runs only that one, as a fresh process sees it (then run it many times and take the median).
//   g++ -O2 -mavx2 bench/micro/memfd_write.cpp -o /tmp/memfd_write && /tmp/memfd_write FILE [ROUNDS=200] [CASE]
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void write_all(int fd, const unsigned char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w <= 0) std::exit(2);
    p += w;
    n -= size_t(w);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: memfd_write FILE [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 200;
  const int only = argc > 3 ? std::atoi(argv[3]) : -1;  // one case, as a fresh process sees it
  const int in = ::open(argv[1], O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (in < 0 || ::fstat(in, &st) != 0) return 2;
  const size_t n = size_t(st.st_size);
  constexpr size_t kPiece = 64 << 10;
  void* buffer = std::aligned_alloc(4096, kPiece);
  unsigned long long sink = 0;

  // Writes the bytes 64 KiB at a time, hashing each piece from the source after writing it.
  auto write_hashing_pieces = [&](const unsigned char* src, int fd) {
    XXH3_state_t s;
    XXH3_64bits_reset(&s);
    for (size_t at = 0; at < n; at += kPiece) {
      const size_t k = std::min(kPiece, n - at);
      write_all(fd, src + at, k);
      XXH3_64bits_update(&s, src + at, k);
    }
    sink += XXH3_64bits_digest(&s);
  };
  // Sizes the file, maps it with `flags`, copies the bytes in and hashes the copy.
  auto copy_through_mapping = [&](const unsigned char* src, int fd, int flags) {
    if (::ftruncate(fd, off_t(n)) != 0) std::exit(2);
    auto* dst = static_cast<unsigned char*>(::mmap(nullptr, n, PROT_READ | PROT_WRITE, flags, fd, 0));
    if (dst == MAP_FAILED) std::exit(2);
    std::memcpy(dst, src, n);
    sink += XXH3_64bits(dst, n);
    ::munmap(dst, n);
  };

  struct Case {
    const char* name;
    std::function<void(const unsigned char*, int)> fill;
  };
  const std::vector<Case> cases = {
      {"write (no hash)", [&](const unsigned char* src, int fd) { write_all(fd, src, n); }},
      {"hash, then write (two passes)",
       [&](const unsigned char* src, int fd) {
         sink += XXH3_64bits(src, n);
         write_all(fd, src, n);
       }},
      {"per 64 KiB: write, hash the source", write_hashing_pieces},
      {"per 64 KiB: copy to a buffer, hash it, write it",
       [&](const unsigned char* src, int fd) {
         XXH3_state_t s;
         XXH3_64bits_reset(&s);
         auto* b = static_cast<unsigned char*>(buffer);
         for (size_t at = 0; at < n; at += kPiece) {
           const size_t k = std::min(kPiece, n - at);
           std::memcpy(b, src + at, k);
           XXH3_64bits_update(&s, b, k);
           write_all(fd, b, k);
         }
         sink += XXH3_64bits_digest(&s);
       }},
      {"ftruncate, mmap, memcpy, hash the copy",
       [&](const unsigned char* src, int fd) { copy_through_mapping(src, fd, MAP_SHARED); }},
      {"ftruncate, MAP_POPULATE, memcpy, hash the copy",
       [&](const unsigned char* src, int fd) { copy_through_mapping(src, fd, MAP_SHARED | MAP_POPULATE); }},
      {"fallocate, then write, hash per 64 KiB",
       [&](const unsigned char* src, int fd) {
         if (::fallocate(fd, 0, 0, off_t(n)) != 0) std::exit(2);
         write_hashing_pieces(src, fd);
       }},
      {"hash alone (mapping already faulted in)", [&](const unsigned char* src, int) { sink += XXH3_64bits(src, n); }},
  };
  std::vector<std::vector<double>> us(cases.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t c = 0; c < cases.size(); ++c) {
      if (only >= 0 && c != size_t(only)) continue;
      // A fresh mapping of the file each time, as each load maps its container afresh.
      auto* src = static_cast<const unsigned char*>(::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, in, 0));
      if (src == MAP_FAILED) return 2;
      if (c + 1 == cases.size()) sink += XXH3_64bits(src, n);  // "alone": its faults taken before the clock
      const int fd = ::memfd_create("bench", MFD_CLOEXEC);
      if (fd < 0) return 2;
      const auto t0 = Clock::now();
      cases[c].fill(src, fd);
      us[c].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      ::close(fd);
      ::munmap(const_cast<unsigned char*>(src), n);
    }
  std::printf("%zu bytes, median of %d rounds (page-cached source, fresh mapping and memfd each time)\n", n, rounds);
  for (size_t c = 0; c < cases.size(); ++c) {
    if (us[c].empty()) continue;
    std::sort(us[c].begin(), us[c].end());
    const double med = us[c][us[c].size() / 2];
    std::printf("  %-48s %8.1f us  %5.2f GB/s\n", cases[c].name, med, double(n) / med / 1e3);
  }
  std::fprintf(stderr, "(checksum %llx)\n", sink);
  std::free(buffer);
}
