// aten::_scaled_dot_product_flash_attention_for_cpu: softmax(q k^T * scale + mask) v, one query row at a time,
// accumulated in double (float64 inputs) or float-in-double (everything else), with torch's output layouts.
#include "aoti_shim.h"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
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

View4 view4(const Tensor& t) {
  return {t.data(), t.dtype, t.itemsize(), {t.strides[0], t.strides[1], t.strides[2], t.strides[3]}};
}

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

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    const Tensor& q = deref(query, "query");
    const Tensor& k = deref(key, "key");
    const Tensor& v = deref(value, "value");
    const Tensor* mask = (attn_mask != nullptr && *attn_mask != nullptr) ? *attn_mask : nullptr;
    if (ret0 == nullptr || ret1 == nullptr) fail("ret0/ret1 is null");
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

    const View4 Q = view4(q), K = view4(k), V = view4(v);
    View4 M{};
    const bool bool_mask = mask && mask->dtype == static_cast<int32_t>(DType::boolean);
    if (mask) M = mask_view(*mask, B, H, L, S);
    const std::size_t oisz = out->itemsize(), lisz = lse->itemsize();
    const double ninf = -std::numeric_limits<double>::infinity();

    std::vector<double> qrow(static_cast<std::size_t>(E)), scores(static_cast<std::size_t>(S)),
        acc(static_cast<std::size_t>(Ev));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < L; ++i) {
          for (int64_t e = 0; e < E; ++e) qrow[e] = Q.at(b, h, i, e);
          double mx = ninf;
          for (int64_t j = 0; j < S; ++j) {
            double s;
            if (is_causal && j > i) {  // top-left aligned causal mask, as torch's
              s = ninf;
            } else {
              double dot = 0;
              for (int64_t e = 0; e < E; ++e) dot += qrow[e] * K.at(b, h, j, e);
              s = dot * sc;
              if (mask) {
                const double m = M.at(b, h, i, j);
                if (bool_mask) {
                  if (m == 0.0) s = ninf;
                } else {
                  s += m;
                }
              }
            }
            scores[j] = s;
            if (s > mx) mx = s;
          }
          std::fill(acc.begin(), acc.end(), 0.0);
          double sum = 0, lse_v = ninf;
          if (mx != ninf) {  // a row with every key masked gives zeros (and logsumexp -inf)
            for (int64_t j = 0; j < S; ++j) {
              if (scores[j] == ninf) continue;
              const double p = std::exp(scores[j] - mx);
              sum += p;
              for (int64_t e = 0; e < Ev; ++e) acc[e] += p * V.at(b, h, j, e);
            }
            for (int64_t e = 0; e < Ev; ++e) acc[e] /= sum;
            lse_v = mx + std::log(sum);
          }
          char* orow = out->data() + (b * out_strides[0] + h * out_strides[1] + i * out_strides[2]) *
                                         static_cast<int64_t>(oisz);
          for (int64_t e = 0; e < Ev; ++e)
            store_from_double(orow + e * out_strides[3] * static_cast<int64_t>(oisz), dt, acc[e]);
          store_from_double(lse->data() + (b * lse_strides[0] + h * lse_strides[1] + i * lse_strides[2]) *
                                              static_cast<int64_t>(lisz),
                            lse_dt, lse_v);
        }
    *ret0 = out.release();
    *ret1 = lse.release();
  });
}
