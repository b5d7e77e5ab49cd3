// Row kernels for the shim's threaded f32 GEMV (y = A x, A row-major), side by side on one machine: rows at a
// time x accumulators per row x vector width. The rows are split evenly over an OpenMP team, as the shim does on
// the model's team. Prints the p50 of ITERS products for a D x D matrix, for each D given.
//   g++ -O3 -fopenmp bench/micro/gemv_kernels.cpp -o gemv_kernels && ./gemv_kernels 4096 16384
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__attribute__((target("avx2"))) float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_hadd_ps(s, s);
  s = _mm_hadd_ps(s, s);
  return _mm_cvtss_f32(s);
}

// R rows against one pass over x, A accumulators per row (A > 1 breaks the FMA dependency chain); PF > 0:
// prefetch each row PF floats ahead.
template <int R, int A, int PF = 0>
__attribute__((target("avx2,fma"))) void rows_avx2(const float* a, long lda, const float* x, long n, float* out) {
  __m256 acc[R][A];
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < A; ++k) acc[r][k] = _mm256_setzero_ps();
  long j = 0;
  for (; j + 8 * A <= n; j += 8 * A)
    for (int k = 0; k < A; ++k) {
      if (PF > 0 && (j + 8 * k) % 16 == 0)
        for (int r = 0; r < R; ++r)
          _mm_prefetch(reinterpret_cast<const char*>(a + r * lda + j + 8 * k + PF), _MM_HINT_T0);
      const __m256 xv = _mm256_loadu_ps(x + j + 8 * k);
      for (int r = 0; r < R; ++r) acc[r][k] = _mm256_fmadd_ps(_mm256_loadu_ps(a + r * lda + j + 8 * k), xv, acc[r][k]);
    }
  for (int r = 0; r < R; ++r) {
    __m256 s = acc[r][0];
    for (int k = 1; k < A; ++k) s = _mm256_add_ps(s, acc[r][k]);
    float t = hsum256(s);
    for (long m = j; m < n; ++m) t += a[r * lda + m] * x[m];
    out[r] = t;
  }
}

template <int R, int A, int PF = 0>
__attribute__((target("avx512f"))) void rows_avx512(const float* a, long lda, const float* x, long n, float* out) {
  __m512 acc[R][A];
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < A; ++k) acc[r][k] = _mm512_setzero_ps();
  long j = 0;
  for (; j + 16 * A <= n; j += 16 * A)
    for (int k = 0; k < A; ++k) {
      if (PF > 0)
        for (int r = 0; r < R; ++r)
          _mm_prefetch(reinterpret_cast<const char*>(a + r * lda + j + 16 * k + PF), _MM_HINT_T0);
      const __m512 xv = _mm512_loadu_ps(x + j + 16 * k);
      for (int r = 0; r < R; ++r) acc[r][k] = _mm512_fmadd_ps(_mm512_loadu_ps(a + r * lda + j + 16 * k), xv, acc[r][k]);
    }
  for (int r = 0; r < R; ++r) {
    __m512 s = acc[r][0];
    for (int k = 1; k < A; ++k) s = _mm512_add_ps(s, acc[r][k]);
    float t = _mm512_reduce_add_ps(s);
    for (long m = j; m < n; ++m) t += a[r * lda + m] * x[m];
    out[r] = t;
  }
}

using Kernel = void (*)(const float*, long, const float*, long, float*);
struct Variant {
  const char* name;
  Kernel k;
  int rows;
  bool avx512;
};

}  // namespace

int main(int argc, char** argv) {
  const Variant variants[] = {
      {"avx2 4 rows x 1 acc (the shim's)", rows_avx2<4, 1>, 4, false},
      {"avx2 4 rows x 2 acc", rows_avx2<4, 2>, 4, false},
      {"avx2 8 rows x 1 acc", rows_avx2<8, 1>, 8, false},
      {"avx512 4 rows x 1 acc", rows_avx512<4, 1>, 4, true},
      {"avx512 4 rows x 2 acc", rows_avx512<4, 2>, 4, true},
      {"avx512 8 rows x 1 acc", rows_avx512<8, 1>, 8, true},
      {"avx2 4 x 1, prefetch 1 KiB ahead", rows_avx2<4, 1, 256>, 4, false},
      {"avx2 4 x 1, prefetch 4 KiB ahead", rows_avx2<4, 1, 1024>, 4, false},
      {"avx512 4 x 2, prefetch 1 KiB ahead", rows_avx512<4, 2, 256>, 4, true},
      {"avx512 4 x 2, prefetch 4 KiB ahead", rows_avx512<4, 2, 1024>, 4, true},
  };
  const bool has512 = __builtin_cpu_supports("avx512f");
  std::printf("%d OpenMP threads, avx512f %s\n", omp_get_max_threads(), has512 ? "yes" : "no");
  for (int i = 1; i < argc; ++i) {
    const long D = std::atol(argv[i]);
    const int iters = D * D * 4 >= (1l << 30) ? 40 : 400;
    std::vector<float> a(static_cast<size_t>(D * D)), x(static_cast<size_t>(D)), y(static_cast<size_t>(D)),
        ref(static_cast<size_t>(D));
#pragma omp parallel for
    for (long r = 0; r < D; ++r)
      for (long c = 0; c < D; ++c) a[size_t(r * D + c)] = float((r * 7 + c * 13) % 17) / 17.0f - 0.5f;
    for (long c = 0; c < D; ++c) x[size_t(c)] = float(c % 11) / 11.0f;
    for (long r = 0; r < D; ++r) {
      double t = 0;
      for (long c = 0; c < D; ++c) t += double(a[size_t(r * D + c)]) * x[size_t(c)];
      ref[size_t(r)] = float(t);
    }
    std::printf("D = %ld (%.0f MiB), p50 of %d products\n", D, double(D * D * 4) / (1 << 20), iters);
    for (const auto& v : variants) {
      if (v.avx512 && !has512) continue;
      std::vector<double> ms;
      for (int it = 0; it < iters + 10; ++it) {
        auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
        {
          const long parts = omp_get_num_threads(), t = omp_get_thread_num();
          const long blocks = D / v.rows, b0 = blocks * t / parts, b1 = blocks * (t + 1) / parts;
          for (long b = b0; b < b1; ++b) v.k(&a[size_t(b * v.rows * D)], D, x.data(), D, &y[size_t(b * v.rows)]);
        }
        if (it >= 10)
          ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      float err = 0;
      for (long r = 0; r < D; ++r) err = std::max(err, std::fabs(y[size_t(r)] - ref[size_t(r)]));
      std::sort(ms.begin(), ms.end());
      std::printf("  %-34s p50 %8.3f ms  min %8.3f  %6.1f GB/s  (max error %.1e)\n", v.name, ms[ms.size() / 2], ms[0],
                  double(D * D * 4) / ms[ms.size() / 2] / 1e6, double(err));
    }
  }
}
