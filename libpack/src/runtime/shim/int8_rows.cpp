// int8_rows.hpp: the kernel text of int8_rows.inc compiled three times, each under its instruction set's target
// options with its vector type, and the pick among them by what the CPU reports (no ifunc resolver, so the
// AddressSanitizer build runs them too).
#include "int8_rows.hpp"
#include "kernel_sets.hpp"
#include "simd_f32.hpp"

#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mpspack::shim::int8mm {

// Every CPU: one lane; 16 scalar sums fit the 16 registers of x86-64's baseline.
namespace portable {
struct V : simd::Scalar {
  static constexpr int kShortRows = 4, kTallRows = 6;
  static F widen(const int8_t* p) { return float(*p); }
};
#include "int8_rows.inc"
}  // namespace portable

#if defined(__x86_64__)

#pragma GCC push_options
#pragma GCC target("avx2,fma")
// 16 ymm registers: 2 x 4 sums + 4 weight vectors + 1 row, or 6 x 2 sums + 2 weight vectors + 1 row.
namespace avx2 {
struct V : simd::Avx2 {
  static constexpr int kShortRows = 2, kTallRows = 6;
  static F widen(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
};
#include "int8_rows.inc"
}  // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
// GCC 12's AVX-512 intrinsics fill their unused merge operand with a self-initialised _mm512_undefined_*(), which
// its own -Wuninitialized then reports at every use (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// 32 zmm registers: 4 x 4 sums + 4 weight vectors + 1 row, or 8 x 2 sums + 2 weight vectors + 1 row (taller
// blocks run out of general registers for the rows' addresses).
namespace avx512 {
struct V : simd::Avx512 {
  static constexpr int kShortRows = 4, kTallRows = 8;
  static F widen(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
};
#include "int8_rows.inc"
}  // namespace avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif

namespace {

const Kernels kPortable{"portable", portable::rows, portable::widen};
#if defined(__x86_64__)
const Kernels kAvx2{"avx2", avx2::rows, avx2::widen};
const Kernels kAvx512{"avx512", avx512::rows, avx512::widen};
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

}  // namespace mpspack::shim::int8mm
