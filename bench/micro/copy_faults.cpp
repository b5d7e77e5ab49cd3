// What Create's copy of embedded constants costs, in parts: AOTInductor's CPU Create mallocs one block for all
// constants and memcpys each one out of the library's constants region. Here the region is a mapping of a
// page-cached FILE (what both the original .so and an mpspack container give it) and the block is fresh
// anonymous memory, as malloc returns for a large size. Each part is timed alone, then the whole copy as Create
// does it, then the same copy with the destination already faulted in (what is left of it without page faults).
// Last, the destination faulted in up front by T threads (MADV_POPULATE_WRITE over a part each; 4 KiB pages,
// then transparent huge pages) and the copy after it: what a loader that hands Create its block could save.
//   copy_faults FILE [THREADS...]   (bench/micro/run.sh)
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

unsigned char* fresh(size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
}

const unsigned char* mapped(int fd, size_t n) {
  void* p = mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<const unsigned char*>(p);
}

// MADV_POPULATE_WRITE (Linux 5.14) faults every page of [p, p+n) in for writing, without touching the bytes.
bool populate(unsigned char* p, size_t n, unsigned threads) {
  const size_t page = 2u << 20;  // parts on huge-page boundaries
  const size_t part = (n / threads + page - 1) / page * page;
  std::vector<std::thread> team;
  bool ok = true;
  for (size_t at = 0; at < n; at += part)
    team.emplace_back([&, at] {
      if (madvise(p + at, std::min(part, n - at), 23 /* MADV_POPULATE_WRITE */) != 0) ok = false;
    });
  for (auto& t : team) t.join();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return 2;
  const size_t n = size_t(st.st_size);
  const double gib = double(n) / (1 << 30);
  auto report = [&](const char* what, double s) { std::printf("%-52s %7.3f s per GiB\n", what, s / gib); };

  for (int pass = 1; pass <= 2; ++pass) {  // the first pass of a process runs slower on these VMs: both shown
    std::printf("pass %d, %.2f GiB\n", pass, gib);
    unsigned char* dst = fresh(n);
    const unsigned char* src = mapped(fd, n);
    if (dst == nullptr || src == nullptr) return 2;
    auto t = std::chrono::steady_clock::now();
    std::memset(dst, 0, n);
    report("fault in fresh memory (memset of a new mapping)", seconds_since(t));
    t = std::chrono::steady_clock::now();
    volatile unsigned sum = 0;
    for (size_t i = 0; i < n; i += 4096) sum += src[i];
    report("fault in the page-cached file (one read per page)", seconds_since(t));
    t = std::chrono::steady_clock::now();
    std::memcpy(dst, src, n);
    report("memcpy, both sides already faulted in", seconds_since(t));
    munmap(dst, n);
    munmap(const_cast<unsigned char*>(src), n);

    dst = fresh(n);
    src = mapped(fd, n);
    if (dst == nullptr || src == nullptr) return 2;
    t = std::chrono::steady_clock::now();
    std::memcpy(dst, src, n);
    report("memcpy from a new file mapping into fresh memory", seconds_since(t));
    munmap(dst, n);
    munmap(const_cast<unsigned char*>(src), n);

    for (int arg = 2; arg < argc; ++arg)
      for (bool huge : {false, true}) {
        const unsigned threads = unsigned(std::atoi(argv[arg]));
        dst = fresh(n);
        src = mapped(fd, n);
        if (dst == nullptr || src == nullptr || threads == 0) return 2;
        if (huge) madvise(dst, n, MADV_HUGEPAGE);
        t = std::chrono::steady_clock::now();
        if (!populate(dst, n, threads)) return 3;
        const double faults = seconds_since(t);
        std::memcpy(dst, src, n);
        char what[80];
        std::snprintf(what, sizeof what, "populate on %2u threads%s, then memcpy", threads, huge ? " (THP)" : "");
        std::printf("%-52s %7.3f s per GiB (populate %.3f)\n", what, seconds_since(t) / gib, faults / gib);
        munmap(dst, n);
        munmap(const_cast<unsigned char*>(src), n);
      }
  }
}
