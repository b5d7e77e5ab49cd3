// aten::_scaled_dot_product_flash_attention_for_cpu: softmax(q k^T * scale + mask) v with torch's output layouts.
// q, k and v are read where they are when they already are the compute type (double for float64, else float, as
// torch's op math) with dense rows, else from dense copies; then, for each (image, head) and block of query rows,
// on the shim's thread team: the scores of the block as one product (blas.hpp), the mask and a numerically safe
// softmax row by row (softmax_row.hpp for float), and the block's output as a second product.
#include "aoti_shim.h"
#include "blas.hpp"
#include "parallel.hpp"
#include "softmax_row.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <atomic>
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
  T mx;
  double sum;
  if constexpr (std::is_same_v<T, float>) {
    mx = row_max(s, p.S);
    sum = mx == ninf ? 0.0 : exp_shifted_sum(s, p.S, mx);
  } else {
    mx = ninf;
    for (int64_t j = 0; j < p.S; ++j) mx = std::max(mx, s[j]);
    sum = 0;
    for (int64_t j = 0; j < p.S; ++j) {
      s[j] = mx == ninf ? T(0) : std::exp(s[j] - mx);
      sum += s[j];
    }
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
void attend_block(const Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, const Rows<T>& q,
                  const Rows<T>& k, const Rows<T>& v, T* scores, T* acc, Tensor& out, Tensor& lse) {
  gemm<T>(false, true, rows, p.S, p.E, T(p.scale), q.head(b, h) + i0 * q.ld, q.ld, k.head(b, h), k.ld, T(0), scores,
          p.S);
  const std::size_t oisz = out.itemsize(), lisz = lse.itemsize();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    const auto [mx, sum] = softmax_in_place<T>(p, b, h, i, scores + r * p.S);
    const double lse_v = sum > 0 ? double(mx) + std::log(sum) : -std::numeric_limits<double>::infinity();
    store_from_double(lse.data() + (b * lse.strides[0] + h * lse.strides[1] + i * lse.strides[2]) * int64_t(lisz),
                      lse.dtype, lse_v);
  }
  char* out0 = out.data() + (b * out.strides[0] + h * out.strides[1] + i0 * out.strides[2]) * int64_t(oisz);
  const bool same_layout = out.dtype == (std::is_same_v<T, float> ? static_cast<int32_t>(DType::f32)
                                                                  : static_cast<int32_t>(DType::f64)) &&
                           out.strides[3] == 1 && out.strides[2] >= p.Ev;
  if (same_layout) {  // straight into the output's rows
    gemm<T>(false, false, rows, p.Ev, p.S, T(1), scores, p.S, v.head(b, h), v.ld, T(0), reinterpret_cast<T*>(out0),
            out.strides[2]);
    return;
  }
  gemm<T>(false, false, rows, p.Ev, p.S, T(1), scores, p.S, v.head(b, h), v.ld, T(0), acc, p.Ev);
  for (int64_t r = 0; r < rows; ++r) {
    char* orow = out0 + r * out.strides[2] * int64_t(oisz);
    for (int64_t e = 0; e < p.Ev; ++e)
      store_from_double(orow + e * out.strides[3] * int64_t(oisz), out.dtype, double(acc[r * p.Ev + e]));
  }
}

// Query rows per block. Where there are fewer heads than threads, each head's rows are cut into as many blocks as
// its share of the threads (threads / heads, rounded down), so that every block runs at once: bert's 4 heads of
// 128 rows on 16 threads give 16 blocks of 32, vit_tiny's 3 heads of 197 give 15 of 40 (rounded up, 6 blocks a
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
// T is the compute type (float or double).
template <class T>
void attend(const Problem& p, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse) {
  const Rows<T> qr = rows_of<T>(q), kr = rows_of<T>(k), vr = rows_of<T>(v);
  const int64_t rows = rows_per_block(p, thread_count());
  const int64_t blocks_per_head = (p.L + rows - 1) / rows, tasks = p.B * p.H * blocks_per_head;
  std::atomic<int64_t> next{0};
  run_parts([&](unsigned, unsigned) {
    std::vector<T> scores(std::size_t(rows * std::max<int64_t>(p.S, 1))), acc(std::size_t(rows * std::max<int64_t>(p.Ev, 1)));
    for (int64_t task = next++; task < tasks; task = next++) {
      const int64_t bh = task / blocks_per_head, i0 = (task % blocks_per_head) * rows;
      attend_block<T>(p, bh / p.H, bh % p.H, i0, std::min(rows, p.L - i0), qr, kr, vr, scores.data(), acc.data(),
                      out, lse);
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
    if (k.sizes[0] != B || v.sizes[0] != B || k.sizes[1] != H || v.sizes[1] != H)
      fail("sdpa: batch and head counts of query, key and value differ");
    if (k.sizes[3] != E || v.sizes[2] != S) fail("sdpa: key/value shapes do not match the query");
    const double sc = scale != nullptr ? *scale : 1.0 / std::sqrt(static_cast<double>(E));

    // ret0: torch allocates empty_like(query) (the meta function does too), i.e. query's strides when it is dense.
    std::vector<int64_t> out_sizes{B, H, L, Ev};
    std::vector<int64_t> out_strides =
        Ev == E ? empty_like_strides(q) : contiguous_strides(out_sizes);
    TensorPtr out(new_tensor(out_sizes, out_strides, dt));
    // ret1: logsumexp [B,H,L], allocated as [B,L,H] contiguous and transposed; the op-math dtype.
    const int32_t lse_dt = f64 ? dt : static_cast<int32_t>(DType::f32);
    const int64_t lse_sizes[3] = {B, H, L};
    const int64_t lse_strides[3] = {L * H, 1, H};
    TensorPtr lse(new_tensor(lse_sizes, lse_strides, lse_dt));

    View4 M{};
    if (mask) M = mask_view(*mask, B, H, L, S);
    const Problem p{B, H, L, S, E, Ev, sc, is_causal != 0, mask ? &M : nullptr,
                    mask && mask->dtype == static_cast<int32_t>(DType::boolean)};
    if (B * H * L > 0) {
      if (f64) attend<double>(p, q, k, v, *out, *lse);
      else attend<float>(p, q, k, v, *out, *lse);
    }
    hand_out(ret0, std::move(out));
    hand_out(ret1, std::move(lse));
  });
}
