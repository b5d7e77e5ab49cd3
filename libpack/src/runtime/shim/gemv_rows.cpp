// gemv_rows.hpp: the kernel text of gemv_rows.inc compiled three times, each under its instruction set's target
// options with its vector type, and the pick among them by what the CPU reports (as int8_rows.cpp does).
#include "gemv_rows.hpp"
#include "kernel_sets.hpp"

#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mpspack::shim::gemv_rows {

namespace portable {
struct V {
  using F = float;
  static constexpr int kLanes = 1;
  static F zero() { return 0.0f; }
  static F set1(float x) { return x; }
  static F load(const float* p) { return *p; }
  static void store(float* p, F v) { *p = v; }
  static F fma(F a, F b, F c) { return a * b + c; }
  static F add(F a, F b) { return a + b; }
  static float sum(F v) { return v; }
};
#include "gemv_rows.inc"
}  // namespace portable

#if defined(__x86_64__)

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
struct V {
  using F = __m256;
  static constexpr int kLanes = 8;
  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float x) { return _mm256_set1_ps(x); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static float sum(F v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
  }
};
#include "gemv_rows.inc"
}  // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
// GCC 12's AVX-512 intrinsics fill their unused merge operand with a self-initialised _mm512_undefined_*(), which
// its own -Wuninitialized then reports at every use (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace avx512 {
struct V {
  using F = __m512;
  static constexpr int kLanes = 16;
  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float x) { return _mm512_set1_ps(x); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static float sum(F v) { return _mm512_reduce_add_ps(v); }
};
#include "gemv_rows.inc"
}  // namespace avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif

namespace {

const Kernels kPortable{"portable", portable::rows, portable::columns};
#if defined(__x86_64__)
const Kernels kAvx2{"avx2", avx2::rows, avx2::columns};
const Kernels kAvx512{"avx512", avx512::rows, avx512::columns};
#endif

std::vector<const Kernels*> detect() {
#if defined(__x86_64__)
  return kernel_sets_for_this_cpu(&kAvx512, &kAvx2, kPortable);
#else
  return kernel_sets_for_this_cpu<Kernels>(nullptr, nullptr, kPortable);
#endif
}

}  // namespace

std::span<const Kernels* const> runnable_kernels() {
  static const std::vector<const Kernels*> sets = detect();
  return sets;
}

const Kernels& best_kernels() { return *runnable_kernels().front(); }

}  // namespace mpspack::shim::gemv_rows
