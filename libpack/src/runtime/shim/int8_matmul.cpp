// aten::_weight_int8pack_mm: out[m, n] = (sum over k of self[m, k] * mat2[n, k]) * scales[n], the weight-only
// int8 linear of quantized LLMs. self [M, K] float32, float16 or bfloat16; mat2 [N, K] int8; scales [N] of
// self's dtype; out [M, N] contiguous, self's dtype. Products are summed in float, as torch's CPU kernel does: on
// a few rows (a decode step) by register kernels that widen the int8 weights as they read them (int8_rows.hpp),
// on more through dequantized panels and OpenBLAS; either way split over the shim's threads (parallel.hpp).
#include "aoti_shim.h"
#include "blas.hpp"
#include "int8_rows.hpp"
#include "parallel.hpp"
#include "tensor.hpp"
#include "runtime/tuning/tuning.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

using namespace mpspack::shim;

namespace {

void check_int8pack(const Tensor& a, const Tensor& b, const Tensor& scales) {
  for (const Tensor* t : {&a, &b, &scales}) require_cpu(*t, "_weight_int8pack_mm");
  const auto dt = static_cast<DType>(a.dtype);
  if (dt != DType::f32 && dt != DType::f16 && dt != DType::bf16)
    fail(std::string("_weight_int8pack_mm: self dtype ") + dtype_name(a.dtype) +
         " is not supported (float32, float16 or bfloat16)");
  if (b.dtype != static_cast<int32_t>(DType::i8))
    fail(std::string("_weight_int8pack_mm: mat2 must be int8, got ") + dtype_name(b.dtype));
  if (scales.dtype != a.dtype) fail("_weight_int8pack_mm: scales must have self's dtype");
  if (a.dim() != 2 || b.dim() != 2 || scales.dim() != 1)
    fail("_weight_int8pack_mm: expects self [M, K], mat2 [N, K], scales [N]");
  if (a.sizes[1] != b.sizes[1] || scales.sizes[0] != b.sizes[0])
    fail("_weight_int8pack_mm: self [" + std::to_string(a.sizes[0]) + ", " + std::to_string(a.sizes[1]) + "], mat2 [" +
         std::to_string(b.sizes[0]) + ", " + std::to_string(b.sizes[1]) + "] and scales [" +
         std::to_string(scales.sizes[0]) + "] do not match");
}

// MPSPACK_CPU_INT8MM (Tuning::cpu_int8mm), for measurements: "direct" keeps every product on the register
// kernels, "panel" sends every one through dequantized panels and OpenBLAS; empty by default (the rule of
// use_panels).
std::string_view int8mm_mode() { return mpspack::tuning().cpu_int8mm; }

// From this many rows of activations on, a product widens blocks of the weights to float once (scales folded in)
// and multiplies them on OpenBLAS's SGEMM: the register kernels widen every weight again for each block of rows
// (6 rows with AVX2), which from about 80 rows costs more than one pass of widening plus SGEMM's better use of
// the FMA units (where the two cross is measured by bench/int8_matmul_cpu.cpp; docs/BACKENDS.md, "CPU int8
// weight-only products").
constexpr int64_t kPanelMinRows = 80;
// A panel: this many weight rows by at most this many of K (1 MiB of float). Fewer rows make OpenBLAS pack the
// activations again for more calls; a deeper panel gains nothing measurable.
constexpr int64_t kPanelCols = 256, kPanelDepth = 1024;
// Products of fewer multiply-adds run on the calling thread: waking the team costs more than it saves.
constexpr double kSplitMinMacs = double(1 << 20);

bool use_panels(int64_t M) {
  const std::string_view mode = int8mm_mode();
  return mode == "panel" || (mode != "direct" && M >= kPanelMinRows);
}

// C[M, N] = (A[M, K] @ B[N, K]^T) * S[N]: A and C contiguous float, B rows ldb bytes apart.
struct Product {
  const float* A;
  const int8_t* B;
  int64_t ldb;
  const float* S;
  float* C;
  int64_t M, N, K;
};

// Part t of [0, extent) in blocks of whole groups of 16; the last part takes the rest, and a part may be empty.
std::pair<int64_t, int64_t> part_of(int64_t extent, unsigned t, unsigned parts) {
  const int64_t per = (extent / parts + 15) / 16 * 16;
  const int64_t begin = std::min(extent, int64_t(t) * per);
  return {begin, t + 1 == parts ? extent : std::min(extent, begin + per)};
}

// Columns [n0, n1) of C through panels of dequantized weights: each panel is widened once and multiplied by every
// row of A on OpenBLAS (this thread's, single-threaded), a block of K at a time, summing into C.
void panel_columns(const Product& p, int64_t n0, int64_t n1) {
  const int8mm::Kernels& kernels = int8mm::best_kernels();
  const int64_t depth = std::min(p.K, kPanelDepth);
  std::unique_ptr<float[]> panel(new float[static_cast<std::size_t>(kPanelCols * depth)]);
  for (int64_t n = n0; n < n1; n += kPanelCols) {
    const int64_t cols = std::min(kPanelCols, n1 - n);
    for (int64_t k = 0; k < p.K; k += depth) {
      const int64_t kc = std::min(depth, p.K - k);
      kernels.widen(p.B + n * p.ldb + k, p.ldb, p.S + n, cols, kc, panel.get(), kc);
      gemm_here<float>(false, true, p.M, cols, kc, 1.0f, p.A + k, p.K, panel.get(), kc, k == 0 ? 0.0f : 1.0f, p.C + n,
                       p.N);
    }
  }
}

void columns(const Product& p, bool panels, int64_t n0, int64_t n1) {
  if (panels) panel_columns(p, n0, n1);
  else int8mm::best_kernels().rows(p.A, p.K, p.B, p.ldb, p.S, p.C, p.N, p.M, n0, n1, p.K);
}

// The product over the threads: blocks of N (each thread streams its own weight rows), or, when A has more rows
// than B, blocks of M (each thread reads every weight for its own rows).
void multiply(const Product& p) {
  if (p.K == 0) {
    std::fill(p.C, p.C + p.M * p.N, 0.0f);
    return;
  }
  const bool panels = use_panels(p.M);
  if (double(p.M) * double(p.N) * double(p.K) < kSplitMinMacs) return columns(p, panels, 0, p.N);
  const bool by_rows = p.M > p.N;
  run_parts([&](unsigned t, unsigned parts) {
    const auto [begin, end] = part_of(by_rows ? p.M : p.N, t, parts);
    if (begin >= end) return;
    if (!by_rows) return columns(p, panels, begin, end);
    Product rows = p;
    rows.A += begin * p.K;
    rows.C += begin * p.N;
    rows.M = end - begin;
    columns(rows, panels, 0, p.N);
  });
}

Tensor* int8pack_mm(const Tensor& a, const Tensor& b, const Tensor& scales) {
  check_int8pack(a, b, scales);
  const int64_t M = a.sizes[0], K = a.sizes[1], N = b.sizes[0];
  const int64_t sizes[2] = {M, N};
  const auto f32 = static_cast<int32_t>(DType::f32);
  // float32 activations and scales are used in place; float16 and bfloat16 ones are widened once, the product
  // runs in float, and its result is rounded to their dtype once.
  TensorPtr af = contiguous_as(a, f32), sf = contiguous_as(scales, f32);
  // The kernels read weight rows with K contiguous (torch's layout for mat2); any other layout is copied so.
  TensorPtr bc = b.sizes[1] > 1 && b.strides[1] != 1 ? contiguous_as(b, b.dtype) : nullptr;
  const Tensor& w = bc ? *bc : b;
  TensorPtr out(new_contiguous(sizes, f32));
  if (M > 0 && N > 0)
    multiply({reinterpret_cast<const float*>(af->data()), reinterpret_cast<const int8_t*>(w.data()), w.strides[0],
              reinterpret_cast<const float*>(sf->data()), reinterpret_cast<float*>(out->data()), M, N, K});
  if (a.dtype != f32) out = contiguous_as(*out, a.dtype);
  return out.release();
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                             AtenTensorHandle scales, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("ret0 is null");
    *ret0 = int8pack_mm(deref(self, "self"), deref(mat2, "mat2"), deref(scales, "scales"));
  });
}
