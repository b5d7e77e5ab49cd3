// gemv_rows.hpp: the kernel text of gemv_rows.inc compiled three times, each under its instruction set's target
// options with its vector type, and the pick among them by what the CPU reports (as int8_rows.cpp does).
#include "gemv_rows.hpp"
#include "kernel_sets.hpp"
#include "simd_f32.hpp"

#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mpspack::shim::gemv_rows {

namespace portable {
struct V : simd::Scalar {};
#include "gemv_rows.inc"
}  // namespace portable

#if defined(__x86_64__)

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
struct V : simd::Avx2 {};
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
struct V : simd::Avx512 {};
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

}  // namespace

std::span<const Kernels* const> runnable_kernels() {
#if defined(__x86_64__)
  return kernel_sets_for_this_cpu(&kAvx512, &kAvx2, kPortable);
#else
  return kernel_sets_for_this_cpu<Kernels>(nullptr, nullptr, kPortable);
#endif
}

const Kernels& best_kernels() { return *runnable_kernels().front(); }

}  // namespace mpspack::shim::gemv_rows
