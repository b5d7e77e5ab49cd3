#include "gemv.hpp"

#include "parallel.hpp"

#include <immintrin.h>

#include <algorithm>

namespace mpspack::shim {
namespace {

// Four rows at a time against one pass over x: four independent streams keep the memory system busy.
__attribute__((target("avx2,fma"))) void rows4_avx2(const float* a, int64_t lda, const float* x, int64_t n,
                                                    float* out) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 xv = _mm256_loadu_ps(x + j);
    for (int r = 0; r < 4; ++r) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(a + r * lda + j), xv, acc[r]);
  }
  for (int r = 0; r < 4; ++r) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc[r]), _mm256_extractf128_ps(acc[r], 1));
    s = _mm_hadd_ps(s, s);
    s = _mm_hadd_ps(s, s);
    float t = _mm_cvtss_f32(s);
    for (int64_t k = j; k < n; ++k) t += a[r * lda + k] * x[k];
    out[r] = t;
  }
}

float dot_portable(const float* a, const float* x, int64_t n) {
  float acc[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; ++k) acc[k] += a[j + k] * x[j + k];
  float t = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; j < n; ++j) t += a[j] * x[j];
  return t;
}

void rows_block(int64_t begin, int64_t end, int64_t cols, float alpha, const float* a, int64_t lda,
                const float* x, float beta, float* y, int64_t incy, bool avx2) {
  auto store = [&](int64_t i, float dot) {
    float& out = y[i * incy];
    out = beta == 0.0f ? alpha * dot : alpha * dot + beta * out;  // beta 0: y may hold NaN, as BLAS ignores it
  };
  int64_t i = begin;
  if (avx2)
    for (; i + 4 <= end; i += 4) {
      float d[4];
      rows4_avx2(a + i * lda, lda, x, cols, d);
      for (int r = 0; r < 4; ++r) store(i + r, d[r]);
    }
  for (; i < end; ++i) store(i, dot_portable(a + i * lda, x, cols));
}

}  // namespace

bool threaded_gemv_f32(int64_t rows, int64_t cols, float alpha, const float* a, int64_t lda, const float* x,
                       int64_t incx, float beta, float* y, int64_t incy) {
  if (incx != 1 || rows * cols < kThreadedGemvMinElements || gemv_mode() == "blas") return false;
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  run_parts([&](unsigned t, unsigned threads) {
    const unsigned parts = unsigned(std::min<int64_t>(threads, std::max<int64_t>(1, rows / 4)));
    if (t >= parts) return;
    // Blocks of whole 4-row groups, so every part but the last runs the 4-row kernel throughout.
    const int64_t per = (rows / parts + 3) / 4 * 4;
    const int64_t begin = std::min<int64_t>(rows, int64_t(t) * per);
    const int64_t end = t + 1 == parts ? rows : std::min<int64_t>(rows, begin + per);
    rows_block(begin, end, cols, alpha, a, lda, x, beta, y, incy, avx2);
  });
  return true;
}

}  // namespace mpspack::shim
