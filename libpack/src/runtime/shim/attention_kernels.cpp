// attention_kernels.hpp: the kernel text of attention_kernels.inc compiled three times, each under its instruction
// set's target options with its vector type, the bf16 pair products for AVX-512 BF16, and the pick among them by
// what the CPU reports (no ifunc resolver, so the AddressSanitizer build runs them too).
#include "attention_kernels.hpp"
#include "kernel_sets.hpp"
#include "simd_f32.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mpspack::shim::attn {

// Every CPU: one lane; 4 x 3 scalar sums fit the 16 registers of x86-64's baseline.
namespace portable {
struct V : simd::Scalar {
  static constexpr int kVectors = 3, kRows = 4, kRowsNarrow = 4;
  // 2^n for t = n + 1.5 * 2^23 (n an integer in [-126, 0] in t's low mantissa bits).
  static F pow2(F t) { return std::bit_cast<float>((std::bit_cast<uint32_t>(t) - 0x4b400000u + 127u) << 23); }
  static F zero_below(F x, F lowest, F e) { return x < lowest ? 0.0f : e; }
};
#include "attention_kernels.inc"
}  // namespace portable

#if defined(__x86_64__)

#pragma GCC push_options
#pragma GCC target("avx2,fma")
// 16 ymm registers: 6 x 2 sums + 2 vectors of B + 1 broadcast; one vector wide, 8 rows.
namespace avx2 {
struct V : simd::Avx2 {
  static constexpr int kVectors = 2, kRows = 6, kRowsNarrow = 8;
  static F pow2(F t) {
    const __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(0x4b400000 - 127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(n, 23));
  }
  static F zero_below(F x, F lowest, F e) { return _mm256_andnot_ps(_mm256_cmp_ps(x, lowest, _CMP_LT_OQ), e); }
};
#include "attention_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
// GCC 12's AVX-512 intrinsics fill their unused merge operand with a self-initialised _mm512_undefined_*(), which
// its own -Wuninitialized then reports at every use (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// 32 zmm registers: 6 x 4 sums + 4 vectors of B + 1 broadcast (64 columns: one head's width); one vector wide, 12
// rows.
namespace avx512 {
struct V : simd::Avx512 {
  static constexpr int kVectors = 4, kRows = 6, kRowsNarrow = 12;
  static F pow2(F t) {
    const __m512i n = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(0x4b400000 - 127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(n, 23));
  }
  static F zero_below(F x, F lowest, F e) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lowest, _CMP_NLT_UQ), e); }
};
#include "attention_kernels.inc"
}  // namespace avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bf16,avx2,fma")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// vdpbf16ps: per float32 lane, the sum plus the products of one bf16 pair of A (broadcast) and of B. 6 x 4 sums, 4
// vectors of B and one broadcast fit the 32 zmm registers, as for the float32 products.
namespace avx512_bf16 {

constexpr int kVectors = 4, kRows = 6, kRowsNarrow = 12;

inline __m512bh pair_of(const uint16_t* a) {  // a[0], a[1] in every lane (rows need not be 4-byte aligned)
  uint32_t w;
  std::memcpy(&w, a, 4);
  return (__m512bh)_mm512_set1_epi32(int(w));
}

// C[i, j * 16 + l] for i < R, j < NV, the last vector's lanes limited to `last`.
template <int R, int NV>
inline void block(int64_t P, float alpha, const float* scale, const uint16_t* A, int64_t lda, const uint32_t* B,
                  int64_t ldb, float* C, int64_t ldc, __mmask16 last) {
  __m512 acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t p = 0; p < P; ++p) {
    __m512bh b[NV];
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j)
      b[j] = (__m512bh)_mm512_maskz_loadu_epi32(j == NV - 1 ? last : __mmask16(0xffff), B + p * ldb + j * 16);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const __m512bh a = pair_of(A + i * lda + 2 * p);
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], a, b[j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    const __m512 s = _mm512_set1_ps(scale ? scale[i] : alpha);
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j)
      _mm512_mask_storeu_ps(C + i * ldc + j * 16, j == NV - 1 ? last : __mmask16(0xffff), _mm512_mul_ps(acc[i][j], s));
  }
}

template <int NV, int R>
inline void block_of(int64_t rem, int64_t P, float alpha, const float* scale, const uint16_t* A, int64_t lda,
                     const uint32_t* B, int64_t ldb, float* C, int64_t ldc, __mmask16 last) {
  if constexpr (R > 0) {
    if (rem == R) block<R, NV>(P, alpha, scale, A, lda, B, ldb, C, ldc, last);
    else block_of<NV, R - 1>(rem, P, alpha, scale, A, lda, B, ldb, C, ldc, last);
  }
}

// All M rows in blocks of at most R rows of near-equal size, as the float32 kernels split them.
template <int NV>
inline void all_rows(int64_t M, int64_t P, float alpha, const float* scale, const uint16_t* A, int64_t lda,
                     const uint32_t* B, int64_t ldb, float* C, int64_t ldc, __mmask16 last) {
  constexpr int R = NV == kVectors ? kRows : kRowsNarrow;
  const int64_t blocks = (M + R - 1) / R;
  for (int64_t b = 0, m = 0; b < blocks; ++b) {
    const int64_t rows = (M - m + (blocks - b) - 1) / (blocks - b);
    block_of<NV, R>(rows, P, alpha, scale ? scale + m : nullptr, A + m * lda, lda, B, ldb, C + m * ldc, ldc, last);
    m += rows;
  }
}

void product_bf16(int64_t M, int64_t N, int64_t P, float alpha, const float* scale, const uint16_t* A, int64_t lda,
                  const uint32_t* B, int64_t ldb, float* C, int64_t ldc) {
  constexpr int64_t wide = int64_t(kVectors) * 16;
  int64_t n = 0;
  for (; n + wide <= N; n += wide) all_rows<kVectors>(M, P, alpha, scale, A, lda, B + n, ldb, C + n, ldc, 0xffff);
  for (; n + 16 <= N; n += 16) all_rows<1>(M, P, alpha, scale, A, lda, B + n, ldb, C + n, ldc, 0xffff);
  if (n < N) all_rows<1>(M, P, alpha, scale, A, lda, B + n, ldb, C + n, ldc, __mmask16((1u << (N - n)) - 1));
}

void interleave_bf16(const uint16_t* r0, const uint16_t* r1, int64_t n, uint32_t* out) {
  int64_t e = 0;
  for (; e + 16 <= n; e += 16) {
    const __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + e)));
    const __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + e)));
    _mm512_storeu_si512(out + e, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
  }
  for (; e < n; ++e) out[e] = uint32_t(r0[e]) | uint32_t(r1[e]) << 16;
}

}  // namespace avx512_bf16
#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif

namespace {

// Without AVX-512 BF16 there are no bf16 products: attention widens bf16 operands to float32 instead.
const Kernels kPortable{"portable",
                        portable::product,
                        portable::dots,
                        portable::row_max,
                        portable::exp_sum,
                        portable::widen_bf16,
                        portable::narrow_bf16,
                        nullptr,
                        nullptr};
#if defined(__x86_64__)
const Kernels kAvx2{"avx2",           avx2::product,     avx2::dots, avx2::row_max, avx2::exp_sum,
                    avx2::widen_bf16, avx2::narrow_bf16, nullptr,    nullptr};
const Kernels kAvx512{"avx512",           avx512::product,     avx512::dots, avx512::row_max, avx512::exp_sum,
                      avx512::widen_bf16, avx512::narrow_bf16, nullptr,      nullptr};
// The AVX-512 set with the bf16 products, for CPUs with AVX-512 BF16 (Cooper Lake, Sapphire Rapids, Zen 4 on).
const Kernels kAvx512Bf16{"avx512_bf16",       avx512::product,           avx512::dots,
                          avx512::row_max,     avx512::exp_sum,           avx512::widen_bf16,
                          avx512::narrow_bf16, avx512_bf16::product_bf16, avx512_bf16::interleave_bf16};
#endif

}  // namespace

std::span<const Kernels* const> runnable_kernels() {
#if defined(__x86_64__)
  static const bool bf16 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  return kernel_sets_for_this_cpu(bf16 ? &kAvx512Bf16 : &kAvx512, &kAvx2, kPortable);
#else
  return kernel_sets_for_this_cpu<Kernels>(nullptr, nullptr, kPortable);
#endif
}

const Kernels& best_kernels() { return *runnable_kernels().front(); }

}  // namespace mpspack::shim::attn
