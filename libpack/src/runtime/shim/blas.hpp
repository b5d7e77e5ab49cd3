// Every OpenBLAS call of the shim: OpenBLAS runs single-threaded, and products big enough to pay for waking
// threads are split into blocks over the threads of parallel.hpp (the model's OpenMP team).
//
// The pthreads OpenBLAS linked into mpspack would start a thread per core from its constructor, in every process,
// and run its products on them. Beside a model's OpenMP team, whose threads spin for a while after each loop,
// its threads wait for cores: on the 16-core device machine a tiny CNN ran in 44-46 ms with them and in
// 1.06-1.15 ms with OPENBLAS_NUM_THREADS=1, and every command (inspect, --version) paid ~0.7 ms to start them
// (docs/PERFORMANCE.md, "OpenBLAS's threads"). So a constructor that runs before OpenBLAS's sets
// OPENBLAS_NUM_THREADS=1, unless the user chose a count for OpenBLAS (OPENBLAS_NUM_THREADS or GOTO_NUM_THREADS
// set), which is then left to OpenBLAS as it is, unsplit.
#pragma once

#include <cstdint>

namespace mpspack::shim {

// GEMMs of at least this many multiply-adds are split over the threads; smaller ones run on the calling thread.
inline constexpr double kSplitGemmMinMacs = double(1 << 24);

// C[M,N] = alpha * op(A)[M,K] @ op(B)[K,N] + beta * C, row-major, as cblas_sgemm/cblas_dgemm (T float or
// double); ta/tb: op transposes. Sizes and leading dimensions must fit in an int.
template <class T>
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
          int64_t ldb, T beta, T* C, int64_t ldc);

// y = alpha * op(A)[rows or cols] @ x + beta * y, row-major A [rows, cols], as cblas_sgemv/cblas_dgemv.
template <class T>
void gemv(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx,
          T beta, T* y, int64_t incy);

}  // namespace mpspack::shim
