// What Create's copy of embedded constants costs, in parts: AOTInductor's CPU Create mallocs one block for all
// constants and memcpys each one out of the library's constants region. Here the region is a mapping of a
// page-cached FILE (what both the original .so and an mpspack container give it) and the block is fresh
// anonymous memory, as malloc returns for a large size. Each part is timed alone, then the whole copy as Create
// does it, then the same copy with the destination already faulted in (what is left of it without page faults).
//   copy_faults FILE   (bench/micro/run.sh)
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

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
  }
}
