// attention_kernels.hpp: the kernel text of attention_kernels.inc compiled three times, each under its instruction
// set's target options with its vector type, and the pick among them by what the CPU reports (no ifunc resolver,
// so the AddressSanitizer build runs them too).
#include "attention_kernels.hpp"
#include "kernel_sets.hpp"
#include "simd_f32.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
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

#endif

namespace {

const Kernels kPortable{"portable",        portable::product,    portable::dots,       portable::row_max,
                        portable::exp_sum, portable::widen_bf16, portable::narrow_bf16};
#if defined(__x86_64__)
const Kernels kAvx2{"avx2",        avx2::product,    avx2::dots,       avx2::row_max,
                    avx2::exp_sum, avx2::widen_bf16, avx2::narrow_bf16};
const Kernels kAvx512{"avx512",        avx512::product,    avx512::dots,       avx512::row_max,
                      avx512::exp_sum, avx512::widen_bf16, avx512::narrow_bf16};
#endif

}  // namespace

std::span<const Kernels* const> runnable_kernels() {
#if defined(__x86_64__)
  return kernel_sets_for_this_cpu(&kAvx512, &kAvx2, kPortable);
#else
  return kernel_sets_for_this_cpu<Kernels>(nullptr, nullptr, kPortable);
#endif
}

const Kernels& best_kernels() { return *runnable_kernels().front(); }

}  // namespace mpspack::shim::attn
