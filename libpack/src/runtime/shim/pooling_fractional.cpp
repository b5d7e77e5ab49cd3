// aten::fractional_max_pool2d/3d and max_unpool2d/3d on the CPU. Fractional pooling takes its random samples as a
// tensor, so it is deterministic: the windows are torch's interval sequences for those samples (computed in the
// input's float type, float for the half types), then the max kernel of pooling.cpp. Unpooling scatters each value
// to its recorded flat offset in a zeroed plane, after checking every offset.
#include "aoti_shim.h"
#include "element.hpp"
#include "pool_shape.hpp"
#include "tensor.hpp"

#include <cstring>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::pool;
using namespace mpspack::shim::typed;

namespace {

const char* const kArities[] = {"", "", "2d", "3d"};

// x truncated to an integer as C++ does; a NaN or a value past +-2^52 (whose conversion would be undefined or
// meaningless) throws ShimError.
template <class V>
int64_t truncated(V x) {
  if (!(x > V(-4.5e15) && x < V(4.5e15))) fail("random sample gives a window start of " + std::to_string(x));
  return static_cast<int64_t>(x);
}

// torch's interval sequence: the start of each of `out` windows of `pool` in [0, in), from one sample in [0, 1).
template <class V>
std::vector<Window> fractional_windows(V sample, int64_t in, int64_t out, int64_t pool) {
  std::vector<int64_t> seq(static_cast<std::size_t>(out));
  if (out > 1) {
    const V alpha = static_cast<V>(in - pool) / static_cast<V>(out - 1);
    for (int64_t i = 0; i < out - 1; ++i)
      seq[static_cast<std::size_t>(i)] = truncated((static_cast<V>(i) + sample) * alpha) - truncated(sample * alpha);
  }
  if (out > 0) seq.back() = in - pool;
  std::vector<Window> w;
  for (int64_t s : seq) w.push_back(Window{s, s + pool, 1, pool});
  return w;
}

// The windows of plane p: samples [p][0..nd) name the dims in order (for 2-d: W then H, as torch reads them).
Windows plane_windows(const Geometry& g, const Tensor& samples, int64_t p, const Dims& k, const Dims& out,
                      const std::string& op) {
  Windows w;
  w[0] = unit_windows();
  const char* base = samples.data();
  const std::size_t item = samples.itemsize();
  for (int i = 0; i < g.nd; ++i) {
    const int64_t off = (p / g.C) * samples.strides[0] + (p % g.C) * samples.strides[1] + i * samples.strides[2];
    const double sample = load_as_double(base + off * static_cast<int64_t>(item), samples.dtype);
    const auto j = static_cast<std::size_t>(g.nd == 3 ? i : 2 - i);
    try {
      if (samples.dtype == static_cast<int32_t>(DType::f64))
        w[j] = fractional_windows<double>(sample, g.in[j], out[j], k[j]);
      else w[j] = fractional_windows<float>(static_cast<float>(sample), g.in[j], out[j], k[j]);
    } catch (const ShimError& e) { fail(op + ": plane " + std::to_string(p) + ": " + e.what()); }
    for (const Window& win : w[j])
      if (win.start < 0 || win.end > g.in[j])
        fail(op + ": random sample " + std::to_string(sample) + " of plane " + std::to_string(p) +
             " puts a window outside the input");
  }
  return w;
}

void check_samples(const std::string& op, const Geometry& g, const Tensor& x, const Tensor& samples) {
  require_cpu(samples, op.c_str());
  if (samples.dtype != x.dtype) fail(op + ": random_samples must have the input's dtype " + dtype_name(x.dtype));
  // torch's rule: at least one row of samples per batch entry (the rows past the batch are not read).
  if (samples.dim() != 3 || samples.sizes[0] < g.N || samples.sizes[1] != g.C || samples.sizes[2] != g.nd)
    fail(op + ": random_samples must have sizes [n >= " + std::to_string(g.N) + ", " + std::to_string(g.C) + ", " +
         std::to_string(g.nd) + "]");
}

// Checks the sizes and returns the output's spatial sizes.
Dims fractional_dims(const std::string& op, const Geometry& g, const Dims& k, const int64_t* output_size, int64_t len) {
  static const char* const kNames[] = {"time", "height", "width"};
  if (len != g.nd || output_size == nullptr) fail(op + ": output_size must either be a single Int or tuple of Ints");
  Dims out{1, 1, 1};
  for (int i = 3 - g.nd; i < 3; ++i) {
    const auto j = static_cast<std::size_t>(i);
    out[j] = output_size[i - (3 - g.nd)];
    if (k[j] < 0 || out[j] < 0)
      fail(op + ": kernel_size and output_size may not be negative, got " + joined(k, g.nd) + " and " +
           joined(out, g.nd));
    // torch's bound is one tighter for 3-d pools than for 2-d ones.
    if (k[j] > g.in[j] || out[j] > g.in[j] + 1 || out[j] + k[j] - 1 > g.in[j] - (g.nd == 3 ? 1 : 0))
      fail(op + ": pool " + kNames[i] + " " + std::to_string(k[j]) + " too large relative to input " + kNames[i] + " " +
           std::to_string(g.in[j]));
  }
  return out;
}

void fractional_op(int nd, const Tensor& x, const int64_t* kernel, int64_t kernel_len, const int64_t* output_size,
                   int64_t output_len, const Tensor& samples, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  const std::string op = std::string("fractional_max_pool") + kArities[nd];
  require_cpu(x, op.c_str());
  if (ret0 == nullptr || ret1 == nullptr) fail(op + ": ret0/ret1 is null");
  if (kernel_len != nd || kernel == nullptr) fail(op + ": kernel_size must either be a single Int or tuple of Ints");
  const Geometry g = input_geometry(x, nd, op.c_str(), NonEmpty::after_first);
  require_dtype(x, op.c_str(), {DType::f32, DType::f64, DType::f16, DType::bf16});
  Dims k{1, 1, 1};
  for (int i = 0; i < nd; ++i) k[static_cast<std::size_t>(3 - nd + i)] = kernel[i];
  const Dims out = fractional_dims(op, g, k, output_size, output_len);
  check_samples(op, g, x, samples);
  const auto sizes = out_sizes(g, out);
  const auto strides = contiguous_strides(sizes);  // torch's fractional pools ignore channels-last
  TensorPtr values(new_tensor(sizes, strides, x.dtype));
  TensorPtr indices(new_tensor(sizes, strides, static_cast<int32_t>(DType::i64)));
  std::vector<Windows> windows;  // each plane has its own; computed first, so a bad sample fails before any work
  for (int64_t p = 0; p < g.planes(); ++p) windows.push_back(plane_windows(g, samples, p, k, out, op));
  Geometry one = g;  // a view of one plane, whose offsets are those of plane p
  one.N = one.C = 1;
  for_planes(g.planes(), out[0] * out[1] * out[2] * k[0] * k[1] * k[2], [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      Tensor xin = x, vout = *values, iout = *indices;
      xin.storage_offset += plane_view(x, g).base(p);
      vout.storage_offset += plane_view(*values, g).base(p);
      iout.storage_offset += plane_view(*indices, g).base(p);
      max_over_windows(xin, one, windows[static_cast<std::size_t>(p)], vout, iout);
    }
  });
  *ret0 = values.release();
  *ret1 = indices.release();
}

}  // namespace

namespace {

// max_unpool's arguments: output spatial sizes (and for 3-d the stride and padding torch checks but does not use).
Dims unpool_dims(const std::string& op, int nd, const int64_t* size, int64_t len) {
  if (len != nd || size == nullptr)
    fail(op + ": There should be exactly " + std::to_string(nd) + " elements in output_size, but got " +
         std::to_string(len) + " elements.");
  Dims out{1, 1, 1};
  for (int i = 0; i < nd; ++i) {
    if (size[i] < 0) fail(op + ": output_size must not be negative, got " + std::to_string(size[i]));
    out[static_cast<std::size_t>(3 - nd + i)] = size[i];
  }
  return out;
}

void check_unpool_indices(const std::string& op, const Geometry& g, const Tensor& idx, const Dims& out) {
  const int64_t volume = out[0] * out[1] * out[2];
  const PlaneView iv = plane_view(idx, g);
  const auto* ind = reinterpret_cast<const int64_t*>(idx.data());
  for (int64_t p = 0; p < g.planes(); ++p)
    for (int64_t z = 0; z < g.in[0]; ++z)
      for (int64_t y = 0; y < g.in[1]; ++y)
        for (int64_t x = 0; x < g.in[2]; ++x) {
          const int64_t i = ind[iv.base(p) + z * iv.s[0] + y * iv.s[1] + x * iv.s[2]];
          if (i < 0 || i >= volume)
            fail(op + ": Found an invalid max index: " + std::to_string(i) + " (output volumes are of size " +
                 joined(out, g.nd) + ")");
        }
}

// out[plane][idx] = self[plane][i] for each input position i, in order (the last write wins for repeated indices).
void unpool_scatter(const Tensor& self, const Tensor& idx, const Geometry& g, const Dims& out, Tensor& result) {
  const PlaneView sv = plane_view(self, g), iv = plane_view(idx, g), ov = plane_view(result, g);
  const auto* ind = reinterpret_cast<const int64_t*>(idx.data());
  const std::size_t item = self.itemsize();
  const char* src = self.data();
  char* dst = result.data();
  for_planes(g.planes(), g.in[0] * g.in[1] * g.in[2], [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p)
      for (int64_t z = 0; z < g.in[0]; ++z)
        for (int64_t y = 0; y < g.in[1]; ++y)
          for (int64_t x = 0; x < g.in[2]; ++x) {
            const int64_t i = ind[iv.base(p) + z * iv.s[0] + y * iv.s[1] + x * iv.s[2]];
            const int64_t oz = i / (out[1] * out[2]), oy = i / out[2] % out[1], ox = i % out[2];
            const int64_t from = sv.base(p) + z * sv.s[0] + y * sv.s[1] + x * sv.s[2];
            const int64_t to = ov.base(p) + oz * ov.s[0] + oy * ov.s[1] + ox * ov.s[2];
            std::memcpy(dst + to * static_cast<int64_t>(item), src + from * static_cast<int64_t>(item), item);
          }
  });
}

void unpool_op(int nd, const Tensor& self, const Tensor& idx, const int64_t* size, int64_t size_len,
               AtenTensorHandle* ret0) {
  const std::string op = std::string("max_unpool") + kArities[nd];
  require_cpu(self, op.c_str());
  require_cpu(idx, op.c_str());
  if (ret0 == nullptr) fail(op + ": ret0 is null");
  if (idx.dtype != static_cast<int32_t>(DType::i64))
    fail(op + ": elements in indices should be type int64 but got: " + dtype_name(idx.dtype));
  const Dims out = unpool_dims(op, nd, size, size_len);
  const Geometry g = input_geometry(self, nd, op.c_str(), NonEmpty::after_first);
  if (idx.sizes != self.sizes) fail(op + ": Expected shape of indices to be same as that of the input tensor");
  require_dtype(self, op.c_str(), {DType::f32, DType::f64, DType::f16, DType::bf16});
  check_unpool_indices(op, g, idx, out);
  const auto sizes = out_sizes(g, out);
  // torch keeps a channels-last input's layout in max_unpool2d; max_unpool3d's result is always contiguous.
  TensorPtr result(new_tensor(sizes, out_strides(sizes, nd == 2 && g.channels_last), self.dtype));
  const std::size_t nbytes = storage_nbytes(result->sizes, result->strides, result->itemsize());
  if (nbytes > 0) std::memset(result->data(), 0, nbytes);
  unpool_scatter(self, idx, g, out, *result);
  *ret0 = result.release();
}

void check_unpool3d_lists(const int64_t* stride, int64_t stride_len, const int64_t* padding, int64_t padding_len) {
  if (stride_len != 3 || stride == nullptr)
    fail("max_unpool3d: There should be exactly three elements (depth, height, width) in stride, but got: " +
         std::to_string(stride_len) + " elements.");
  if (padding_len != 3 || padding == nullptr)
    fail("max_unpool3d: There should be exactly three elements (depth, height, width) in padding, but got: " +
         std::to_string(padding_len) + " elements.");
  for (int i = 0; i < 3; ++i)
    if (stride[i] <= 0)
      fail("max_unpool3d: strides should be greater than zero, but got stride: " + std::to_string(stride[0]) + "x" +
           std::to_string(stride[1]) + "x" + std::to_string(stride[2]));
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_fractional_max_pool2d(AtenTensorHandle self, const int64_t* kernel_size,
                                                    int64_t kernel_size_len_, const int64_t* output_size,
                                                    int64_t output_size_len_, AtenTensorHandle random_samples,
                                                    AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    fractional_op(2, deref(self, "self"), kernel_size, kernel_size_len_, output_size, output_size_len_,
                  deref(random_samples, "random_samples"), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_fractional_max_pool3d(AtenTensorHandle self, const int64_t* kernel_size,
                                                    int64_t kernel_size_len_, const int64_t* output_size,
                                                    int64_t output_size_len_, AtenTensorHandle random_samples,
                                                    AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    fractional_op(3, deref(self, "self"), kernel_size, kernel_size_len_, output_size, output_size_len_,
                  deref(random_samples, "random_samples"), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_max_unpool2d(AtenTensorHandle self, AtenTensorHandle indices, const int64_t* output_size,
                                           int64_t output_size_len_, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    unpool_op(2, deref(self, "self"), deref(indices, "indices"), output_size, output_size_len_, ret0);
  });
}

AOTITorchError aoti_torch_cpu_max_unpool3d(AtenTensorHandle self, AtenTensorHandle indices, const int64_t* output_size,
                                           int64_t output_size_len_, const int64_t* stride, int64_t stride_len_,
                                           const int64_t* padding, int64_t padding_len_, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    check_unpool3d_lists(stride, stride_len_, padding, padding_len_);
    unpool_op(3, deref(self, "self"), deref(indices, "indices"), output_size, output_size_len_, ret0);
  });
}

}  // extern "C"
