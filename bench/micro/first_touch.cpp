// What the first run of a model whose weights are mapped from a page-cached file pays, apart from the model: three
// passes reading every float of FILE through a fresh private mapping of it, with the mapping's page tables
//   lazy       filled by page faults during the first pass (what a mapping gives by default)
//   populate   filled up front by madvise(MADV_POPULATE_READ) (the loader's way: loader/model.cpp, populate())
//   huge       as lazy, at a 2 MiB-aligned address with MADV_HUGEPAGE (page-cache folios mapped 2 MiB at a time
//              where the kernel can)
// Prints ms per pass; the gap between pass 0 and pass 1 is what the first run pays beyond a steady one.
//   g++ -O2 -march=native bench/micro/first_touch.cpp -o first_touch && ./first_touch FILE
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace {
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: first_touch FILE\n"), 2;
  const int fd = ::open(argv[1], O_RDONLY);
  if (fd < 0) return std::perror(argv[1]), 1;
  const size_t huge = size_t(2) << 20, n = size_t(::lseek(fd, 0, SEEK_END)) / huge * huge;
  for (const char* way : {"lazy", "populate", "huge", "lazy", "populate", "huge"}) {
    void* at = nullptr;
    void* reserve = nullptr;
    if (std::strcmp(way, "huge") == 0) {
      reserve = ::mmap(nullptr, n + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      at = reinterpret_cast<void*>((uintptr_t(reserve) + huge - 1) / huge * huge);
    }
    const double t0 = now_ms();
    auto* p =
        static_cast<const float*>(::mmap(at, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | (at ? MAP_FIXED : 0), fd, 0));
    if (p == MAP_FAILED) return std::perror("mmap"), 1;
    if (std::strcmp(way, "populate") == 0) ::madvise(const_cast<float*>(p), n, MADV_POPULATE_READ);
    if (std::strcmp(way, "huge") == 0) ::madvise(const_cast<float*>(p), n, MADV_HUGEPAGE);
    std::printf("%-8s map %6.1f ms, passes:", way, now_ms() - t0);
    for (int pass = 0; pass < 3; ++pass) {
      const double a = now_ms();
      float s = 0;
      for (size_t i = 0; i < n / 4; ++i) s += p[i];
      std::printf(" %6.1f%s", now_ms() - a, s == 12345.0f ? "!" : "");
    }
    std::printf(" ms\n");
    ::munmap(const_cast<float*>(p), n);
    if (reserve) ::munmap(reserve, n + huge);
  }
}
