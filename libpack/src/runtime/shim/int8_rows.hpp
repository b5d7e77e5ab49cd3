// The inner kernels of the int8 weight-only product (int8_matmul.cpp), one set per vector instruction set: the
// int8 weights are widened to float in registers and multiplied there, so a product reads each weight byte once
// from memory and never writes a float copy of the matrix. Each set is the same source (int8_rows.inc) compiled
// for AVX-512, for AVX2 + FMA and for the portable baseline; the set this CPU runs is picked at the first call.
#pragma once

#include <cstdint>
#include <span>

namespace mpspack::shim::int8mm {

struct Kernels {
  const char* name;  // "avx512", "avx2", "portable"
  // C[m, n] = (sum over k < K of A[m, k] * B[n, k]) * s[n], for m < M and n in [n0, n1). A: M rows of K floats,
  // lda apart; B: rows of K int8 values, ldb bytes apart; s: N scales; C: rows ldc apart. No alignment needed.
  void (*rows)(const float* A, int64_t lda, const int8_t* B, int64_t ldb, const float* s, float* C, int64_t ldc,
               int64_t M, int64_t n0, int64_t n1, int64_t K);
  // dst[j, k] = B[j, k] * s[j] as float, for j < n, k < K: a dequantized panel, dst rows ldd apart.
  void (*widen)(const int8_t* B, int64_t ldb, const float* s, int64_t n, int64_t K, float* dst, int64_t ldd);
};

// The fastest set this CPU runs.
const Kernels& best_kernels();

// Every set this CPU runs, fastest first (the tests compare each with a reference).
std::span<const Kernels* const> runnable_kernels();

}  // namespace mpspack::shim::int8mm
