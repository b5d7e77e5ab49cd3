// aten::max_pool2d/3d_with_indices, avg_pool2d/3d, _adaptive_avg_pool2d/3d and adaptive_max_pool2d/3d on the CPU,
// with torch's CPU kernels' semantics: windows as torch computes them (ceil mode, padding, dilation), NaN winning a
// max (the last NaN of a window when there are several), indices as flat offsets within each plane, sums of the
// half types kept in float, and channels-last results for channels-last batched inputs (torch's
// suggest_memory_format). A 2-d pool runs as a 3-d one with a first spatial dim of size 1 (pool_shape.hpp).
#include "aoti_shim.h"
#include "element.hpp"
#include "pool_shape.hpp"
#include "tensor.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

using namespace mpspack::shim;
using namespace mpspack::shim::pool;
using namespace mpspack::shim::typed;

namespace {

template <class V>
bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
  else return false;
}

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
                        static_cast<int64_t>(c) * ov.s[2], r);
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
    } catch (const ShimError& e) {
      fail(std::string(op) + ": " + e.what());
    }
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
  const Geometry g = input_geometry(x, nd, op.c_str(), NonEmpty::non_batch);
  require_float(x, op.c_str());
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
  require_float(x, op.c_str(), true);
  // torch's pool3d_shape_check for avg_pool3d: the input may not be smaller than the kernel.
  if (nd == 3 && (g.in[0] < pp.k[0] || g.in[1] < pp.k[1] || g.in[2] < pp.k[2]))
    fail(op + ": input image (" + joined(g.in, 3) + ") smaller than kernel size (" + joined(pp.k, 3) + ")");
  const Dims out = pooled_dims(op.c_str(), g, pp);
  const auto sizes = out_sizes(g, out);
  TensorPtr result(new_tensor(sizes, out_strides(sizes, g.channels_last), x.dtype));
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

void adaptive_pool_op(int nd, bool max, const Tensor& x, ListArg size, AtenTensorHandle* ret0,
                      AtenTensorHandle* ret1) {
  const std::string op = std::string(max ? "adaptive_max_pool" : "adaptive_avg_pool") + kArities[nd];
  require_cpu(x, op.c_str());
  if (ret0 == nullptr || (max && ret1 == nullptr)) fail(op + ": a result pointer is null");
  const Dims out = adaptive_dims(op, nd, size.v, size.len);
  const Geometry g = input_geometry(x, nd, op.c_str(), max || nd == 3 ? NonEmpty::after_first : NonEmpty::spatial);
  require_float(x, op.c_str());
  const auto sizes = out_sizes(g, out);
  const auto strides = out_strides(sizes, g.channels_last);
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
                                                      int64_t stride_len_, const int64_t* padding,
                                                      int64_t padding_len_, const int64_t* dilation,
                                                      int64_t dilation_len_, int32_t ceil_mode,
                                                      AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    max_pool_op(2, deref(self, "self"), {kernel_size, kernel_size_len_}, {stride, stride_len_},
                {padding, padding_len_}, {dilation, dilation_len_}, ceil_mode != 0, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_max_pool3d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                      int64_t kernel_size_len_, const int64_t* stride,
                                                      int64_t stride_len_, const int64_t* padding,
                                                      int64_t padding_len_, const int64_t* dilation,
                                                      int64_t dilation_len_, int32_t ceil_mode,
                                                      AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    max_pool_op(3, deref(self, "self"), {kernel_size, kernel_size_len_}, {stride, stride_len_},
                {padding, padding_len_}, {dilation, dilation_len_}, ceil_mode != 0, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_avg_pool2d(AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_,
                                         const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                         int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad,
                                         int64_t* divisor_override, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    avg_pool_op(2, deref(self, "self"), {kernel_size, kernel_size_len_}, {stride, stride_len_},
                {padding, padding_len_}, ceil_mode != 0, count_include_pad != 0, divisor_override, ret0);
  });
}

AOTITorchError aoti_torch_cpu_avg_pool3d(AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_,
                                         const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                         int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad,
                                         int64_t* divisor_override, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    avg_pool_op(3, deref(self, "self"), {kernel_size, kernel_size_len_}, {stride, stride_len_},
                {padding, padding_len_}, ceil_mode != 0, count_include_pad != 0, divisor_override, ret0);
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
