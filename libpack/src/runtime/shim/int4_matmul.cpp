// quantized::int4mm_packed_weight_cpu (aoti_torch_cpu__weight_int4pack_mm_cpu_tensor), the CPU int4 weight-only
// linear AOTInductor lowers aten._weight_int4pack_mm_for_cpu to: out[m, n] = sum over k of X[m, k] * W[n, k], W[n, k]
// = (q[n, k] - 8) * scale + zero, the scale and zero of column n and of k's group of qGroupSize (qScaleAndZeros
// [K / qGroupSize, N, 2], X's dtype). X [M, K] float32, float16 or bfloat16, contiguous; w [N, K / 2] uint8 as
// torch's _convert_weight_to_int4pack_for_cpu packs it; qGroupSize an int64 scalar tensor (32, 64, 128 or 256);
// out [M, N] contiguous, X's dtype. Products are summed in float, over k in order, each weight dequantized with one
// fma (q * scale + (zero - 8 * scale), as torch's AVX2 kernel computes it); the result is rounded to X's dtype
// once. On a few rows (a decode step) register kernels dequantize the weights as they read them (int4_rows.hpp), on
// more dequantized panels go to OpenBLAS; either way split over the shim's threads (parallel.hpp).
//
// The packed layout depends on the machine that packed the weights: torch packs in blocks of 64 columns where ATen
// runs its AVX-512 kernels and of 32 elsewhere, and pairs a full block's columns c and c + 32 (c + 16) in a byte on
// AVX-512 (AVX2) but c and c + 1 on CPUs with neither and in a last, partial block (int4_rows.hpp). The weights
// carry no mark of it, and torch reads them as the CPU it runs on would pack them; so does this shim, picking the
// CPU capability as ATen does: ATEN_CPU_CAPABILITY ("avx512", "avx2", "default") when set, else AVX-512 where the
// CPU has AVX-512 F, BW, DQ and VL (and FMA), AVX2 where it has AVX2 and FMA. A package is read right on a machine
// of the kind it was exported on, or with ATEN_CPU_CAPABILITY naming that kind.
#include "aoti_shim.h"
#include "blas.hpp"
#include "element.hpp"
#include "int4_rows.hpp"
#include "parallel.hpp"
#include "tensor.hpp"
#include "runtime/tuning/tuning.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using namespace mpspack::shim;

namespace {

constexpr const char* kOp = "_weight_int4pack_mm_cpu";

// How torch's packer laid out the weights: columns in blocks of block_n, a full block's bytes split in halves
// (column c beside c + block_n / 2) or, in partial blocks and without AVX2, pairs (c beside c + 1).
struct PackLayout {
  int64_t block_n;
  bool split;
};

PackLayout detected_layout() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool fma = __builtin_cpu_supports("fma");
  if (fma && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq"))
    return {64, true};
  if (fma && __builtin_cpu_supports("avx2")) return {32, true};
#endif
  return {32, false};
}

// Read at every call, as the conformance runner sets it per recording (the case's packer ran on another CPU).
PackLayout pack_layout() {
  if (const char* env = std::getenv("ATEN_CPU_CAPABILITY")) {
    const std::string_view v(env);
    if (v == "avx512") return {64, true};
    if (v == "avx2") return {32, true};
    if (v == "default") return {32, false};
  }
  static const PackLayout detected = detected_layout();
  return detected;
}

int64_t group_size_of(const Tensor& g) {
  require_cpu(g, "_weight_int4pack_mm_cpu_tensor");
  if (g.numel() != 1) fail("_weight_int4pack_mm_cpu_tensor: group size must be a scalar.");
  if (g.dtype != static_cast<int32_t>(DType::i64)) fail("_weight_int4pack_mm_cpu_tensor: group size must be int64.");
  int64_t v;
  std::memcpy(&v, g.data(), sizeof v);
  return v;
}

// torch's checks, in its order and words; then what torch leaves unchecked and would read past or misread (a dtype
// of qScaleAndZeros other than X's, fewer than K / qGroupSize groups) and, where there are rows, torch's kernel's
// refusal of a last block of columns that is not a multiple of 16.
void check_int4pack(const Tensor& a, const Tensor& b, int64_t group, const Tensor& sz, const PackLayout& layout) {
  for (const Tensor* t : {&a, &b, &sz}) require_cpu(*t, kOp);
  const std::string op(kOp);
  const auto dt = static_cast<DType>(a.dtype);
  if (dt != DType::f32 && dt != DType::f16 && dt != DType::bf16)
    fail(op + " : expect A to be either 32-bit or 16-bit float tensor.");
  if (!a.is_contiguous()) fail(op + " : expect A to be contiguous.");
  if (a.dim() != 2) fail(op + " : expect A to be 2D tensor.");
  if (b.dtype != static_cast<int32_t>(DType::u8)) fail(op + " : expect B to be uint8 tensor.");
  if (!b.is_contiguous()) fail(op + " : expect B to be contiguous.");
  const int64_t K = a.sizes[1];
  if (b.dim() != 2 || b.sizes[1] != K / 2)
    fail(op + " : expect B.size(1) to be K/2, got " +
         (b.dim() >= 2 ? std::to_string(b.sizes[1]) : "a " + std::to_string(b.dim()) + "-d tensor"));
  if (group != 32 && group != 64 && group != 128 && group != 256)
    fail(op + ": expect qGroupSize to be 32, 64, 128 or 256, got " + std::to_string(group));
  if (K % group != 0)
    fail(op + ": expect K to be divisible by qGroupSize, got K:" + std::to_string(K) +
         ", qGroupSize:" + std::to_string(group));
  const int64_t N = b.sizes[0];
  if (sz.dim() != 3 || sz.sizes[1] != N || sz.sizes[2] != 2)
    fail(op + ": expect qScaleAndZeros to be 3d tensor with sizes [:, " + std::to_string(N) + ", 2]");
  if (sz.dtype != a.dtype)
    fail(op + ": expected qScaleAndZeros of scalar type " + dtype_name(a.dtype) + " (A's) but found " +
         dtype_name(sz.dtype));
  if (sz.sizes[0] < K / group)
    fail(op + ": qScaleAndZeros holds " + std::to_string(sz.sizes[0]) + " groups, K / qGroupSize is " +
         std::to_string(K / group));
  if (a.sizes[0] > 0 && N % 16 != 0)
    fail(op + ": Unsupported n block size: " + std::to_string(N - (N - 1) / layout.block_n * layout.block_n));
}

struct Product {
  const float* A;  // [M, K] contiguous
  const uint8_t* B;
  const Tensor* sz;
  float* C;  // [M, N] contiguous
  int64_t M, N, K, group;
  PackLayout layout;
};

// One block's table of scales and offsets (zero - 8 * scale) as int4_rows.hpp lays it out, from qScaleAndZeros read
// through its strides. 8 * scale is exact, so the offset is rounded once, as torch's fma rounds it. A split block of
// contiguous pairs (the common case) is one loop over its columns per group, which the compiler vectorizes.
template <class S>
void fill_table(const Product& p, const int4mm::Kernels& kernels, int64_t n0, int64_t bb, bool split, float* t) {
  const int64_t run = (bb + kernels.lanes - 1) / kernels.lanes * kernels.lanes, groups = p.K / p.group;
  const auto* base = reinterpret_cast<const S*>(p.sz->data());
  const int64_t s0 = p.sz->strides[0], s1 = p.sz->strides[1], s2 = p.sz->strides[2];
  const bool pairs_in_order = split && run == bb && s1 == 2 && s2 == 1;
  if (!pairs_in_order) std::fill(t, t + groups * 4 * run, 0.0f);  // the padding of a partial unit stays 0
  for (int64_t g = 0; g < groups; ++g, t += 4 * run) {
    const S* e = base + g * s0 + n0 * s1;
    if constexpr (std::is_same_v<S, typed::BF16> && std::endian::native == std::endian::little) {
      // A pair of bfloat16 read as one 32-bit word (scale in its low half, zero in its high half): both widened by
      // masks and shifts, which the compiler vectorizes, where element-wise conversion does not vectorize.
      if (pairs_in_order) {
        for (int64_t c = 0; c < 2 * bb; ++c) {
          uint32_t pair;
          std::memcpy(&pair, e + 2 * c, sizeof pair);
          const float scale = std::bit_cast<float>(pair << 16), zero = std::bit_cast<float>(pair & 0xffff0000u);
          t[c] = scale;
          t[2 * run + c] = zero - 8.0f * scale;
        }
        continue;
      }
    }
    if (pairs_in_order) {
      for (int64_t c = 0; c < 2 * bb; ++c) {
        t[c] = float(typed::load(e + 2 * c));
        t[2 * run + c] = float(typed::load(e + 2 * c + 1)) - 8.0f * t[c];
      }
      continue;
    }
    for (int h = 0; h < 2; ++h)
      for (int64_t j = 0; j < bb; ++j) {
        const S* c = e + (split ? j + h * bb : 2 * j + h) * s1;
        const int64_t at = h * run + j;
        t[at] = float(typed::load(c));
        t[2 * run + at] = float(typed::load(c + s2)) - 8.0f * t[at];
      }
  }
}

// From this many rows of X on, blocks are dequantized to float panels once and multiplied on OpenBLAS's SGEMM; the
// register kernels dequantize every weight again for each tile of rows (4). Where the two cross is measured by
// bench/int4_matmul_cpu.cpp with MPSPACK_CPU_INT4MM (docs/BACKENDS.md, "CPU int4 weight-only products").
constexpr int64_t kPanelMinRows = 48;
// A panel: this many columns (whole blocks) by at most this many of K (256 KiB of float).
constexpr int64_t kPanelCols = 256, kPanelDepth = 256;
// Products of less work run on the calling thread: waking the team costs more than it saves. Work in multiply-adds,
// a weight's dequantization counted as two rows' (N * K * (M + 2): on the register kernels a decode step spends
// about as long dequantizing as multiplying). Threads that spin between calls (threads_wake_fast()) start in a few
// microseconds; mpspack's pool beside a loaded libgomp sleeps, and waking it cost about 20 us on this machine's 2
// cores, more than the 8 x 256 -> 512 product of a small MLP on one thread, so it is woken only for 4 times the work.
constexpr double kSplitMinWork = double(1 << 20), kSplitMinWorkAsleep = double(4 << 20);

// MPSPACK_CPU_INT4MM (Tuning::cpu_int4mm), for measurements: "direct" keeps every product on the register
// kernels, "panel" sends every one through dequantized panels and OpenBLAS; empty by default (kPanelMinRows
// decides).
bool use_panels(int64_t M) {
  const std::string& mode = mpspack::tuning().cpu_int4mm;
  return mode == "panel" || (mode != "direct" && M >= kPanelMinRows);
}

struct Block {
  const uint8_t* B;  // its first row
  int64_t n0, nb, bb;
  bool split;
};

Block block_at(const Product& p, int64_t blk) {
  const int64_t n0 = blk * p.layout.block_n, nb = std::min(p.layout.block_n, p.N - n0);
  return {p.B + n0 * (p.K / 2), n0, nb, nb / 2, p.layout.split && nb == p.layout.block_n};
}

// The block's table of scales and offsets (int4_rows.hpp) into `table`.
void block_table(const Product& p, const Block& b, std::vector<float>& table) {
  const int4mm::Kernels& kernels = int4mm::best_kernels();
  table.resize(std::size_t(p.K / p.group * int4mm::table_group_floats(kernels, b.bb)));
  typed::visit_dtype(p.sz->dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, typed::Half> || std::is_same_v<S, typed::BF16>)
      fill_table<S>(p, kernels, b.n0, b.bb, b.split, table.data());
  });
}

// Rows [m0, m1) of C for the columns of blocks [b0, b1): on the register kernels block by block, or through panels
// of all the blocks' columns.
void span_product(const Product& p, int64_t b0, int64_t b1, int64_t m0, int64_t m1, std::vector<float>& tables,
                  std::vector<float>& panel) {
  const int4mm::Kernels& kernels = int4mm::best_kernels();
  const int64_t M = m1 - m0, n0 = b0 * p.layout.block_n, cols = std::min(b1 * p.layout.block_n, p.N) - n0;
  std::vector<float> table;
  if (!use_panels(M)) {
    for (int64_t blk = b0; blk < b1; ++blk) {
      const Block b = block_at(p, blk);
      block_table(p, b, tables);
      kernels.rows(p.A + m0 * p.K, p.K, M, b.B, b.bb, b.split, tables.data(), p.group, p.K, p.C + m0 * p.N + b.n0, p.N);
    }
    return;
  }
  const int64_t per_block = p.K / p.group * int4mm::table_group_floats(kernels, p.layout.block_n / 2);
  tables.resize(std::size_t((b1 - b0) * per_block));
  for (int64_t blk = b0; blk < b1; ++blk) {
    block_table(p, block_at(p, blk), table);
    std::copy(table.begin(), table.end(), tables.begin() + (blk - b0) * per_block);
  }
  const int64_t depth = std::min(p.K, kPanelDepth);
  panel.resize(std::size_t(depth * cols));
  for (int64_t k = 0; k < p.K; k += depth) {
    const int64_t kc = std::min(depth, p.K - k);
    for (int64_t blk = b0; blk < b1; ++blk) {
      const Block b = block_at(p, blk);
      kernels.panel(b.B, b.bb, b.split, tables.data() + (blk - b0) * per_block, p.group, k, kc,
                    panel.data() + (b.n0 - n0), cols);
    }
    gemm_here<float>(false, false, M, cols, kc, 1.0f, p.A + m0 * p.K + k, p.K, panel.data(), cols, k == 0 ? 0.0f : 1.0f,
                     p.C + m0 * p.N + n0, p.N);
  }
}

// The product over the threads, in tasks of one span of blocks (one block on the register kernels, a panel's
// worth for many rows) by one chunk of rows: spans first (each thread streams its own weights), rows split too
// when there are fewer spans than threads and rows enough.
void multiply(const Product& p) {
  const int64_t blocks = (p.N + p.layout.block_n - 1) / p.layout.block_n;
  const int64_t per_span = use_panels(p.M) ? kPanelCols / p.layout.block_n : 1;
  const int64_t spans = (blocks + per_span - 1) / per_span;
  const double work = double(p.N) * double(p.K) * double(p.M + 2);
  const bool split_work = work >= (threads_wake_fast() ? kSplitMinWork : kSplitMinWorkAsleep);
  const int64_t parts = split_work ? int64_t(thread_count()) : 1;
  const int64_t chunks = spans >= parts ? 1 : std::min((parts + spans - 1) / spans, (p.M + 3) / 4);
  const int64_t tasks = spans * chunks;
  auto run = [&](int64_t t0, int64_t t1) {
    std::vector<float> tables, panel;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t s = t / chunks, c = t % chunks;
      span_product(p, s * per_span, std::min(blocks, (s + 1) * per_span), p.M * c / chunks, p.M * (c + 1) / chunks,
                   tables, panel);
    }
  };
  if (!split_work) return run(0, tasks);
  run_parts([&](unsigned t, unsigned n) { run(tasks * t / n, tasks * (t + 1) / n); });
}

// Contiguous bfloat16 to float and back (rounded to nearest even, NaN to the quiet NaN, as float_to_bf16 does) in
// loops the compiler vectorizes: the element-wise copy of contiguous_as took a fifth of a small product (8 x 256
// -> 512) on bfloat16 activations.
TensorPtr bf16_to_f32(const Tensor& src) {
  TensorPtr out(new_contiguous(src.sizes, static_cast<int32_t>(DType::f32)));
  const auto* s = reinterpret_cast<const uint16_t*>(src.data());
  auto* d = reinterpret_cast<float*>(out->data());
  for (int64_t i = 0, n = src.numel(); i < n; ++i) d[i] = std::bit_cast<float>(uint32_t(s[i]) << 16);
  return out;
}

TensorPtr f32_to_bf16(const Tensor& src) {
  TensorPtr out(new_contiguous(src.sizes, static_cast<int32_t>(DType::bf16)));
  const auto* s = reinterpret_cast<const uint32_t*>(src.data());
  auto* d = reinterpret_cast<uint16_t*>(out->data());
  for (int64_t i = 0, n = src.numel(); i < n; ++i) {
    const uint32_t u = s[i];
    const auto rounded = uint16_t((u + ((u >> 16) & 1u) + 0x7fffu) >> 16);
    d[i] = (u & 0x7fffffffu) > 0x7f800000u ? uint16_t(0x7fc0) : rounded;
  }
  return out;
}

Tensor* int4pack_mm(const Tensor& a, const Tensor& b, const Tensor& group_t, const Tensor& sz) {
  const int64_t group = group_size_of(group_t);
  const PackLayout layout = pack_layout();
  check_int4pack(a, b, group, sz, layout);
  const int64_t M = a.sizes[0], K = a.sizes[1], N = b.sizes[0];
  const int64_t sizes[2] = {M, N};
  const auto f32 = static_cast<int32_t>(DType::f32);
  // float32 activations are used in place; float16 and bfloat16 ones are widened once, the product runs in float,
  // and its result is rounded to their dtype once.
  const auto bf16 = static_cast<int32_t>(DType::bf16);
  TensorPtr af = a.dtype == bf16 ? bf16_to_f32(a) : contiguous_as(a, f32);
  TensorPtr out(new_contiguous(sizes, f32));
  auto* C = reinterpret_cast<float*>(out->data());
  if (K == 0) std::fill(C, C + M * N, 0.0f);
  if (M > 0 && N > 0 && K > 0)
    multiply({reinterpret_cast<const float*>(af->data()), reinterpret_cast<const uint8_t*>(b.data()), &sz, C, M, N, K,
              group, layout});
  if (a.dtype == bf16) out = f32_to_bf16(*out);
  else if (a.dtype != f32) out = contiguous_as(*out, a.dtype);
  return out.release();
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(AtenTensorHandle X, AtenTensorHandle w,
                                                                        AtenTensorHandle qGroupSize,
                                                                        AtenTensorHandle qScaleAndZeros,
                                                                        AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("ret0 is null");
    *ret0 = int4pack_mm(deref(X, "X"), deref(w, "w"), deref(qGroupSize, "qGroupSize"),
                        deref(qScaleAndZeros, "qScaleAndZeros"));
  });
}
