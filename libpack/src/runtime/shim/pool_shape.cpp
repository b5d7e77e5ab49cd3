// The shape arithmetic and loops the CPU pooling ops share (pool_shape.hpp).
#include "pool_shape.hpp"

#include "parallel.hpp"

#include <algorithm>

namespace mpspack::shim::pool {
namespace {

// torch's is_channels_last_strides_2d/3d: C innermost, then the spatial dims from the last, N outermost, with
// ties between size-1 dims read as contiguous.
bool strides_like_channels_last(const Tensor& t) {
  static constexpr int k4[] = {1, 3, 2, 0};
  static constexpr int k5[] = {1, 4, 3, 2, 0};
  const std::span<const int> order = t.dim() == 4 ? std::span<const int>(k4) : std::span<const int>(k5);
  int64_t min = 0;
  for (int d : order) {
    const auto i = static_cast<std::size_t>(d);
    if (t.sizes[i] == 0 || t.strides[i] < min) return false;
    if (d == 0 && min == t.strides[1]) return false;
    min = t.strides[i];
    if (t.sizes[i] > 1) min *= t.sizes[i];
  }
  return true;
}

const char* count_word(int nd) { return nd == 2 ? "two" : "three"; }

}  // namespace

Geometry input_geometry(const Tensor& x, int nd, const char* op, NonEmpty rule) {
  Geometry g;
  g.nd = nd;
  if (x.dim() != nd + 1 && x.dim() != nd + 2)
    fail(std::string(op) + ": Expected " + std::to_string(nd + 1) + "D or " + std::to_string(nd + 2) +
         "D (batch mode) tensor with optional 0 dim batch size for input, but got a tensor of " +
         std::to_string(x.dim()) + " dims");
  g.batched = x.dim() == nd + 2;
  const std::size_t c = g.batched ? 1 : 0;
  const std::size_t first = rule == NonEmpty::non_batch ? c : rule == NonEmpty::after_first ? 1 : c + 1;
  for (std::size_t d = first; d < x.sizes.size(); ++d)
    if (x.sizes[d] == 0)
      fail(std::string(op) + ": Expected input to have non-zero size for non-batch dimensions, but input has a "
                             "zero-size dim " + std::to_string(d) + " of " + std::to_string(x.dim()));
  g.N = g.batched ? x.sizes[0] : 1;
  g.C = x.sizes[c];
  for (int i = 0; i < nd; ++i) g.in[static_cast<std::size_t>(3 - nd + i)] = x.sizes[c + 1 + static_cast<std::size_t>(i)];
  g.channels_last = g.batched && strides_like_channels_last(x);
  return g;
}

std::vector<int64_t> out_sizes(const Geometry& g, const Dims& out) {
  std::vector<int64_t> s;
  if (g.batched) s.push_back(g.N);
  s.push_back(g.C);
  for (int i = 3 - g.nd; i < 3; ++i) s.push_back(out[static_cast<std::size_t>(i)]);
  return s;
}

std::vector<int64_t> out_strides(const std::vector<int64_t>& sizes, bool channels_last) {
  if (!channels_last || (sizes.size() != 4 && sizes.size() != 5)) return contiguous_strides(sizes);
  // torch's get_channels_last_strides: plain products, size-0 dims included.
  std::vector<int64_t> st(sizes.size());
  int64_t step = 1;
  st[1] = step;
  step *= sizes[1];
  for (std::size_t d = sizes.size() - 1; d >= 2; --d) {
    st[d] = step;
    step *= sizes[d];
  }
  st[0] = step;
  return st;
}

PlaneView plane_view(const Tensor& t, const Geometry& g) {
  PlaneView v;
  v.C = g.C;
  const std::size_t c = g.batched ? 1 : 0;
  v.sN = g.batched ? t.strides[0] : 0;
  v.sC = t.strides[c];
  for (int i = 0; i < g.nd; ++i)
    v.s[static_cast<std::size_t>(3 - g.nd + i)] = t.strides[c + 1 + static_cast<std::size_t>(i)];
  return v;
}

Dims expand_list(const char* op, const char* what, const int64_t* v, int64_t len, int nd, const Dims* fallback) {
  if (len == 0 && fallback != nullptr) return *fallback;
  if ((len != 1 && len != nd) || (len > 0 && v == nullptr))
    fail(std::string(op) + ": " + what + " must either be " + (fallback ? "omitted, " : "") + "a single int, or a tuple of " +
         count_word(nd) + " ints");
  Dims d{1, 1, 1};
  for (int i = 0; i < nd; ++i) d[static_cast<std::size_t>(3 - nd + i)] = v[len == 1 ? 0 : i];
  return d;
}

int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  if (pad < 0) fail("pad must be non-negative, but got pad: " + std::to_string(pad));
  if (pad > ((k - 1) * dilation + 1) / 2)
    fail("pad should be at most half of effective kernel size, but got pad=" + std::to_string(pad) +
         ", kernel_size=" + std::to_string(k) + " and dilation=" + std::to_string(dilation));
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  const int64_t q = num / stride - ((num % stride != 0 && num < 0) ? 1 : 0);  // division rounding down
  int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

std::string joined(const Dims& v, int nd) {
  std::string s;
  for (int i = 3 - nd; i < 3; ++i) s += (i > 3 - nd ? "x" : "") + std::to_string(v[static_cast<std::size_t>(i)]);
  return s;
}

void require_float(const Tensor& t, const char* op, bool int64_ok) {
  switch (static_cast<DType>(t.dtype)) {
    case DType::f32: case DType::f64: case DType::f16: case DType::bf16: return;
    case DType::i64: if (int64_ok) return; break;
    default: break;
  }
  fail(std::string(op) + ": not implemented for dtype " + dtype_name(t.dtype));
}

void for_planes(int64_t planes, int64_t work_per_plane, const std::function<void(int64_t, int64_t)>& f) {
  constexpr int64_t kSerialWork = 1 << 15;  // below this, starting threads costs more than the loop
  if (planes <= 1 || planes * work_per_plane < kSerialWork) {
    f(0, planes);
    return;
  }
  run_parts([&](unsigned t, unsigned parts) {
    const int64_t lo = planes * t / parts, hi = planes * (t + 1) / parts;
    if (lo < hi) f(lo, hi);
  });
}

}  // namespace mpspack::shim::pool
