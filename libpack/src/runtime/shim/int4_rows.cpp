// int4_rows.hpp: the kernel text of int4_rows.inc compiled three times, each under its instruction set's target
// options with its vector type, and the pick among them by what the CPU reports (no ifunc resolver, so the
// AddressSanitizer build runs them too), as int8_rows.cpp does.
#include "int4_rows.hpp"
#include "kernel_sets.hpp"
#include "simd_f32.hpp"

#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mpspack::shim::int4mm {

// Every CPU: one lane, a unit of one byte. Tiles of up to 8 rows as AVX-512's, so that the tests run that shape of
// the kernel text on CPUs without AVX-512 too (the set is the fallback, not a fast path).
namespace portable {
struct V : simd::Scalar {
  using I = int32_t;
  static constexpr int kRows = 4, kWide = 1, kTallRows = 8;
  static I widen(const uint8_t* p) { return *p; }
  static I widen_half(const uint8_t*) { return 0; }  // never called: a unit of one byte is never half
  static F lo(I q) { return float(q & 15); }
  static F hi(I q) { return float(q >> 4); }
};
#include "int4_rows.inc"
}  // namespace portable

#if defined(__x86_64__)

#pragma GCC push_options
#pragma GCC target("avx2,fma")
// 16 ymm registers: one or two rows beside two units (4 sums a row, the units' scales and zeros reloaded as
// memory operands where they do not fit), or 4 rows beside one unit (8 sums, 4 scales and zeros, 2 weights, 1 row).
// No taller tiles: 8 rows' 16 sums alone fill the register file.
namespace avx2 {
struct V : simd::Avx2 {
  using I = __m256i;
  static constexpr int kRows = 4, kWide = 1, kTallRows = 4;
  static I widen(const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static I widen_half(const uint8_t* p) {
    int32_t four;
    std::memcpy(&four, p, 4);
    return _mm256_cvtepu8_epi32(_mm_cvtsi32_si128(four));
  }
  static F lo(I q) { return _mm256_cvtepi32_ps(_mm256_and_si256(q, _mm256_set1_epi32(15))); }
  static F hi(I q) { return _mm256_cvtepi32_ps(_mm256_srli_epi32(q, 4)); }
};
#include "int4_rows.inc"
}  // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
// GCC 12's AVX-512 intrinsics fill their unused merge operand with a self-initialised _mm512_undefined_*(), which
// its own -Wuninitialized then reports at every use (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// 32 zmm registers: 4 rows beside two units (16 sums, 8 scales and zeros, 4 weights, 1 row), or 8 rows beside one
// unit (16 sums, 4 scales and zeros, 2 weights, 1 row, the permute's table).
namespace avx512 {
struct V : simd::Avx512 {
  using I = __m512i;
  static constexpr int kRows = 4, kWide = 2, kTallRows = 8;
  static I widen(const uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I widen_half(const uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  // A lane's 16 values as floats by a permute, which reads only the index's low 4 bits: no mask, no conversion.
  static F values() { return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
  static F lo(I q) { return _mm512_permutexvar_ps(q, values()); }
  static F hi(I q) { return _mm512_permutexvar_ps(_mm512_srli_epi32(q, 4), values()); }
};
#include "int4_rows.inc"
}  // namespace avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif

namespace {

const Kernels kPortable{"portable", portable::V::kLanes, portable::rows, portable::panel};
#if defined(__x86_64__)
const Kernels kAvx2{"avx2", avx2::V::kLanes, avx2::rows, avx2::panel};
const Kernels kAvx512{"avx512", avx512::V::kLanes, avx512::rows, avx512::panel};
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

}  // namespace mpspack::shim::int4mm
