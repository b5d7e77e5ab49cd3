// The inner kernels of the int4 weight-only product (int4_matmul.cpp), one set per vector instruction set, as for
// the int8 product (int8_rows.hpp): the 4-bit weights are widened to float in registers, dequantized there and
// multiplied, so a product reads each weight byte once from memory and never writes a float copy of the matrix.
//
// Both kernels work on one block of torch's packed weights (_convert_weight_to_int4pack_for_cpu): `nb` output
// columns (a multiple of 16), stored as K rows of bb = nb / 2 bytes, two 4-bit values q a byte, where byte j of a
// row holds column `split ? j : 2j` in its low nibble and column `split ? j + bb : 2j + 1` in its high nibble. The
// weight is (q - 8) * scale + zero, the scale and zero of its column and of its group of `group` rows.
//
// The scales and zeros come as a table built per block by int4_matmul.cpp: per group, the scales of the columns the
// low nibbles hold, byte after byte, then those of the high nibbles', then the offsets zero - 8 * scale (float) in
// the same order; each of the four runs padded to whole units of `lanes` bytes (the last unit may hold only
// lanes / 2) with 0. In a split block that is the columns' own order. A weight is then q * scale + offset, one
// fma, as torch's AVX2 kernel computes it.
#pragma once

#include <cstdint>
#include <span>

namespace mpspack::shim::int4mm {

struct Kernels {
  const char* name;  // "avx512", "avx2", "portable"
  int lanes;         // bytes of a row one unit widens (floats in a vector)
  // C[m, c] = sum over k < K of A[m, k] * weight(k, c), for m < M and the block's nb = 2 * bb columns c; A: M rows
  // of K floats, lda apart; B: the block's first row; T: its table (group after group); C: rows ldc apart, the
  // block's column 0 first. K a multiple of `group`. No alignment needed.
  void (*rows)(const float* A, int64_t lda, int64_t M, const uint8_t* B, int64_t bb, bool split, const float* T,
               int64_t group, int64_t K, float* C, int64_t ldc);
  // P[k - k0, c] = weight(k, c) as float for k in [k0, k0 + kc) and the block's columns c: a dequantized panel, rows
  // ldp apart, k0 and kc multiples of `group`.
  void (*panel)(const uint8_t* B, int64_t bb, bool split, const float* T, int64_t group, int64_t k0, int64_t kc,
                float* P, int64_t ldp);
};

// The fastest set this CPU runs.
const Kernels& best_kernels();

// Every set this CPU runs, fastest first (the tests compare each with a reference).
std::span<const Kernels* const> runnable_kernels();

// Floats of one group's table for a block of bb bytes a row.
inline int64_t table_group_floats(const Kernels& k, int64_t bb) { return (bb + k.lanes - 1) / k.lanes * 4 * k.lanes; }

}  // namespace mpspack::shim::int4mm
