// XXH3-64 over a 1 MiB buffer that stays in cache: the speed of the hash alone. bench/micro/run.sh builds it
// twice, with the default vector code (SSE2 on x86-64) and with -mavx2, which is the choice hash.cpp makes at
// run time.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <vector>

int main() {
  std::vector<unsigned char> b(1 << 20, 7);
  const int reps = 4000;
  auto a = std::chrono::steady_clock::now();
  unsigned long long h = 0;
  for (int i = 0; i < reps; i++) h += XXH3_64bits(b.data(), b.size());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
  std::printf("%.2f GB/s (checksum %llx)\n", reps * double(b.size()) / s / 1e9, h);
}
