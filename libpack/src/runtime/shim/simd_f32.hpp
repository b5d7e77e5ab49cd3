// The float vector operations the shim's run-time-picked kernels share (gemv_rows, int8_rows, int4_rows,
// attention_kernels): one struct per instruction set, each function compiled for its set by a target attribute, so
// that a kernel file's vector type derives from one (struct V : simd::Avx2 {...}) and adds only what is its own.
// The kernels that use them are compiled under the same target options (#pragma GCC target), so these inline there.
// load_bf16 / store_bf16: kLanes bfloat16 values widened to floats, and floats rounded to bfloat16 as
// mpspack::float_to_bf16 rounds (to nearest even, NaN to 0x7fc0), without AVX-512 BF16.
#pragma once

#include <mpspack/half.hpp>

#include <bit>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mpspack::shim::simd {

// Every CPU: one lane.
struct Scalar {
  using F = float;
  static constexpr int kLanes = 1;
  static F zero() { return 0.0f; }
  static F set1(float x) { return x; }
  static F load(const float* p) { return *p; }
  static void store(float* p, F v) { *p = v; }
  static F fma(F a, F b, F c) { return a * b + c; }
  static F mul(F a, F b) { return a * b; }
  static F add(F a, F b) { return a + b; }
  static F sub(F a, F b) { return a - b; }
  static F max(F a, F b) { return a > b ? a : b; }
  static F min(F a, F b) { return a < b ? a : b; }
  static float sum(F v) { return v; }
  static float reduce_max(F v) { return v; }
  static F load_bf16(const uint16_t* p) { return std::bit_cast<float>(uint32_t(*p) << 16); }
  static void store_bf16(uint16_t* p, F v) { *p = mpspack::float_to_bf16(v); }
};

#if defined(__x86_64__)

#define MPK_AVX2 [[gnu::target("avx2,fma"), gnu::always_inline]] static inline
struct Avx2 {
  using F = __m256;
  static constexpr int kLanes = 8;
  MPK_AVX2 F zero() { return _mm256_setzero_ps(); }
  MPK_AVX2 F set1(float x) { return _mm256_set1_ps(x); }
  MPK_AVX2 F load(const float* p) { return _mm256_loadu_ps(p); }
  MPK_AVX2 void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  MPK_AVX2 F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  MPK_AVX2 F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  MPK_AVX2 F add(F a, F b) { return _mm256_add_ps(a, b); }
  MPK_AVX2 F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  MPK_AVX2 F max(F a, F b) { return _mm256_max_ps(a, b); }
  MPK_AVX2 F min(F a, F b) { return _mm256_min_ps(a, b); }
  MPK_AVX2 float sum(F v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
  }
  MPK_AVX2 float reduce_max(F v) {
    __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    x = _mm_max_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
  }
  MPK_AVX2 F load_bf16(const uint16_t* p) {
    const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
  }
  MPK_AVX2 void store_bf16(uint16_t* p, F v) {
    const __m256i u = _mm256_castps_si256(v);
    const __m256i bias =
        _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7fff));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
    r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    // Pack the eight 32-bit results (each < 2^16) to 16 bits: packus works within 128-bit lanes, so the two lanes'
    // halves are gathered after.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
};
#undef MPK_AVX2

// GCC 12's AVX-512 intrinsics fill their unused merge operand with a self-initialised _mm512_undefined_*(), which
// its own -Wuninitialized then reports at every use (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define MPK_AVX512 [[gnu::target("avx512f,avx2,fma"), gnu::always_inline]] static inline
struct Avx512 {
  using F = __m512;
  static constexpr int kLanes = 16;
  MPK_AVX512 F zero() { return _mm512_setzero_ps(); }
  MPK_AVX512 F set1(float x) { return _mm512_set1_ps(x); }
  MPK_AVX512 F load(const float* p) { return _mm512_loadu_ps(p); }
  MPK_AVX512 void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  MPK_AVX512 F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  MPK_AVX512 F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  MPK_AVX512 F add(F a, F b) { return _mm512_add_ps(a, b); }
  MPK_AVX512 F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  MPK_AVX512 F max(F a, F b) { return _mm512_max_ps(a, b); }
  MPK_AVX512 F min(F a, F b) { return _mm512_min_ps(a, b); }
  MPK_AVX512 float sum(F v) { return _mm512_reduce_add_ps(v); }
  MPK_AVX512 float reduce_max(F v) { return _mm512_reduce_max_ps(v); }
  MPK_AVX512 F load_bf16(const uint16_t* p) {
    const __m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
  }
  MPK_AVX512 void store_bf16(uint16_t* p, F v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i bias =
        _mm512_add_epi32(_mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7fff));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7fc0));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(r));
  }
};
#undef MPK_AVX512
#pragma GCC diagnostic pop

#endif

}  // namespace mpspack::shim::simd
