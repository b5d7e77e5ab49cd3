// aten::_scaled_dot_product_flash_attention_for_cpu: softmax(q k^T * scale + mask) v with torch's output layouts.
// Float32, bfloat16 and float16 (attend_f32): float32 math, as torch's op math, on attention_kernels.hpp's kernels.
// For each (image, head) and block of query rows, on the shim's thread team: the block's scores as one product
// against the head's keys transposed (once per thread and head; blocks of 1-3 rows, as a decode step's, take dot
// products with the keys where they are), under a causal mask only up to the block's last row; the mask's rows
// and the softmax in vectors; the output as a second product, normalized in it and written in place. q, k, v and
// the mask are read where they are (float32 rows in place; bf16/f16 widened by the thread that needs them, query
// rows a block at a time, keys and values a head at a time, never copied whole). Keys and values may have fewer
// heads than the query (grouped-query attention, H a multiple of theirs): query head h reads key/value head
// h / (H / Hk), and a thread keeps one key/value head, transposed or widened, for the whole group. bf16 q, k and v
// on a CPU with AVX-512 BF16 are multiplied as bf16 pairs instead of widened (pairs_route), as torch multiplies them.
// Float64 (attend<double>): the same blocks on blas.hpp's products.
#include "aoti_shim.h"
#include "attention_kernels.hpp"
#include "blas.hpp"
#include "parallel.hpp"
#include "tensor.hpp"
#include "runtime/tuning/tuning.hpp"

#include <mpspack/half.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace mpspack::shim;

namespace {

// Element (i0..i3) of a 4-D view, read as double.
struct View4 {
  const char* p;
  int32_t dtype;
  std::size_t isz;
  int64_t st[4];
  double at(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return load_as_double(p + (a * st[0] + b * st[1] + c * st[2] + d * st[3]) * static_cast<int64_t>(isz), dtype);
  }
};

// The mask as a [B,H,L,S] view, broadcasting size-1 (and missing leading) dims with stride 0.
View4 mask_view(const Tensor& m, int64_t B, int64_t H, int64_t L, int64_t S) {
  if (m.dim() != 2 && m.dim() != 4) fail("sdpa: attention mask must have 2 or 4 dims");
  const int64_t want[4] = {B, H, L, S};
  View4 v{m.data(), m.dtype, m.itemsize(), {0, 0, 0, 0}};
  const int64_t off = 4 - m.dim();
  for (int64_t i = 0; i < m.dim(); ++i) {
    const int64_t d = i + off;
    if (m.sizes[i] == want[d]) {
      v.st[d] = want[d] == 1 ? 0 : m.strides[i];
    } else if (m.sizes[i] == 1) {
      v.st[d] = 0;
    } else {
      fail("sdpa: attention mask size " + std::to_string(m.sizes[i]) + " does not broadcast to " +
           std::to_string(want[d]) + " at dim " + std::to_string(d));
    }
  }
  return v;
}

struct Problem {
  int64_t B, H, L, S, E, Ev;
  double scale;
  bool causal;
  const View4* mask;  // null without one
  bool bool_mask;     // true: keep where set; else added to the scores
  int64_t group;      // query heads per key/value head: 1, or more for grouped-query attention (H / Hk)
};

// Row r of a block: the mask applied to its scores s[0, S), then softmax in place; returns (max, sum of exps).
template <class T>
std::pair<T, double> softmax_in_place(const Problem& p, int64_t b, int64_t h, int64_t i, T* s) {
  const T ninf = -std::numeric_limits<T>::infinity();
  if (p.mask) {
    for (int64_t j = 0; j < p.S; ++j) {
      if (p.bool_mask) s[j] = p.mask->at(b, h, i, j) == 0.0 ? ninf : s[j];
      else s[j] += T(p.mask->at(b, h, i, j));
    }
  }
  if (p.causal) std::fill(s + std::min(i + 1, p.S), s + p.S, ninf);  // top-left aligned causal mask, as torch's
  T mx = ninf;
  for (int64_t j = 0; j < p.S; ++j) mx = std::max(mx, s[j]);
  double sum = 0;
  for (int64_t j = 0; j < p.S; ++j) {
    s[j] = mx == ninf ? T(0) : std::exp(s[j] - mx);
    sum += s[j];
  }
  if (mx == ninf) std::fill(s, s + p.S, T(0));  // a row with every key masked gives zeros
  const T inv = sum > 0 ? T(1.0 / sum) : T(0);
  for (int64_t j = 0; j < p.S; ++j) s[j] *= inv;
  return {mx, sum};
}

// Rows [0, rows) of one (image, head)'s q, k or v in the compute type T: a pointer and a row stride. Read in
// place when the tensor already is T with dense rows (a transposed [B, L, H, E] view, as models hand them over,
// included); else from a dense copy.
template <class T>
struct Rows {
  const T* p;
  int64_t ld;          // from one row to the next
  int64_t st_b, st_h;  // from one image, one head to the next
  TensorPtr copy;      // owns the data when it had to be copied
  const T* head(int64_t b, int64_t h) const { return p + b * st_b + h * st_h; }
};

template <class T>
Rows<T> rows_of(const Tensor& t) {
  const int32_t ct = std::is_same_v<T, double> ? static_cast<int32_t>(DType::f64) : static_cast<int32_t>(DType::f32);
  const int64_t width = t.sizes[3];
  if (t.dtype == ct && (t.strides[3] == 1 || width == 1) && t.strides[2] >= width && t.strides[0] >= 0 &&
      t.strides[1] >= 0)
    return {reinterpret_cast<const T*>(t.data()), t.strides[2], t.strides[0], t.strides[1], nullptr};
  TensorPtr c = contiguous_as(t, ct);
  const T* p = reinterpret_cast<const T*>(c->data());
  return {p, width, t.sizes[1] * t.sizes[2] * width, t.sizes[2] * width, std::move(c)};
}

// One block of query rows [i0, i0 + rows) of image b, head h: scores -> softmax -> output and logsumexp.
// scores: rows x S, acc: rows x Ev scratch.
template <class T>
void attend_block(const Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, const Rows<T>& q, const Rows<T>& k,
                  const Rows<T>& v, T* scores, T* acc, Tensor& out, Tensor& lse) {
  gemm<T>(false, true, rows, p.S, p.E, T(p.scale), q.head(b, h) + i0 * q.ld, q.ld, k.head(b, h / p.group), k.ld, T(0),
          scores, p.S);
  const std::size_t oisz = out.itemsize(), lisz = lse.itemsize();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    const auto [mx, sum] = softmax_in_place<T>(p, b, h, i, scores + r * p.S);
    const double lse_v = sum > 0 ? double(mx) + std::log(sum) : -std::numeric_limits<double>::infinity();
    store_from_double(lse.data() + (b * lse.strides[0] + h * lse.strides[1] + i * lse.strides[2]) * int64_t(lisz),
                      lse.dtype, lse_v);
  }
  char* out0 = out.data() + (b * out.strides[0] + h * out.strides[1] + i0 * out.strides[2]) * int64_t(oisz);
  const bool same_layout =
      out.dtype == (std::is_same_v<T, float> ? static_cast<int32_t>(DType::f32) : static_cast<int32_t>(DType::f64)) &&
      out.strides[3] == 1 && out.strides[2] >= p.Ev;
  if (same_layout) {  // straight into the output's rows
    gemm<T>(false, false, rows, p.Ev, p.S, T(1), scores, p.S, v.head(b, h / p.group), v.ld, T(0),
            reinterpret_cast<T*>(out0), out.strides[2]);
    return;
  }
  gemm<T>(false, false, rows, p.Ev, p.S, T(1), scores, p.S, v.head(b, h / p.group), v.ld, T(0), acc, p.Ev);
  for (int64_t r = 0; r < rows; ++r) {
    char* orow = out0 + r * out.strides[2] * int64_t(oisz);
    for (int64_t e = 0; e < p.Ev; ++e)
      store_from_double(orow + e * out.strides[3] * int64_t(oisz), out.dtype, double(acc[r * p.Ev + e]));
  }
}

// Query rows per block of attend<double>. Where there are fewer heads than threads, each head's rows are cut into as
// many blocks as its share of the threads (threads / heads, rounded down), so that every block runs at once: bert's 4
// heads of 128 rows on 16 threads give 16 blocks of 32, vit_tiny's 3 heads of 197 give 15 of 40 (rounded up, 6 blocks a
// head would leave 2 threads a second block each). Blocks have at least 32 rows (shorter ones make products too
// short for the GEMM kernel to reach its speed) and at most as many as keep their two products under the size at
// which the shim would split a product over threads itself (kSplitGemmMinMacs): the audio encoder's 1,500 rows
// go in blocks of 174.
int64_t rows_per_block(const Problem& p, unsigned threads) {
  const double macs_per_row = double(p.S) * double(std::max(p.E, p.Ev));
  const int64_t most = std::max<int64_t>(1, int64_t(kSplitGemmMinMacs / std::max(macs_per_row, 1.0)));
  const int64_t heads = p.B * p.H;
  const int64_t blocks_per_head = heads < int64_t(threads) ? int64_t(threads) / heads : 1;
  const int64_t rows = (p.L + blocks_per_head - 1) / blocks_per_head;
  return std::clamp<int64_t>(std::max<int64_t>(rows, 32), 1, std::min(most, p.L));
}

// Every (image, head, block of rows) on the thread team, each thread taking the next block until none is left;
// T is the compute type: float64 only now (attend_f32 takes the others).
template <class T>
void attend(const Problem& p, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse) {
  const Rows<T> qr = rows_of<T>(q), kr = rows_of<T>(k), vr = rows_of<T>(v);
  const int64_t rows = rows_per_block(p, thread_count());
  const int64_t blocks_per_head = (p.L + rows - 1) / rows, tasks = p.B * p.H * blocks_per_head;
  std::atomic<int64_t> next{0};
  run_parts([&](unsigned, unsigned) {
    std::vector<T> scores(std::size_t(rows * std::max<int64_t>(p.S, 1))),
        acc(std::size_t(rows * std::max<int64_t>(p.Ev, 1)));
    for (int64_t task = next++; task < tasks; task = next++) {
      const int64_t bh = task / blocks_per_head, i0 = (task % blocks_per_head) * rows;
      attend_block<T>(p, bh / p.H, bh % p.H, i0, std::min(rows, p.L - i0), qr, kr, vr, scores.data(), acc.data(), out,
                      lse);
    }
  });
}

// --- float32, bfloat16 and float16: the products on attention_kernels.hpp's kernel, float32 math.

// A 4-D operand of any strides, f32, bf16 or f16, read as float.
struct Operand {
  const char* p;
  int32_t dtype;
  int64_t st[4];
  float at(const char* base, int64_t i) const {  // element i of a run starting at base (an element pointer)
    if (dtype == static_cast<int32_t>(DType::f32)) return reinterpret_cast<const float*>(base)[i];
    uint16_t u;
    std::memcpy(&u, base + 2 * i, 2);
    return dtype == static_cast<int32_t>(DType::bf16) ? mpspack::bf16_to_float(u) : mpspack::half_to_float(u);
  }
  std::size_t isz() const { return dtype == static_cast<int32_t>(DType::f32) ? 4 : 2; }
  const char* at4(int64_t a, int64_t b, int64_t c) const {
    return p + (a * st[0] + b * st[1] + c * st[2]) * int64_t(isz());
  }
  // Whether rows are read in place: float32 with a stride-1 last dim.
  bool in_place() const { return dtype == static_cast<int32_t>(DType::f32) && st[3] == 1; }
  // Whether rows are bf16 with a stride-1 last dim: widened on vectors, or multiplied as pairs.
  bool dense_bf16() const { return dtype == static_cast<int32_t>(DType::bf16) && st[3] == 1; }
};

Operand operand_of(const Tensor& t) {
  return {t.data(), t.dtype, {t.strides[0], t.strides[1], t.strides[2], t.sizes[3] == 1 ? 1 : t.strides[3]}};
}

// `width` elements of a row from src (an element pointer) into d as float: dense bf16 rows on the kernel set's
// vectors, dense f32 rows copied, anything else element by element.
void widen_row(const attn::Kernels& kern, const Operand& o, const char* src, int64_t width, float* d) {
  if (o.dense_bf16()) {
    kern.widen_bf16(reinterpret_cast<const uint16_t*>(src), width, d);
  } else if (o.in_place()) {
    std::memcpy(d, src, std::size_t(width) * 4);
  } else {
    for (int64_t e = 0; e < width; ++e) d[e] = o.at(src, e * o.st[3]);
  }
}

// n rows of `width` elements of head (b, h) from row r0 into dst (rows ld apart) as float.
void widen_rows(const attn::Kernels& kern, const Operand& o, int64_t b, int64_t h, int64_t r0, int64_t n, int64_t width,
                float* dst, int64_t ld) {
  for (int64_t r = 0; r < n; ++r) widen_row(kern, o, o.at4(b, h, r0 + r), width, dst + r * ld);
}

// The key rows [0, n) of head (b, h) transposed: kt[e * ld + j] = k[j, e], columns n..ld zero.
void transpose_keys(const attn::Kernels& kern, const Operand& k, int64_t b, int64_t h, int64_t n, int64_t E, float* kt,
                    int64_t ld) {
  constexpr int64_t kTile = 16;  // 16 keys at a time: each read row and written column run stays in a cache line
  for (int64_t j0 = 0; j0 < n; j0 += kTile) {
    const int64_t jn = std::min(kTile, n - j0);
    float tile[kTile][256];
    for (int64_t e0 = 0; e0 < E; e0 += 256) {
      const int64_t en = std::min<int64_t>(256, E - e0);
      for (int64_t j = 0; j < jn; ++j) {
        widen_row(kern, k, k.at4(b, h, j0 + j) + e0 * k.st[3] * int64_t(k.isz()), en, tile[j]);
      }
      for (int64_t e = 0; e < en; ++e)
        for (int64_t j = 0; j < jn; ++j) kt[(e0 + e) * ld + j0 + j] = tile[j][e];
    }
  }
  for (int64_t e = 0; e < E; ++e) std::fill(kt + e * ld + n, kt + e * ld + ld, 0.0f);
}

// The key rows [0, n) of head (b, h) as bf16 pairs for attn::Kernels::product_bf16: kw[p * ld + j] = the 32-bit word
// holding k[j, 2p] and k[j, 2p + 1] (bf16 rows with a stride-1 last dim, E even).
void pack_key_pairs(const Operand& k, int64_t b, int64_t h, int64_t n, int64_t E, uint32_t* kw, int64_t ld) {
  constexpr int64_t kTile = 16;  // as transpose_keys: 16 keys' words at a time
  const int64_t P = E / 2;
  for (int64_t j0 = 0; j0 < n; j0 += kTile) {
    const int64_t jn = std::min(kTile, n - j0);
    uint32_t tile[kTile][128];
    for (int64_t p0 = 0; p0 < P; p0 += 128) {
      const int64_t pn = std::min<int64_t>(128, P - p0);
      for (int64_t j = 0; j < jn; ++j) std::memcpy(tile[j], k.at4(b, h, j0 + j) + p0 * 4, std::size_t(pn) * 4);
      for (int64_t p = 0; p < pn; ++p)
        for (int64_t j = 0; j < jn; ++j) kw[(p0 + p) * ld + j0 + j] = tile[j][p];
    }
  }
}

// The value rows [0, n) of head (b, h) as bf16 pairs of consecutive rows: vw[j * Ev + e] = v[2j, e] | v[2j + 1, e]
// << 16, for j < ceil(n / 2); an odd n's last pair takes zero for its missing row.
void pack_value_pairs(const attn::Kernels& kern, const Operand& v, int64_t b, int64_t h, int64_t n, int64_t Ev,
                      uint32_t* vw, std::vector<uint16_t>& zeros) {
  if (int64_t(zeros.size()) < Ev) zeros.assign(std::size_t(Ev), 0);
  for (int64_t j = 0; 2 * j < n; ++j) {
    const auto* r0 = reinterpret_cast<const uint16_t*>(v.at4(b, h, 2 * j));
    const auto* r1 = 2 * j + 1 < n ? reinterpret_cast<const uint16_t*>(v.at4(b, h, 2 * j + 1)) : zeros.data();
    kern.interleave_bf16(r0, r1, Ev, vw + j * Ev);
  }
}

// The mask's row for (b, h, i): added to (or, bool, kept where set in) the scores s[0, n).
void apply_mask_row(const View4& m, bool is_bool, int64_t b, int64_t h, int64_t i, float* s, int64_t n) {
  const char* row = m.p + (b * m.st[0] + h * m.st[1] + i * m.st[2]) * int64_t(m.isz);
  constexpr float ninf = -std::numeric_limits<float>::infinity();
  if (m.st[3] == 1 || n == 1) {  // dense rows, read as their dtype (not through load_as_double)
    if (m.dtype == static_cast<int32_t>(DType::f32)) {
      const auto* f = reinterpret_cast<const float*>(row);
      for (int64_t j = 0; j < n; ++j) s[j] += f[j];
      return;
    }
    if (m.dtype == static_cast<int32_t>(DType::bf16)) {
      const auto* u = reinterpret_cast<const uint16_t*>(row);
      for (int64_t j = 0; j < n; ++j) s[j] += std::bit_cast<float>(uint32_t(u[j]) << 16);
      return;
    }
    if (m.dtype == static_cast<int32_t>(DType::boolean)) {
      const auto* u = reinterpret_cast<const uint8_t*>(row);
      for (int64_t j = 0; j < n; ++j) s[j] = u[j] ? s[j] : ninf;
      return;
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    const double x = load_as_double(row + j * m.st[3] * int64_t(m.isz), m.dtype);
    if (is_bool) s[j] = x == 0.0 ? ninf : s[j];
    else s[j] += float(x);
  }
}

// Blocks of fewer query rows than this (a decode step's one) take their scores as dot products with the keys where
// they are: transposing the keys would cost as much as the products.
constexpr int64_t kDotRows = 4;

// One thread's scratch, kept between calls (grown, never shrunk): a call allocates nothing per block.
struct Scratch {
  std::vector<float> q, kt, v, scores, out, inv;
  std::vector<uint32_t> kw, vw;        // keys and values as bf16 pairs (the pairs route)
  std::vector<uint16_t> probs, zeros;  // a block's probabilities rounded to bf16; a row of zeros
  // Whose keys kt holds: the call (a number no other call had), the key/value head (b * Hk + h / group), how many
  // keys, rows ld apart.
  uint64_t kt_call = 0;
  int64_t kt_head = -1, kt_keys = 0, kt_ld = 0;
  // Whose values v (or vw) holds widened or paired (bf16, f16 or strided ones), rows Ev apart: as for kt.
  uint64_t v_call = 0;
  int64_t v_head = -1, v_keys = 0;
  template <class T>
  static T* fit(std::vector<T>& buf, int64_t n) {
    if (int64_t(buf.size()) < n) buf.resize(std::size_t(n));
    return buf.data();
  }
};

// Query rows per block: the makespan (rounds of blocks over the threads, times a block's multiply-adds plus its
// fixed cost) smallest among a few heights, the taller on a tie, among the heights that give every thread two
// blocks or more where any does. The fixed cost is the scratch a block touches and the head's keys transposed,
// about a cycle a value (32 multiply-adds), where a thread's next block is another head's, whose keys it transposes
// again (fitted to [8,12,128,64] and [1,12,197,64] at 16 to 256 rows on 16 threads: bench/attention_cpu.cpp with
// MPSPACK_CPU_ATTENTION_ROWS). With one block a thread, a thread that starts late holds up the whole call:
// [1,12,197,64] in 12 blocks of 197 rows took 1.16x as long as 48 blocks of 64. Scores of a block stay within 256
// KiB (L2) where rows allow. MPSPACK_CPU_ATTENTION_ROWS sets the height instead, for comparisons.
int64_t rows_per_block_f32(const Problem& p, unsigned threads) {
  if (const uint64_t forced = mpspack::tuning().cpu_attention_rows; forced > 0)
    return std::max<int64_t>(1, int64_t(std::min<uint64_t>(forced, uint64_t(p.L))));
  const int64_t S = std::max<int64_t>(p.S, 1), heads = p.B * p.H;
  int64_t best = 1, best_balanced = 0;
  double best_cost = std::numeric_limits<double>::infinity(), best_balanced_cost = best_cost;
  for (const int64_t cand : {8, 16, 32, 48, 64, 96, 128, 192, 256}) {
    const int64_t r = std::min(cand, p.L);
    if (cand > 8 && r * S * 4 > (256 << 10)) break;
    const int64_t blocks_per_head = (p.L + r - 1) / r, tasks = heads * blocks_per_head;
    const double rounds = double((tasks + threads - 1) / threads);
    const double keys = p.causal ? std::min<double>(double(S), double(r) + double(p.L) / 2) : double(S);
    // Threads take blocks in turn, so a thread's next block is of its head where a head has more blocks than there
    // are threads: then its keys are transposed once for several blocks.
    const double transposes = std::min(1.0, double(threads) / double(blocks_per_head));
    const double cost =
        rounds * (double(r) * keys * double(p.E + p.Ev) + (2 + transposes * 32) * double(S) * double(p.E) + 4096);
    if (cost <= best_cost) best_cost = cost, best = r;
    if (tasks >= 2 * int64_t(threads) && cost <= best_balanced_cost) best_balanced_cost = cost, best_balanced = r;
    if (r == p.L) break;
  }
  return best_balanced > 0 ? best_balanced : best;
}

// Whether a head's float32 values are copied into rows of their own before the second product rather than read
// where they are: rows apart by a multiple of 1 KiB (a [B, L, H, E] tensor viewed as [B, H, L, E], 8 heads of 64
// floats: 2 KiB) fall in a few of the caches' sets, so the product's passes over a head's values find them evicted
// by their own rows once they outgrow L1. torch's kernel gets the same from its BLAS, which packs them. Copied
// values are kept for the thread's next block of the same head, as the keys are.
bool copy_values(const Operand& v, int64_t keys, int64_t Ev) {
  const int64_t row_bytes = v.st[2] * 4;
  return v.in_place() && v.st[2] != Ev && row_bytes % 1024 == 0 && keys * Ev * 4 > (32 << 10);
}

// One call's operands and what every block shares.
struct F32Call {
  const Problem& p;
  const attn::Kernels& kern;
  Operand Q, K, V;
  Tensor& out;
  Tensor& lse;
  uint64_t id;  // no other call had it: tells a thread's kept keys from another call's
  bool pairs;   // every block's output, and the scores of blocks of kDotRows rows or more, on bf16 pairs
};

// Whether a call's products take bf16 pairs (attn::Kernels::product_bf16, AVX-512 BF16): q, k and v bf16 with a
// stride-1 last dim and an even head width, unless MPSPACK_CPU_ATTENTION=widen. The scores are then summed in
// float32 from exact products of the bf16 values, and the probabilities rounded to bf16 before the second product,
// as torch's bf16 kernel does; else every operand is widened to float32 (float32 products of the same values).
bool pairs_route(const attn::Kernels& kern, const Operand& q, const Operand& k, const Operand& v, int64_t E) {
  return kern.product_bf16 != nullptr && mpspack::tuning().cpu_attention_pairs && E % 2 == 0 && q.dense_bf16() &&
         k.dense_bf16() && v.dense_bf16();
}

// One block: rows [i0, i0 + n) of image b, head h, seeing keys [0, keys).
struct Block {
  int64_t b, h, i0, n, keys;
};

// Rows of `width` values of a head where they are (float32 rows) or widened into buf; returns them and their stride.
const float* rows_as_float(const attn::Kernels& kern, const Operand& o, int64_t b, int64_t h, int64_t r0, int64_t n,
                           int64_t width, std::vector<float>& buf, int64_t& ld) {
  if (o.in_place()) {
    ld = o.st[2];
    return reinterpret_cast<const float*>(o.at4(b, h, r0));
  }
  ld = width;
  float* d = Scratch::fit(buf, n * width);
  widen_rows(kern, o, b, h, r0, n, width, d, width);
  return d;
}

// The block's scores, scale * q k^T, rows ld apart (set here).
float* block_scores(const F32Call& c, Scratch& sc, const Block& k, int64_t& ld) {
  const Problem& p = c.p;
  int64_t qld;
  if (k.n < kDotRows) {  // against the keys where they are (or widened, not transposed)
    const float* qa = rows_as_float(c.kern, c.Q, k.b, k.h, k.i0, k.n, p.E, sc.q, qld);
    int64_t kld;
    sc.kt_head = -1;  // kt may hold the widened keys now, not transposed ones
    const float* kr = rows_as_float(c.kern, c.K, k.b, k.h / p.group, 0, k.keys, p.E, sc.kt, kld);
    ld = k.keys;
    float* s = Scratch::fit(sc.scores, k.n * ld);
    c.kern.dots(k.n, k.keys, p.E, float(p.scale), qa, qld, kr, kld, s, ld);
    return s;
  }
  ld = (k.keys + 15) / 16 * 16;
  float* s = Scratch::fit(sc.scores, k.n * ld);
  // This thread's last block of the same head transposed (or paired) as many keys or more: kept (its rows are
  // longer; the scores past `keys` are left out after).
  const int64_t bh = k.b * (p.H / p.group) + k.h / p.group;  // the key/value head: query heads of a group share it
  const bool kept = sc.kt_call == c.id && sc.kt_head == bh && sc.kt_keys >= k.keys;
  if (!kept) sc.kt_call = c.id, sc.kt_head = bh, sc.kt_keys = k.keys, sc.kt_ld = ld;
  if (c.pairs) {
    if (!kept) pack_key_pairs(c.K, k.b, k.h / p.group, k.keys, p.E, Scratch::fit(sc.kw, p.E / 2 * ld), ld);
    const auto* q = reinterpret_cast<const uint16_t*>(c.Q.at4(k.b, k.h, k.i0));
    c.kern.product_bf16(k.n, k.keys, p.E / 2, float(p.scale), nullptr, q, c.Q.st[2], sc.kw.data(), sc.kt_ld, s, ld);
    return s;
  }
  if (!kept) transpose_keys(c.kern, c.K, k.b, k.h / p.group, k.keys, p.E, Scratch::fit(sc.kt, p.E * ld), ld);
  const float* qa = rows_as_float(c.kern, c.Q, k.b, k.h, k.i0, k.n, p.E, sc.q, qld);
  c.kern.product(k.n, ld, p.E, float(p.scale), nullptr, qa, qld, sc.kt.data(), sc.kt_ld, s, ld);
  return s;
}

// The mask, the causal mask and exp(s - max) over each row of the block; the rows' 1 / sum into inv and their
// logsumexp into lse.
void block_softmax(const F32Call& c, const Block& k, float* s, int64_t ld, float* inv) {
  const Problem& p = c.p;
  constexpr float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < k.n; ++r) {
    const int64_t i = k.i0 + r;
    float* row = s + r * ld;
    if (p.mask) apply_mask_row(*p.mask, p.bool_mask, k.b, k.h, i, row, k.keys);
    if (p.causal) std::fill(row + std::min(i + 1, k.keys), row + k.keys, ninf);  // top-left aligned, as torch's
    const float mx = c.kern.row_max(row, k.keys);
    const bool none = mx == ninf;
    const double sum = none ? 0.0 : double(c.kern.exp_sum(row, k.keys, mx));
    if (none) std::fill(row, row + k.keys, 0.0f);  // a row with every key masked gives zeros
    inv[r] = sum > 0 ? float(1.0 / sum) : 0.0f;
    const double lse_v = sum > 0 ? double(mx) + std::log(sum) : -std::numeric_limits<double>::infinity();
    const Tensor& l = c.lse;
    store_from_double(l.data() + (k.b * l.strides[0] + k.h * l.strides[1] + i * l.strides[2]) * int64_t(l.itemsize()),
                      l.dtype, lse_v);
  }
}

// The block's output, (exp scores) v normalized by inv: straight into float32 output rows, else through scratch.
void block_output(const F32Call& c, Scratch& sc, const Block& k, const float* s, int64_t ld, const float* inv) {
  const Problem& p = c.p;
  Tensor& out = c.out;
  const int64_t oisz = int64_t(out.itemsize());
  char* out0 = out.data() + (k.b * out.strides[0] + k.h * out.strides[1] + k.i0 * out.strides[2]) * oisz;
  const bool direct = out.dtype == static_cast<int32_t>(DType::f32) && out.strides[3] == 1;
  float* o = direct ? reinterpret_cast<float*>(out0) : Scratch::fit(sc.out, k.n * p.Ev);
  const int64_t ldo = direct ? out.strides[2] : p.Ev;
  // Values widened, copied (copy_values) or paired are kept for the thread's next block of the same key/value head.
  const int64_t bh = k.b * (p.H / p.group) + k.h / p.group;
  const bool kept = sc.v_call == c.id && sc.v_head == bh && sc.v_keys >= k.keys;
  if (c.pairs) {
    const int64_t pairs = (k.keys + 1) / 2;
    if (!kept) {
      pack_value_pairs(c.kern, c.V, k.b, k.h / p.group, k.keys, p.Ev, Scratch::fit(sc.vw, pairs * p.Ev), sc.zeros);
      sc.v_call = c.id, sc.v_head = bh, sc.v_keys = k.keys;
    }
    uint16_t* probs = Scratch::fit(sc.probs, k.n * 2 * pairs);
    for (int64_t r = 0; r < k.n; ++r) {
      c.kern.narrow_bf16(s + r * ld, k.keys, probs + r * 2 * pairs);
      if (k.keys % 2 != 0) probs[r * 2 * pairs + k.keys] = 0;
    }
    c.kern.product_bf16(k.n, p.Ev, pairs, 1.0f, inv, probs, 2 * pairs, sc.vw.data(), p.Ev, o, ldo);
  } else {
    int64_t vld = p.Ev;
    const float* va;
    if (c.V.in_place() && !copy_values(c.V, k.keys, p.Ev)) {
      va = rows_as_float(c.kern, c.V, k.b, k.h / p.group, 0, k.keys, p.Ev, sc.v, vld);
    } else {
      if (!kept) {
        widen_rows(c.kern, c.V, k.b, k.h / p.group, 0, k.keys, p.Ev, Scratch::fit(sc.v, k.keys * p.Ev), p.Ev);
        sc.v_call = c.id, sc.v_head = bh, sc.v_keys = k.keys;
      }
      va = sc.v.data();
    }
    c.kern.product(k.n, p.Ev, k.keys, 1.0f, inv, s, ld, va, vld, o, ldo);
  }
  if (direct) return;
  for (int64_t r = 0; r < k.n; ++r) {
    char* orow = out0 + r * out.strides[2] * oisz;
    if (out.dtype == static_cast<int32_t>(DType::bf16) && out.strides[3] == 1) {
      c.kern.narrow_bf16(o + r * p.Ev, p.Ev, reinterpret_cast<uint16_t*>(orow));
      continue;
    }
    for (int64_t e = 0; e < p.Ev; ++e)
      store_from_double(orow + e * out.strides[3] * oisz, out.dtype, double(o[r * p.Ev + e]));
  }
}

void attend_f32(const Problem& p, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse) {
  static std::atomic<uint64_t> calls{0};
  const attn::Kernels& kern = attn::best_kernels();
  const Operand Q = operand_of(q), K = operand_of(k), V = operand_of(v);
  const F32Call c{p, kern, Q, K, V, out, lse, ++calls, pairs_route(kern, Q, K, V, p.E)};
  const int64_t rows = rows_per_block_f32(p, thread_count());
  const int64_t blocks_per_head = (p.L + rows - 1) / rows, tasks = p.B * p.H * blocks_per_head;
  std::atomic<int64_t> next{0};
  run_parts([&](unsigned, unsigned) {
    thread_local Scratch sc;
    for (int64_t task = next++; task < tasks; task = next++) {
      // A head's blocks one after the other, so that a thread taking several of them transposes its keys once;
      // the last block first: under a causal mask it sees the most keys.
      const int64_t blk = blocks_per_head - 1 - task % blocks_per_head, bh = task / blocks_per_head;
      const int64_t i0 = blk * rows, n = std::min(rows, p.L - i0);
      // Keys a row of the block may see: all, or under the causal mask up to the block's last row.
      const Block block{bh / p.H, bh % p.H, i0, n, p.causal ? std::min(p.S, i0 + n) : p.S};
      int64_t ld;
      float* s = block_scores(c, sc, block, ld);
      float* inv = Scratch::fit(sc.inv, n);
      block_softmax(c, block, s, ld, inv);
      block_output(c, sc, block, s, ld, inv);
    }
  });
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    const Tensor& q = deref(query, "query");
    const Tensor& k = deref(key, "key");
    const Tensor& v = deref(value, "value");
    const Tensor* mask = (attn_mask != nullptr && *attn_mask != nullptr) ? *attn_mask : nullptr;
    for (const Tensor* t : {&q, &k, &v}) {
      require_cpu(*t, "sdpa");
      if (t->dim() != 4) fail("sdpa: query, key and value must be 4-D [B, H, L, E]");
    }
    if (mask) require_cpu(*mask, "sdpa");
    if (dropout_p != 0.0) fail("sdpa: dropout is not supported (dropout_p must be 0)");
    const int32_t dt = q.dtype;
    if (k.dtype != dt || v.dtype != dt) fail("sdpa: query, key and value dtypes differ");
    const bool f64 = dt == static_cast<int32_t>(DType::f64);
    if (!f64 && dt != static_cast<int32_t>(DType::f32) && dt != static_cast<int32_t>(DType::f16) &&
        dt != static_cast<int32_t>(DType::bf16))
      fail(std::string("sdpa: dtype ") + dtype_name(dt) + " is not supported");
    const int64_t B = q.sizes[0], H = q.sizes[1], L = q.sizes[2], E = q.sizes[3];
    const int64_t S = k.sizes[2], Ev = v.sizes[3];
    // Grouped-query attention: fewer key/value heads than query heads, each shared by H / Hk query heads in turn.
    const int64_t Hk = k.sizes[1];
    if (k.sizes[0] != B || v.sizes[0] != B || v.sizes[1] != Hk || (Hk == 0 ? H != 0 : H % Hk != 0))
      fail("sdpa: batch and head counts of query, key and value differ");
    if (k.sizes[3] != E || v.sizes[2] != S) fail("sdpa: key/value shapes do not match the query");
    const double sc = scale != nullptr ? *scale : 1.0 / std::sqrt(static_cast<double>(E));

    // ret0: torch allocates empty_like(query) (the meta function does too), i.e. query's strides when it is dense.
    std::vector<int64_t> out_sizes{B, H, L, Ev};
    std::vector<int64_t> out_strides = Ev == E ? empty_like_strides(q) : contiguous_strides(out_sizes);
    TensorPtr out(new_tensor(out_sizes, out_strides, dt));
    // ret1: logsumexp [B,H,L], allocated as [B,L,H] contiguous and transposed; the op-math dtype.
    const int32_t lse_dt = f64 ? dt : static_cast<int32_t>(DType::f32);
    const int64_t lse_sizes[3] = {B, H, L};
    const int64_t lse_strides[3] = {L * H, 1, H};
    TensorPtr lse(new_tensor(lse_sizes, lse_strides, lse_dt));

    View4 M{};
    if (mask) M = mask_view(*mask, B, H, L, S);
    const Problem p{B,
                    H,
                    L,
                    S,
                    E,
                    Ev,
                    sc,
                    is_causal != 0,
                    mask ? &M : nullptr,
                    mask && mask->dtype == static_cast<int32_t>(DType::boolean),
                    Hk == 0 ? 1 : H / Hk};
    if (B * H * L > 0) {
      if (f64) attend<double>(p, q, k, v, *out, *lse);
      else attend_f32(p, q, k, v, *out, *lse);
    }
    hand_out(ret0, std::move(out));
    hand_out(ret1, std::move(lse));
  });
}
