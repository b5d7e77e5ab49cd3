// Hashing a file that is in the page cache, the ways verify could read it: through a mapping, or with pread()
// into a 1 MiB buffer placed at OFFSET bytes past a page boundary (malloc puts large blocks 16 bytes past one);
// beside them the two limits: pread() alone (the kernel's copy) and hashing the same bytes already in memory.
//   read_hash FILE   (bench/micro/run.sh; build with -mavx2 so the hash is not the limit)
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return 2;
  const size_t n = size_t(st.st_size), step = 1 << 20;
  auto time = [&](const char* name, auto f) {
    for (int rep = 0; rep < 2; ++rep) {  // the first pass of a process runs slower on these VMs: both shown
      auto a = std::chrono::steady_clock::now();
      unsigned long long h = f();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
      std::printf("%-26s pass %d: %6.2f GB/s (%llx)\n", name, rep + 1, n / s / 1e9, h);
    }
  };
  time("mmap + hash", [&] {
    auto* p = (const unsigned char*)mmap(nullptr, n, PROT_READ, MAP_SHARED, fd, 0);
    unsigned long long h = XXH3_64bits(p, n);
    munmap((void*)p, n);
    return h;
  });
  unsigned char* raw = nullptr;
  if (posix_memalign((void**)&raw, 4096, step + 4096) != 0) return 2;
  for (size_t off : {size_t(0), size_t(16), size_t(64)}) {
    char name[64];
    std::snprintf(name, sizeof name, "pread, buffer at +%zu", off);
    time(name, [&] {
      XXH3_state_t s;
      XXH3_64bits_reset(&s);
      for (size_t o = 0; o < n;) {
        ssize_t k = pread(fd, raw + off, step, off_t(o));
        if (k <= 0) break;
        XXH3_64bits_update(&s, raw + off, size_t(k));
        o += size_t(k);
      }
      return (unsigned long long)XXH3_64bits_digest(&s);
    });
  }
  time("pread alone, at +0", [&] {
    for (size_t o = 0; o < n;) {
      ssize_t k = pread(fd, raw, step, off_t(o));
      if (k <= 0) break;
      o += size_t(k);
    }
    return 0ull;
  });
  auto* copy = static_cast<unsigned char*>(std::malloc(n));
  if (copy == nullptr) return 2;
  for (size_t o = 0; o < n;) {  // one pread() returns at most 2 GiB - 4 KiB
    ssize_t k = pread(fd, copy + o, n - o, off_t(o));
    if (k <= 0) return 2;
    o += size_t(k);
  }
  time("hash of a copy in memory", [&] { return (unsigned long long)XXH3_64bits(copy, n); });
}
