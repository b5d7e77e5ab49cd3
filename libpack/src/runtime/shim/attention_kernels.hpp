// The product kernel of the CPU attention (attention.cpp), one per vector instruction set: a block of 32-128
// query rows against 64-wide heads is a product too small for a BLAS call to pay its packing and dispatch
// (bench/attention_cpu.cpp), so attention multiplies in registers itself. The same source (attention_kernels.inc)
// is compiled for AVX-512, for AVX2 + FMA and for the portable baseline; the set this CPU runs is picked at the
// first call, as int8_rows.hpp does. CPUs with AVX-512 BF16 get the AVX-512 set with bf16 pair products added.
#pragma once

#include <cstdint>
#include <span>

namespace mpspack::shim::attn {

struct Kernels {
  const char* name;  // "avx512", "avx2", "portable"
  // C[m, n] = scale[m] * sum over k < K of A[m, k] * B[k, n], for m < M, n < N; scale null: alpha for every row.
  // A rows lda apart, B rows ldb apart, C rows ldc apart (floats); no alignment needed. C is written, not added to.
  void (*product)(int64_t M, int64_t N, int64_t K, float alpha, const float* scale, const float* A, int64_t lda,
                  const float* B, int64_t ldb, float* C, int64_t ldc);
  // C[m, n] = alpha * sum over k < K of A[m, k] * B[n, k], for m < M, n < N: a few query rows against keys
  // where they are, for blocks too short to pay for transposing the keys.
  void (*dots)(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B, int64_t ldb,
               float* C, int64_t ldc);
  // The largest of s[0, n) (-inf for n == 0; NaN-free rows assumed, as after masking).
  float (*row_max)(const float* s, int64_t n);
  // s[j] <- exp(s[j] - shift) for j < n, shift finite and s[j] <= shift; returns their sum. Within 2 ulp of
  // std::exp down to -87.3, 0 below it and for -inf.
  float (*exp_sum)(float* s, int64_t n, float shift);
  // bfloat16 operands widened to float and results rounded back (to nearest even), n values: the conversions
  // run at the set's width, as the products do, rather than at the baseline's.
  void (*widen_bf16)(const uint16_t* s, int64_t n, float* d);
  void (*narrow_bf16)(const float* s, int64_t n, uint16_t* d);
  // Products of bfloat16 pairs with float32 sums, where the CPU has AVX-512 BF16 (null elsewhere):
  // C[m, n] = scale[m] (or alpha) * sum over p < P of A[m, 2p] * B[p][n].lo + A[m, 2p + 1] * B[p][n].hi, where A's
  // rows are bf16 values (lda apart, 2P read from each) and each B[p][n] a 32-bit word holding two (ldb words apart).
  void (*product_bf16)(int64_t M, int64_t N, int64_t P, float alpha, const float* scale, const uint16_t* A, int64_t lda,
                       const uint32_t* B, int64_t ldb, float* C, int64_t ldc);
  // out[e] = r0[e] | r1[e] << 16 for e < n: two bf16 rows interleaved into the pairs product_bf16's B holds.
  void (*interleave_bf16)(const uint16_t* r0, const uint16_t* r1, int64_t n, uint32_t* out);
};

// The fastest set this CPU runs.
const Kernels& best_kernels();

// Every set this CPU runs, fastest first (the tests compare each with a reference).
std::span<const Kernels* const> runnable_kernels();

}  // namespace mpspack::shim::attn
