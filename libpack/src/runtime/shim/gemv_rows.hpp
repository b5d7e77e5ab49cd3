// mpspack's own float32 matrix-vector kernels, for the parts of a product split over threads and for products too
// small to split (blas.cpp's gemv(), unless MPSPACK_CPU_GEMV=openblas or blas): no allocation and no lock per call,
// where OpenBLAS's GEMV takes a buffer from its shared, locked table on every call. One set per vector instruction set,
// the same source (gemv_rows.inc) compiled for AVX-512, for AVX2 + FMA and for the portable baseline; the set this CPU
// runs is picked at the first call.
#pragma once

#include <cstdint>
#include <span>

namespace mpspack::shim::gemv_rows {

struct Kernels {
  const char* name;  // "avx512", "avx2", "portable"
  // y[r] = alpha * (A[r, :] . x) + beta * y[r] for r < rows: A row-major, rows lda apart; x, y contiguous. beta 0
  // does not read y.
  void (*rows)(int64_t rows, int64_t cols, float alpha, const float* a, int64_t lda, const float* x, float beta,
               float* y);
  // y[c] = alpha * (A[:, c] . x) + beta * y[c] for c < cols: the product with A transposed, A stored as above.
  void (*columns)(int64_t rows, int64_t cols, float alpha, const float* a, int64_t lda, const float* x, float beta,
                  float* y);
};

// The fastest set this CPU runs.
const Kernels& best_kernels();

// Every set this CPU runs, fastest first (the tests compare each with a reference).
std::span<const Kernels* const> runnable_kernels();

}  // namespace mpspack::shim::gemv_rows
