// aten::max_pool2d/3d_with_indices, avg_pool2d/3d, _adaptive_avg_pool2d/3d and adaptive_max_pool2d/3d on the CPU,
// with torch's CPU kernels' semantics: windows as torch computes them (ceil mode, padding, dilation), NaN winning a
// max (the last NaN of a window when there are several), indices as flat offsets within each plane, sums of the
// half types kept in float, and the dtypes each torch kernel takes. A channels-last batched input (torch's
// suggest_memory_format) gives a channels-last result from the 2-d pools and max_pool3d, as torch's do; torch's
// avg_pool3d and adaptive 3-d pools give contiguous results. A 2-d pool runs as a 3-d one with a first spatial dim
// of size 1. This file also holds what pooling_fractional.cpp shares (pool_shape.hpp).
#include "aoti_shim.h"
#include "element.hpp"
#include "parallel.hpp"
#include "pool_shape.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

using namespace mpspack::shim;
using namespace mpspack::shim::pool;
using namespace mpspack::shim::typed;

// ---- what the pooling ops share (pool_shape.hpp) ------------------------------------------------------------

namespace mpspack::shim::pool {
namespace {

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
      fail(std::string(op) +
           ": Expected input to have non-zero size for non-batch dimensions, but input has a "
           "zero-size dim " +
           std::to_string(d) + " of " + std::to_string(x.dim()));
  g.N = g.batched ? x.sizes[0] : 1;
  g.C = x.sizes[c];
  for (int i = 0; i < nd; ++i)
    g.in[static_cast<std::size_t>(3 - nd + i)] = x.sizes[c + 1 + static_cast<std::size_t>(i)];
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
  return channels_last_strides(sizes);
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
    fail(std::string(op) + ": " + what + " must either be " + (fallback ? "omitted, " : "") +
         "a single int, or a tuple of " + count_word(nd) + " ints");
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

void require_dtype(const Tensor& t, const char* op, std::initializer_list<DType> allowed) {
  for (DType d : allowed)
    if (t.dtype == static_cast<int32_t>(d)) return;
  fail(std::string(op) + ": not implemented for dtype " + dtype_name(t.dtype));
}

void for_planes(int64_t planes, int64_t work_per_plane, const std::function<void(int64_t, int64_t)>& f) {
  constexpr int64_t kSerialWork = 1 << 12;  // small pools stay on the calling thread
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

// ---- max and mean over windows -----------------------------------------------------------------------------

namespace {

template <class V>
V lowest() {
  if constexpr (std::is_floating_point_v<V>) return -std::numeric_limits<V>::infinity();
  else return std::numeric_limits<V>::lowest();
}

int64_t window_volume(const Windows& w) {
  int64_t v = 1;
  for (const auto& d : w) v *= static_cast<int64_t>(d.size()) * std::max<int64_t>(d.empty() ? 1 : d[0].count(), 1);
  return v;
}

// The max of one window of plane `ip` and its flat offset in the plane (torch's: the first position when every
// value is -inf, NaN always taking the place).
template <class T>
std::pair<decltype(load(static_cast<const T*>(nullptr))), int64_t> window_max(const T* ip, const PlaneView& v,
                                                                              const Dims& in, const Window* w) {
  using V = decltype(load(static_cast<const T*>(nullptr)));
  V best = lowest<V>();
  int64_t at = (w[0].start * in[1] + w[1].start) * in[2] + w[2].start;
  for (int64_t z = w[0].start; z < w[0].end; z += w[0].step)
    for (int64_t y = w[1].start; y < w[1].end; y += w[1].step)
      for (int64_t x = w[2].start; x < w[2].end; x += w[2].step) {
        const V val = load(ip + z * v.s[0] + y * v.s[1] + x * v.s[2]);
        if (val > best || is_nan(val)) {
          best = val;
          at = (z * in[1] + y) * in[2] + x;
        }
      }
  return {best, at};
}

}  // namespace

namespace mpspack::shim::pool {

// Max over each window of `w` into out (x's dtype) and idx (int64), both laid out as g's results.
void max_over_windows(const Tensor& x, const Geometry& g, const Windows& w, Tensor& out, Tensor& idx) {
  const PlaneView xv = plane_view(x, g), ov = plane_view(out, g), iv = plane_view(idx, g);
  visit_dtype(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = reinterpret_cast<const T*>(x.data());
    T* dst = reinterpret_cast<T*>(out.data());
    int64_t* ind = reinterpret_cast<int64_t*>(idx.data());
    for_planes(g.planes(), window_volume(w), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T* ip = src + xv.base(p);
        for (std::size_t a = 0; a < w[0].size(); ++a)
          for (std::size_t b = 0; b < w[1].size(); ++b)
            for (std::size_t c = 0; c < w[2].size(); ++c) {
              const Window win[3] = {w[0][a], w[1][b], w[2][c]};
              const auto [best, at] = window_max(ip, xv, g.in, win);
              const int64_t ia = static_cast<int64_t>(a), ib = static_cast<int64_t>(b), ic = static_cast<int64_t>(c);
              store(dst + ov.base(p) + ia * ov.s[0] + ib * ov.s[1] + ic * ov.s[2], best);
              ind[iv.base(p) + ia * iv.s[0] + ib * iv.s[1] + ic * iv.s[2]] = at;
            }
      }
    });
  });
}

}  // namespace mpspack::shim::pool

namespace {

// How an average is divided: by divisor_override when set, else by the window's size with or without its
// padding; adaptive pools divide by each dim's extent in turn, as torch's kernel does.
struct Divisor {
  int64_t override_by = 0;
  bool include_pad = true;
  bool per_dim = false;
};

template <class T>
auto window_mean(const T* ip, const PlaneView& v, const Window* w, const Divisor& div) {
  using A = typename Acc<T>::type;
  A sum = A(0);
  for (int64_t z = w[0].start; z < w[0].end; ++z)
    for (int64_t y = w[1].start; y < w[1].end; ++y)
      for (int64_t x = w[2].start; x < w[2].end; ++x) sum += A(load(ip + z * v.s[0] + y * v.s[1] + x * v.s[2]));
  if (div.per_dim) return A(sum / w[0].count() / w[1].count() / w[2].count());
  int64_t factor = div.override_by;
  if (factor == 0)
    factor = div.include_pad ? w[0].padded * w[1].padded * w[2].padded : w[0].count() * w[1].count() * w[2].count();
  return A(sum / factor);
}

void mean_over_windows(const Tensor& x, const Geometry& g, const Windows& w, const Divisor& div, Tensor& out) {
  const PlaneView xv = plane_view(x, g), ov = plane_view(out, g);
  visit_dtype(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = typename Acc<T>::type;
    const T* src = reinterpret_cast<const T*>(x.data());
    T* dst = reinterpret_cast<T*>(out.data());
    for_planes(g.planes(), window_volume(w), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p)
        for (std::size_t a = 0; a < w[0].size(); ++a)
          for (std::size_t b = 0; b < w[1].size(); ++b)
            for (std::size_t c = 0; c < w[2].size(); ++c) {
              const Window win[3] = {w[0][a], w[1][b], w[2][c]};
              const bool empty = win[0].count() == 0 || win[1].count() == 0 || win[2].count() == 0;
              const A r = empty ? A(0) : window_mean(src + xv.base(p), xv, win, div);
              store(dst + ov.base(p) + static_cast<int64_t>(a) * ov.s[0] + static_cast<int64_t>(b) * ov.s[1] +
                        static_cast<int64_t>(c) * ov.s[2],
                    r);
            }
    });
  });
}

const char* const kArities[] = {"", "", "2d", "3d"};

// The kernel, stride, padding and dilation of a max or avg pool, each per spatial dim.
struct PoolParams {
  Dims k, s, p, d{1, 1, 1};
  bool ceil_mode = false;
};

struct ListArg {
  const int64_t* v;
  int64_t len;
};

PoolParams pool_params(const char* op, int nd, ListArg k, ListArg s, ListArg p, const ListArg* d, bool ceil_mode) {
  PoolParams r;
  r.k = expand_list(op, "kernel_size", k.v, k.len, nd, nullptr);
  r.s = expand_list(op, "stride", s.v, s.len, nd, &r.k);
  r.p = expand_list(op, "padding", p.v, p.len, nd, nullptr);
  if (d != nullptr) r.d = expand_list(op, "dilation", d->v, d->len, nd, nullptr);
  if (nd == 2) r.p[0] = 0;
  r.ceil_mode = ceil_mode;
  for (int i = 3 - nd; i < 3; ++i) {
    const auto j = static_cast<std::size_t>(i);
    // torch narrows these to int; the limit also keeps the window arithmetic from overflowing.
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
    if (r.k[j] > kMax || r.s[j] > kMax || r.p[j] > kMax || r.d[j] > kMax)
      fail(std::string(op) + ": kernel, stride, padding and dilation must fit in int32");
    if (r.k[j] <= 0) fail(std::string(op) + ": kernel size should be greater than zero, but got " + joined(r.k, nd));
    if (r.s[j] <= 0) fail(std::string(op) + ": stride should be greater than zero, but got " + joined(r.s, nd));
    if (r.d[j] <= 0) fail(std::string(op) + ": dilation should be greater than zero, but got " + joined(r.d, nd));
  }
  return r;
}

// Output sizes of a strided pool; fails as torch does when one is below 1.
Dims pooled_dims(const char* op, const Geometry& g, const PoolParams& pp) {
  Dims out{1, 1, 1};
  for (int i = 3 - g.nd; i < 3; ++i) {
    const auto j = static_cast<std::size_t>(i);
    try {
      out[j] = pooled_size(g.in[j], pp.k[j], pp.p[j], pp.s[j], pp.d[j], pp.ceil_mode);
    } catch (const ShimError& e) { fail(std::string(op) + ": " + e.what()); }
  }
  for (int i = 3 - g.nd; i < 3; ++i)
    if (out[static_cast<std::size_t>(i)] < 1)
      fail(std::string(op) + ": Given input size: (" + std::to_string(g.C) + "x" + joined(g.in, g.nd) +
           "). Calculated output size: (" + std::to_string(g.C) + "x" + joined(out, g.nd) +
           "). Output size is too small");
  return out;
}

// Windows of a max pool (dilated, starting at the first position inside the input) or of an avg pool
// (contiguous, clamped to the input, `padded` counting the padding).
Windows strided_windows(const Geometry& g, const PoolParams& pp, const Dims& out, bool avg) {
  Windows w;
  for (int i = 0; i < 3; ++i) {
    const auto j = static_cast<std::size_t>(i);
    if (i < 3 - g.nd) {
      w[j] = unit_windows();
      continue;
    }
    for (int64_t o = 0; o < out[j]; ++o) {
      Window win;
      int64_t start = o * pp.s[j] - pp.p[j];
      if (avg) {
        const int64_t end = std::min(start + pp.k[j], g.in[j] + pp.p[j]);
        win = Window{std::max<int64_t>(start, 0), std::min(end, g.in[j]), 1, end - start};
      } else {
        const int64_t end = std::min(start + (pp.k[j] - 1) * pp.d[j] + 1, g.in[j]);
        while (start < 0) start += pp.d[j];
        win = Window{start, end, pp.d[j], 0};
      }
      w[j].push_back(win);
    }
  }
  return w;
}

// torch's adaptive windows: [floor(o*in/out), ceil((o+1)*in/out)).
Windows adaptive_windows(const Geometry& g, const Dims& out) {
  Windows w;
  for (int i = 0; i < 3; ++i) {
    const auto j = static_cast<std::size_t>(i);
    if (i < 3 - g.nd) {
      w[j] = unit_windows();
      continue;
    }
    for (int64_t o = 0; o < out[j]; ++o) {
      const int64_t start = o * g.in[j] / out[j], end = ((o + 1) * g.in[j] + out[j] - 1) / out[j];
      w[j].push_back(Window{start, end, 1, end - start});
    }
  }
  return w;
}

void max_pool_op(int nd, const Tensor& x, ListArg k, ListArg s, ListArg p, ListArg d, bool ceil_mode,
                 AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  const std::string op = std::string("max_pool") + kArities[nd];
  require_cpu(x, op.c_str());
  if (ret0 == nullptr || ret1 == nullptr) fail(op + ": ret0/ret1 is null");
  const PoolParams pp = pool_params(op.c_str(), nd, k, s, p, &d, ceil_mode);
  // torch's max pools bound the padding by half the kernel, and pooling_output_shape by half the dilated kernel.
  for (int i = 3 - nd; i < 3; ++i)
    if (pp.p[static_cast<std::size_t>(i)] > pp.k[static_cast<std::size_t>(i)] / 2)
      fail(op + ": pad should be smaller than or equal to half of kernel size, but got pad " + joined(pp.p, nd) +
           " and kernel " + joined(pp.k, nd));
  const Geometry g = input_geometry(x, nd, op.c_str(), NonEmpty::non_batch);
  require_dtype(
      x, op.c_str(),
      {DType::f32, DType::f64, DType::f16, DType::bf16, DType::u8, DType::i8, DType::i16, DType::i32, DType::i64});
  const Dims out = pooled_dims(op.c_str(), g, pp);
  const auto sizes = out_sizes(g, out);
  const auto strides = out_strides(sizes, g.channels_last);
  TensorPtr values(new_tensor(sizes, strides, x.dtype));
  TensorPtr indices(new_tensor(sizes, strides, static_cast<int32_t>(DType::i64)));
  max_over_windows(x, g, strided_windows(g, pp, out, false), *values, *indices);
  *ret0 = values.release();
  *ret1 = indices.release();
}

void avg_pool_op(int nd, const Tensor& x, ListArg k, ListArg s, ListArg p, bool ceil_mode, bool count_include_pad,
                 const int64_t* divisor_override, AtenTensorHandle* ret0) {
  const std::string op = std::string("avg_pool") + kArities[nd];
  require_cpu(x, op.c_str());
  if (ret0 == nullptr) fail(op + ": ret0 is null");
  const PoolParams pp = pool_params(op.c_str(), nd, k, s, p, nullptr, ceil_mode);
  if (divisor_override != nullptr && *divisor_override == 0) fail(op + ": divisor must be not zero");
  const Geometry g = input_geometry(x, nd, op.c_str(), NonEmpty::non_batch);
  if (nd == 2) require_dtype(x, op.c_str(), {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i64});
  else require_dtype(x, op.c_str(), {DType::f32, DType::f64, DType::i64});
  // torch's pool3d_shape_check for avg_pool3d: the input may not be smaller than the kernel.
  if (nd == 3 && (g.in[0] < pp.k[0] || g.in[1] < pp.k[1] || g.in[2] < pp.k[2]))
    fail(op + ": input image (" + joined(g.in, 3) + ") smaller than kernel size (" + joined(pp.k, 3) + ")");
  const Dims out = pooled_dims(op.c_str(), g, pp);
  const auto sizes = out_sizes(g, out);
  // torch's avg_pool3d gives a contiguous result whatever the input's layout.
  TensorPtr result(new_tensor(sizes, out_strides(sizes, nd == 2 && g.channels_last), x.dtype));
  const Divisor div{divisor_override != nullptr ? *divisor_override : 0, count_include_pad, false};
  mean_over_windows(x, g, strided_windows(g, pp, out, true), div, *result);
  *ret0 = result.release();
}

// The output sizes of an adaptive pool: nd values, none negative.
Dims adaptive_dims(const std::string& op, int nd, const int64_t* output_size, int64_t len) {
  if (len != nd || output_size == nullptr)
    fail(op + ": output_size must have " + std::to_string(nd) + " values, got " + std::to_string(len));
  Dims out{1, 1, 1};
  for (int i = 0; i < nd; ++i) {
    if (output_size[i] < 0)
      fail(op + ": elements of output_size must be greater than or equal to 0 but received " +
           std::to_string(output_size[i]));
    out[static_cast<std::size_t>(3 - nd + i)] = output_size[i];
  }
  return out;
}

void adaptive_pool_op(int nd, bool max, const Tensor& x, ListArg size, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  const std::string op = std::string(max ? "adaptive_max_pool" : "adaptive_avg_pool") + kArities[nd];
  require_cpu(x, op.c_str());
  if (ret0 == nullptr || (max && ret1 == nullptr)) fail(op + ": a result pointer is null");
  const Dims out = adaptive_dims(op, nd, size.v, size.len);
  const Geometry g = input_geometry(x, nd, op.c_str(), max || nd == 3 ? NonEmpty::after_first : NonEmpty::spatial);
  require_dtype(x, op.c_str(), {DType::f32, DType::f64, DType::f16, DType::bf16});
  const auto sizes = out_sizes(g, out);
  // torch's adaptive 3-d pools give contiguous results whatever the input's layout.
  const auto strides = out_strides(sizes, nd == 2 && g.channels_last);
  TensorPtr result(new_tensor(sizes, strides, x.dtype));
  if (max) {
    TensorPtr indices(new_tensor(sizes, strides, static_cast<int32_t>(DType::i64)));
    max_over_windows(x, g, adaptive_windows(g, out), *result, *indices);
    *ret1 = indices.release();
  } else {
    mean_over_windows(x, g, adaptive_windows(g, out), Divisor{0, false, true}, *result);
  }
  *ret0 = result.release();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_max_pool2d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                      int64_t kernel_size_len_, const int64_t* stride,
                                                      int64_t stride_len_, const int64_t* padding, int64_t padding_len_,
                                                      const int64_t* dilation, int64_t dilation_len_, int32_t ceil_mode,
                                                      AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    max_pool_op(2, deref(self, "self"), {kernel_size, kernel_size_len_}, {stride, stride_len_}, {padding, padding_len_},
                {dilation, dilation_len_}, ceil_mode != 0, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_max_pool3d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                      int64_t kernel_size_len_, const int64_t* stride,
                                                      int64_t stride_len_, const int64_t* padding, int64_t padding_len_,
                                                      const int64_t* dilation, int64_t dilation_len_, int32_t ceil_mode,
                                                      AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    max_pool_op(3, deref(self, "self"), {kernel_size, kernel_size_len_}, {stride, stride_len_}, {padding, padding_len_},
                {dilation, dilation_len_}, ceil_mode != 0, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_avg_pool2d(AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_,
                                         const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                         int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad,
                                         int64_t* divisor_override, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    avg_pool_op(2, deref(self, "self"), {kernel_size, kernel_size_len_}, {stride, stride_len_}, {padding, padding_len_},
                ceil_mode != 0, count_include_pad != 0, divisor_override, ret0);
  });
}

AOTITorchError aoti_torch_cpu_avg_pool3d(AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_,
                                         const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                         int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad,
                                         int64_t* divisor_override, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    avg_pool_op(3, deref(self, "self"), {kernel_size, kernel_size_len_}, {stride, stride_len_}, {padding, padding_len_},
                ceil_mode != 0, count_include_pad != 0, divisor_override, ret0);
  });
}

AOTITorchError aoti_torch_cpu__adaptive_avg_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                   int64_t output_size_len_, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    adaptive_pool_op(2, false, deref(self, "self"), {output_size, output_size_len_}, ret0, nullptr);
  });
}

AOTITorchError aoti_torch_cpu__adaptive_avg_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                   int64_t output_size_len_, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    adaptive_pool_op(3, false, deref(self, "self"), {output_size, output_size_len_}, ret0, nullptr);
  });
}

AOTITorchError aoti_torch_cpu_adaptive_max_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                  int64_t output_size_len_, AtenTensorHandle* ret0,
                                                  AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    adaptive_pool_op(2, true, deref(self, "self"), {output_size, output_size_len_}, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_adaptive_max_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                  int64_t output_size_len_, AtenTensorHandle* ret0,
                                                  AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    adaptive_pool_op(3, true, deref(self, "self"), {output_size, output_size_len_}, ret0, ret1);
  });
}

}  // extern "C"
