// aten::_fft_r2c, _fft_c2c and hann_window on the CPU. The transforms run on kissfft's C++ template
// (kissfft.hh, BSD, from libkissfft-dev): header-only, so it adds no library to load, and it is instantiated in
// double for every dtype (Debian ships the compiled kissfft only in float). Working in double makes a float32
// result the correctly rounded transform, within torch's own rounding of it.
//
// A transform over several dims is a 1-D transform along each of them in turn (the DFT is separable), on a
// contiguous complex<double> copy of the input; the result is scaled once (normalization 0: none, 1: 1/sqrt(n),
// 2: 1/n, n the product of the signal sizes) and stored as complex64 (float32 input or complex64) or complex128.
// Outputs get the strides of torch's x86 CPU FFT (MKL; fft_out_strides), which AOTInductor's code relies on.
#include "aoti_shim.h"
#include "element.hpp"
#include "factory.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"

#include <kissfft.hh>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

using cpx = std::complex<double>;

// dims wrapped into [0, ndim) (negative ones count from the end), in the order given; fails for an empty list,
// a dim out of range or one given twice.
std::vector<int64_t> signal_dims(const char* op, const Tensor& self, const int64_t* dim, int64_t dim_len) {
  const int64_t nd = self.dim();
  if (nd == 0) fail(std::string(op) + ": ndim must be >= 1");
  if (dim_len <= 0 || dim == nullptr) fail(std::string(op) + ": dim is empty");
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < dim_len; ++i) {
    const int64_t d = dim[i] < 0 ? dim[i] + nd : dim[i];
    if (d < 0 || d >= nd)
      fail(std::string(op) + ": bad axis number: dim " + std::to_string(dim[i]) + " of a " + std::to_string(nd) +
           "-d tensor");
    for (int64_t seen : dims)
      if (seen == d) fail(std::string(op) + ": axis specified repeatedly: " + std::to_string(d));
    if (self.sizes[static_cast<std::size_t>(d)] == 0)  // torch's MKL path fails there too
      fail(std::string(op) + ": cannot transform dim " + std::to_string(d) + " of size 0");
    dims.push_back(d);
  }
  return dims;
}

double norm_scale(const char* op, int64_t normalization, double n) {
  switch (normalization) {
    case 0: return 1.0;
    case 1: return n > 0 ? 1.0 / std::sqrt(n) : 1.0;
    case 2: return n > 0 ? 1.0 / n : 1.0;
  }
  fail(std::string(op) + ": Unsupported normalization type" + std::to_string(normalization));
}

// The elements of a real (f32/f64) or complex (c64/c128) tensor, as a contiguous complex<double> buffer in
// row-major order of its sizes.
std::vector<cpx> load_complex(const Tensor& t) {
  std::vector<cpx> buf;
  buf.reserve(static_cast<std::size_t>(t.numel()));
  const auto read = [&](auto tag, bool complex) {
    using S = typename decltype(tag)::type;
    const S* base = reinterpret_cast<const S*>(t.data());
    for_each_index(t.sizes, [&](std::span<const int64_t> idx) {
      const S* p = base + (complex ? 2 : 1) * offset_of(idx, t.strides);
      buf.emplace_back(double(p[0]), complex ? double(p[1]) : 0.0);
    });
  };
  switch (t.dtype) {
    case mpspack::dtype::float32: read(Tag<float>{}, false); break;
    case mpspack::dtype::float64: read(Tag<double>{}, false); break;
    case mpspack::dtype::complex64: read(Tag<float>{}, true); break;
    case mpspack::dtype::complex128: read(Tag<double>{}, true); break;
    default: fail("fft: dtype " + std::string(dtype_name(t.dtype)) + " is not handled");
  }
  return buf;
}

// The 1-D DFT (forward: e^{-2 pi i jk/n}, inverse: e^{+...}, unscaled) along `dim` of a contiguous buffer of
// `sizes`, in place.
void transform_along(std::vector<cpx>& buf, const std::vector<int64_t>& sizes, int64_t dim, bool forward) {
  const int64_t n = sizes[static_cast<std::size_t>(dim)];
  if (n <= 1 || buf.empty()) return;
  int64_t inner = 1;
  for (std::size_t d = static_cast<std::size_t>(dim) + 1; d < sizes.size(); ++d) inner *= sizes[d];
  const int64_t outer = static_cast<int64_t>(buf.size()) / (n * inner);
  const kissfft<double> plan(static_cast<std::size_t>(n), !forward);
  std::vector<cpx> line(static_cast<std::size_t>(n)), result(static_cast<std::size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      cpx* first = buf.data() + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) line[static_cast<std::size_t>(k)] = first[k * inner];
      plan.transform(line.data(), result.data());
      for (int64_t k = 0; k < n; ++k) first[k * inner] = result[static_cast<std::size_t>(k)];
    }
  }
}

// The strides torch's MKL FFT gives its result (aten/src/ATen/native/mkl/SpectralOps.cpp, _exec_fft): the
// signal dims sorted by the input's strides, largest first (r2c keeps its last dim last: it is the halved one),
// after the other (batch) dims, also sorted by the input's strides; the result is contiguous in that order.
std::vector<int64_t> fft_out_strides(const Tensor& self, const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& out_sizes, bool keep_last) {
  const auto by_stride = [&](int64_t a, int64_t b) {
    return self.strides[static_cast<std::size_t>(a)] > self.strides[static_cast<std::size_t>(b)];
  };
  std::vector<int64_t> order;  // batch dims, then signal dims: outermost first
  for (int64_t d = 0; d < self.dim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), by_stride);
  const std::size_t batch = order.size();
  order.insert(order.end(), dims.begin(), dims.end());
  std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(batch), order.end() - (keep_last ? 1 : 0), by_stride);
  std::vector<int64_t> strides(out_sizes.size());
  int64_t acc = 1;
  for (std::size_t i = order.size(); i-- > 0;) {
    strides[static_cast<std::size_t>(order[i])] = acc;
    acc *= out_sizes[static_cast<std::size_t>(order[i])];
  }
  return strides;
}

// A new complex tensor (complex64 when `single`, else complex128) of `out_sizes` and `out_strides`, each element
// the element of `buf` (of `sizes`, which are at least as large in every dim) at the same index, times `scale`.
TensorPtr store_complex(const std::vector<cpx>& buf, const std::vector<int64_t>& sizes,
                        const std::vector<int64_t>& out_sizes, const std::vector<int64_t>& out_strides, double scale,
                        bool single) {
  TensorPtr out(new_tensor(out_sizes, out_strides, single ? mpspack::dtype::complex64 : mpspack::dtype::complex128));
  const std::vector<int64_t> buf_strides = contiguous_strides(sizes);
  const auto write = [&](auto tag) {
    using S = typename decltype(tag)::type;
    S* dst = reinterpret_cast<S*>(out->data());
    for_each_index(out_sizes, [&](std::span<const int64_t> idx) {
      const cpx v = buf[static_cast<std::size_t>(offset_of(idx, buf_strides))] * scale;
      S* p = dst + 2 * offset_of(idx, out_strides);
      p[0] = S(v.real());
      p[1] = S(v.imag());
    });
  };
  if (single) write(Tag<float>{});
  else write(Tag<double>{});
  return out;
}

TensorPtr fft_r2c(const Tensor& self, const int64_t* dim, int64_t dim_len, int64_t normalization, bool onesided) {
  require_cpu(self, "_fft_r2c");
  if (self.dtype != mpspack::dtype::float32 && self.dtype != mpspack::dtype::float64)
    fail(std::string("_fft_r2c: expected a float32 or float64 input, got ") + dtype_name(self.dtype));
  const std::vector<int64_t> dims = signal_dims("_fft_r2c", self, dim, dim_len);
  double n = 1;
  for (int64_t d : dims) n *= double(self.sizes[static_cast<std::size_t>(d)]);
  const double scale = norm_scale("_fft_r2c", normalization, n);
  std::vector<cpx> buf = load_complex(self);
  for (int64_t d : dims) transform_along(buf, self.sizes, d, true);
  std::vector<int64_t> out_sizes = self.sizes;
  // onesided: the last signal dim keeps bins 0..n/2, the rest being their conjugates
  const auto last = static_cast<std::size_t>(dims.back());
  if (onesided) out_sizes[last] = self.sizes[last] / 2 + 1;
  return store_complex(buf, self.sizes, out_sizes, fft_out_strides(self, dims, out_sizes, true), scale,
                       self.dtype == mpspack::dtype::float32);
}

TensorPtr fft_c2c(const Tensor& self, const int64_t* dim, int64_t dim_len, int64_t normalization, bool forward) {
  require_cpu(self, "_fft_c2c");
  if (self.dtype != mpspack::dtype::complex64 && self.dtype != mpspack::dtype::complex128)
    fail(std::string("_fft_c2c: expected a complex64 or complex128 input, got ") + dtype_name(self.dtype));
  const std::vector<int64_t> dims = signal_dims("_fft_c2c", self, dim, dim_len);
  double n = 1;
  for (int64_t d : dims) n *= double(self.sizes[static_cast<std::size_t>(d)]);
  const double scale = norm_scale("_fft_c2c", normalization, n);
  std::vector<cpx> buf = load_complex(self);
  for (int64_t d : dims) transform_along(buf, self.sizes, d, forward);
  return store_complex(buf, self.sizes, self.sizes, fft_out_strides(self, dims, self.sizes, false), scale,
                       self.dtype == mpspack::dtype::complex64);
}

// torch's periodic Hann window: w[k] = 0.5 - 0.5 cos(2 pi k / L); [1] for L = 1. torch builds it as an arange in
// the result dtype, then multiplies, takes the cosine, scales and shifts it in place: each step is computed in
// float (double for float64) and rounded to the dtype, and so it is here.
TensorPtr hann_window_op(int64_t length, int32_t dtype) {
  if (length < 0)
    fail("hann_window: hann_window requires non-negative window_length, got window_length=" + std::to_string(length));
  if (dtype != mpspack::dtype::float32 && dtype != mpspack::dtype::float64 && dtype != mpspack::dtype::float16 &&
      dtype != mpspack::dtype::bfloat16)
    fail(std::string("hann_window: hann_window expects floating point dtypes, got ") + dtype_name(dtype));
  TensorPtr out(new_contiguous(std::vector<int64_t>{length}, dtype));
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using V = std::conditional_t<std::is_same_v<T, double>, double, float>;
    T* dst = reinterpret_cast<T*>(out->data());
    const V step = V(2.0 * std::numbers::pi / double(length));
    const auto rounded = [](V v) {  // v as the dtype holds it
      T t;
      store(&t, v);
      return V(load(&t));
    };
    for (int64_t k = 0; k < length; ++k) {
      const V angle = rounded(V(k) * step), c = rounded(std::cos(angle));
      store(dst + k, length == 1 ? V(1) : rounded(c * V(-0.5)) + V(0.5));
    }
  });
  return out;
}

void give(AtenTensorHandle* ret0, const char* op, TensorPtr t) {
  if (ret0 == nullptr) fail(std::string(op) + ": ret0 is null");
  *ret0 = t.release();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__fft_r2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                       int64_t normalization, int32_t onesided, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    give(ret0, "_fft_r2c", fft_r2c(deref(self, "self"), dim, dim_len_, normalization, onesided != 0));
  });
}

AOTITorchError aoti_torch_cpu__fft_c2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                       int64_t normalization, int32_t forward, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    give(ret0, "_fft_c2c", fft_c2c(deref(self, "self"), dim, dim_len_, normalization, forward != 0));
  });
}

AOTITorchError aoti_torch_cpu_hann_window(int64_t window_length, int32_t* dtype, int32_t* layout, int32_t* device,
                                          int32_t device_index_, int32_t* pin_memory, AtenTensorHandle* ret0) {
  (void)device_index_, (void)pin_memory;
  return guarded(__func__, [&] {
    const int32_t dt = factory_dtype("hann_window", dtype, mpspack::dtype::float32, layout, device);
    give(ret0, "hann_window", hann_window_op(window_length, dt));
  });
}

}  // extern "C"
