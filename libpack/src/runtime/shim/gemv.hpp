// A threaded matrix-vector product for large float32 matrices stored by rows, the shape of a batch-1
// Linear layer: y[i] = alpha * dot(A[i, :], x) + beta * y[i]. Memory-bound; OpenBLAS 0.3.21's GEMV stops
// scaling after about four threads on the device machine (docs/PERFORMANCE.md), this one gives every
// thread a contiguous block of rows, on the threads of parallel.hpp.
#pragma once

#include <cstdint>

namespace mpspack::shim {

// Matrices smaller than this (elements) stay with BLAS: there, waking threads costs more than it saves.
inline constexpr int64_t kThreadedGemvMinElements = int64_t(1) << 22;  // 16 MiB of float32

// Computes the product when the shape suits this kernel (float32, x contiguous, large enough, not turned
// off with MPSPACK_CPU_GEMV=blas) and returns true; returns false, having done nothing, otherwise.
bool threaded_gemv_f32(int64_t rows, int64_t cols, float alpha, const float* a, int64_t lda, const float* x,
                       int64_t incx, float beta, float* y, int64_t incy);

}  // namespace mpspack::shim
