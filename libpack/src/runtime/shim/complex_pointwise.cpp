// aten::abs, angle, polar and gcd on the CPU: the element-wise ops of the views group, complex64/complex128 (and
// complex32 where torch takes it) included. Outputs get TensorIterator's strides (the inputs' layout when they
// share a dense one). abs of a complex tensor is its real magnitude; angle of a real one is pi for negative
// values, 0 otherwise, NaN for NaN (integers and bool give float32). gcd takes integers (promoted together), and
// like torch's computes in the result type, so gcd(-128, 0) of int8 stays -128.
#include "aoti_shim.h"
#include "complex_element.hpp"
#include "element.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"
#include "view_helpers.hpp"

#include <cmath>
#include <cstring>
#include <complex>
#include <numbers>
#include <string>
#include <type_traits>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;
using namespace mpspack::shim::viewops;

namespace {

// Calls f(out element, input element) for every element of `in`, both as byte addresses.
template <class F>
void each_pair(Tensor& out, const Tensor& in, F&& f) {
  char* o = out.data();
  const char* i = in.data();
  const auto osz = static_cast<int64_t>(out.itemsize()), isz = static_cast<int64_t>(in.itemsize());
  for_each_index(in.sizes, [&](std::span<const int64_t> idx) {
    f(o + offset_of(idx, out.strides) * osz, i + offset_of(idx, in.strides) * isz);
  });
}

TensorPtr unary_output(const Tensor& self, int32_t dtype) {
  const Tensor* inputs[] = {&self};
  return TensorPtr(new_tensor(self.sizes, elementwise_strides(self.sizes, inputs), dtype));
}

// The magnitude of a complex element into a real one: computed in double, rounded once to the result dtype.
void complex_to_real(Tensor& out, const Tensor& self, double (*f)(std::complex<double>)) {
  each_pair(out, self,
            [&](char* o, const char* i) { store_from_double(o, out.dtype, f(load_complex(i, self.dtype))); });
}

TensorPtr abs_op(const Tensor& self) {
  require_cpu(self, "abs");
  if (is_complex(self.dtype)) {
    TensorPtr out = unary_output(self, complex_part(self.dtype));
    complex_to_real(*out, self, [](std::complex<double> z) { return std::abs(z); });
    return out;
  }
  if (self.dtype == mpspack::dtype::bool_) fail("abs: \"abs_cpu\" not implemented for 'Bool'");
  TensorPtr out = unary_output(self, self.dtype);
  visit_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    each_pair(*out, self, [](char* o, const char* i) {
      const auto v = load(reinterpret_cast<const T*>(i));
      using V = decltype(v);
      if constexpr (std::is_floating_point_v<V>) {
        store(reinterpret_cast<T*>(o), std::fabs(v));
      } else if constexpr (std::is_signed_v<V>) {
        // Two's complement wrap, as torch: abs(-128) of int8 is -128.
        using U = std::make_unsigned_t<V>;
        store(reinterpret_cast<T*>(o), static_cast<V>(v < 0 ? U(0) - static_cast<U>(v) : static_cast<U>(v)));
      } else {
        store(reinterpret_cast<T*>(o), v);
      }
    });
  });
  return out;
}

TensorPtr angle_op(const Tensor& self) {
  require_cpu(self, "angle");
  if (self.dtype == mpspack::dtype::complex32) fail("angle: \"angle_cpu\" not implemented for 'ComplexHalf'");
  if (is_complex(self.dtype)) {
    TensorPtr out = unary_output(self, complex_part(self.dtype));
    complex_to_real(*out, self, [](std::complex<double> z) { return std::arg(z); });
    return out;
  }
  const int32_t dtype = is_floating(self.dtype) ? self.dtype : static_cast<int32_t>(DType::f32);
  TensorPtr out = unary_output(self, dtype);
  each_pair(*out, self, [&](char* o, const char* i) {
    const double v = load_as_double(i, self.dtype);
    store_from_double(o, dtype, std::isnan(v) ? v : v < 0 ? std::numbers::pi : 0.0);
  });
  return out;
}

template <class R>
void polar_loop(Tensor& out, const Tensor& abs, const Tensor& angle) {
  const std::vector<int64_t> sa = broadcast_strides(out, abs), sg = broadcast_strides(out, angle);
  const auto* a = reinterpret_cast<const R*>(abs.data());
  const auto* g = reinterpret_cast<const R*>(angle.data());
  auto* o = reinterpret_cast<R*>(out.data());
  for_each_index(out.sizes, [&](std::span<const int64_t> idx) {
    const R r = a[offset_of(idx, sa)], t = g[offset_of(idx, sg)];
    R* z = o + 2 * offset_of(idx, out.strides);
    z[0] = r * std::cos(t);
    z[1] = r * std::sin(t);
  });
}

TensorPtr polar_op(const Tensor& abs, const Tensor& angle) {
  require_cpu(abs, "polar");
  require_cpu(angle, "polar");
  if (abs.dtype != angle.dtype)
    fail(std::string("polar: Expected object of scalar type ") + dtype_name(abs.dtype) + " but got scalar type " +
         dtype_name(angle.dtype) + " for second argument");
  if (abs.dtype != mpspack::dtype::float32 && abs.dtype != mpspack::dtype::float64)
    fail(std::string("polar: \"polar_cpu\" not implemented for '") + dtype_name(abs.dtype) + "'");
  const std::vector<int64_t> shape = broadcast_shape(abs, angle, "polar");
  const Tensor* inputs[] = {&abs, &angle};
  TensorPtr out(new_tensor(shape, elementwise_strides(shape, inputs), complex_of(abs.dtype)));
  if (abs.dtype == mpspack::dtype::float32) polar_loop<float>(*out, abs, angle);
  else polar_loop<double>(*out, abs, angle);
  return out;
}

// c10's calc_gcd in T's own arithmetic (magnitudes wrap for the most negative value, as there).
template <class T>
T gcd_of(T a, T b) {
  using U = std::make_unsigned_t<T>;
  const auto magnitude = [](T v) { return static_cast<T>(v < 0 ? U(0) - static_cast<U>(v) : static_cast<U>(v)); };
  a = magnitude(a);
  b = magnitude(b);
  while (a != 0) {
    const T c = a;
    a = (a == T(-1)) ? T(0) : static_cast<T>(b % a);  // b % -1 is 0; spelled out because INT_MIN % -1 traps
    b = c;
  }
  return b;
}

TensorPtr gcd_op(const Tensor& self, const Tensor& other) {
  require_cpu(self, "gcd");
  require_cpu(other, "gcd");
  for (const Tensor* t : {&self, &other})
    if (!is_integral(t->dtype))
      fail(std::string("gcd: \"gcd_cpu\" not implemented for '") + dtype_name(t->dtype) + "'");
  const int32_t dtype = promote_types(self.dtype, other.dtype, "gcd");
  const std::vector<int64_t> shape = broadcast_shape(self, other, "gcd");
  const Tensor* inputs[] = {&self, &other};
  TensorPtr out(new_tensor(shape, elementwise_strides(shape, inputs), dtype));
  const TensorPtr a = contiguous_as(self, dtype), b = contiguous_as(other, dtype);
  const std::vector<int64_t> sa = broadcast_strides(*out, *a), sb = broadcast_strides(*out, *b);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T* pa = reinterpret_cast<const T*>(a->data());
      const T* pb = reinterpret_cast<const T*>(b->data());
      T* po = reinterpret_cast<T*>(out->data());
      for_each_index(shape, [&](std::span<const int64_t> idx) {
        if constexpr (std::is_signed_v<T>)
          po[offset_of(idx, out->strides)] = gcd_of<T>(pa[offset_of(idx, sa)], pb[offset_of(idx, sb)]);
        else
          po[offset_of(idx, out->strides)] =
              static_cast<T>(gcd_of<int32_t>(pa[offset_of(idx, sa)], pb[offset_of(idx, sb)]));  // uint8: exact in int32
      });
    }
  });
  return out;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_abs(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "abs");
    set_result(ret0, abs_op(deref(self, "self")), "abs");
  });
}

AOTITorchError aoti_torch_cpu_angle(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "angle");
    set_result(ret0, angle_op(deref(self, "self")), "angle");
  });
}

AOTITorchError aoti_torch_cpu_polar(AtenTensorHandle abs, AtenTensorHandle angle, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "polar");
    set_result(ret0, polar_op(deref(abs, "abs"), deref(angle, "angle")), "polar");
  });
}

AOTITorchError aoti_torch_cpu_gcd(AtenTensorHandle self, AtenTensorHandle other, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "gcd");
    set_result(ret0, gcd_op(deref(self, "self"), deref(other, "other")), "gcd");
  });
}

}  // extern "C"
