// aten::mul, add, sub, pow, fill_ and slice on the CPU: the arithmetic that torch's generated headers declare
// beyond the reference name lists (a rotary embedding in complex numbers multiplies complex64 tensors through
// mul.Tensor). The result dtype is torch's result_type: dimensioned tensors decide first, 0-d tensors and the
// double scalars of the C signatures (wrapped numbers: float32 unless a tensor is floating) only lift the
// category (bool < integer < floating < complex). Outputs get TensorIterator's strides. Floating results are
// computed in double and rounded once (exact for mul, within one rounding of torch's float math otherwise);
// integer results in 64-bit two's complement, truncated to the result type as torch's wrapping arithmetic gives.
#include "aoti_shim.h"
#include "complex_element.hpp"
#include "element.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"
#include "view_helpers.hpp"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;
using namespace mpspack::shim::viewops;

namespace {

constexpr int32_t kUndefined = -1;
using Complex = std::complex<double>;

// c10's combine_categories: `lower` (0-d tensors, scalars) changes `higher` (dimensioned tensors) only when it is
// of a higher category.
int32_t combine_categories(int32_t higher, int32_t lower, const char* op) {
  if (higher == kUndefined) return lower;
  if (lower == kUndefined) return higher;
  if (is_complex(higher)) return higher;
  if (is_complex(lower)) return is_floating(higher) ? complex_of(higher) : lower;
  if (is_floating(higher)) return higher;
  if (higher == mpspack::dtype::bool_ || is_floating(lower)) return promote_types(higher, lower, op);
  return higher;
}

// torch.result_type of the tensors and, when `scalar` is set, one double scalar (a wrapped number).
int32_t result_type(std::initializer_list<const Tensor*> tensors, bool scalar, const char* op) {
  int32_t dim_result = kUndefined, zero_result = kUndefined;
  for (const Tensor* t : tensors) {
    int32_t& r = t->dim() == 0 ? zero_result : dim_result;
    r = r == kUndefined ? t->dtype : promote_types(r, t->dtype, op);
  }
  const int32_t wrapped = scalar ? static_cast<int32_t>(mpspack::dtype::float32) : kUndefined;
  return combine_categories(dim_result, combine_categories(zero_result, wrapped, op), op);
}

// An integer or bool element as int64, exactly.
int64_t load_int(const char* p, int32_t dtype) {
  return visit_dtype(dtype, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(*reinterpret_cast<const T*>(p));
    else fail("internal: integer load of a floating dtype");
  });
}

void store_int(char* p, int32_t dtype, uint64_t v) {
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) *reinterpret_cast<bool*>(p) = v != 0;
    else if constexpr (std::is_integral_v<T>) *reinterpret_cast<T*>(p) = static_cast<T>(v);  // wraps
    else fail("internal: integer store into a floating dtype");
  });
}

// The element functions of one op, one per compute domain; a null one makes the op fail for that domain.
struct Kernels {
  Complex (*complex)(Complex, Complex, double) = nullptr;
  double (*real)(double, double, double) = nullptr;
  uint64_t (*integer)(int64_t, int64_t, double) = nullptr;
  bool (*boolean)(bool, bool, double) = nullptr;
  // Whether floating inputs are first rounded to the result dtype (TensorIterator's casts; mul reads a 0-d
  // operand of a float16/bfloat16 result at full precision instead).
  bool round_inputs = true;
};

// v as the floating dtype `dtype` holds it.
double rounded(double v, int32_t dtype) {
  if (dtype == mpspack::dtype::float64) return v;
  alignas(8) char slot[8];
  store_from_double(slot, dtype, v);
  return load_as_double(slot, dtype);
}

template <class E, class F>
void typed_loop(Tensor& out, const Tensor& a, const Tensor& b, const std::vector<int64_t>& sa,
                const std::vector<int64_t>& sb, F&& f) {
  const E* pa = reinterpret_cast<const E*>(a.data());
  const E* pb = reinterpret_cast<const E*>(b.data());
  E* po = reinterpret_cast<E*>(out.data());
  for_each_index(out.sizes, [&](std::span<const int64_t> idx) {
    po[offset_of(idx, out.strides)] = f(pa[offset_of(idx, sa)], pb[offset_of(idx, sb)]);
  });
}

// The common case of one dtype throughout (float32, float64, complex64, complex128) without the per-element dtype
// dispatch of the general loop; the same arithmetic. False for any other combination.
bool same_dtype_loop(Tensor& out, const Tensor& a, const Tensor& b, const Kernels& k, double alpha,
                     const std::vector<int64_t>& sa, const std::vector<int64_t>& sb) {
  if (a.dtype != out.dtype || b.dtype != out.dtype) return false;
  using C64 = std::complex<float>;
  switch (out.dtype) {
    case mpspack::dtype::float32:
      typed_loop<float>(out, a, b, sa, sb, [&](float x, float y) { return static_cast<float>(k.real(x, y, alpha)); });
      return true;
    case mpspack::dtype::float64:
      typed_loop<double>(out, a, b, sa, sb, [&](double x, double y) { return k.real(x, y, alpha); });
      return true;
    case mpspack::dtype::complex64:
      typed_loop<C64>(out, a, b, sa, sb, [&](C64 x, C64 y) { return C64(k.complex(Complex(x), Complex(y), alpha)); });
      return true;
    case mpspack::dtype::complex128:
      typed_loop<Complex>(out, a, b, sa, sb, [&](Complex x, Complex y) { return k.complex(x, y, alpha); });
      return true;
    default: return false;
  }
}

// out[i] = f(a[i], b[i], alpha) over out's shape, a and b broadcast (either may be a 0-d stand-in for a scalar).
void binary_loop(Tensor& out, const Tensor& a, const Tensor& b, const Kernels& k, double alpha) {
  const std::vector<int64_t> sa = broadcast_strides(out, a), sb = broadcast_strides(out, b);
  if (same_dtype_loop(out, a, b, k, alpha, sa, sb)) return;
  const char* pa = a.data();
  const char* pb = b.data();
  char* po = out.data();
  const auto za = static_cast<int64_t>(a.itemsize()), zb = static_cast<int64_t>(b.itemsize()),
             zo = static_cast<int64_t>(out.itemsize());
  const int32_t ta = a.dtype, tb = b.dtype, to = out.dtype;
  for_each_index(out.sizes, [&](std::span<const int64_t> idx) {
    const char* x = pa + offset_of(idx, sa) * za;
    const char* y = pb + offset_of(idx, sb) * zb;
    char* o = po + offset_of(idx, out.strides) * zo;
    if (is_complex(to)) {
      store_complex(o, to, k.complex(load_complex(x, ta), load_complex(y, tb), alpha));
    } else if (is_floating(to)) {
      double u = load_as_double(x, ta), v = load_as_double(y, tb);
      if (k.round_inputs) {
        u = ta == to ? u : rounded(u, to);
        v = tb == to ? v : rounded(v, to);
      }
      store_from_double(o, to, k.real(u, v, alpha));
    } else if (to == mpspack::dtype::bool_) {
      store_int(o, to, k.boolean(load_int(x, ta) != 0, load_int(y, tb) != 0, alpha) ? 1 : 0);
    } else {
      store_int(o, to, k.integer(load_int(x, ta), load_int(y, tb), alpha));
    }
  });
}

void require_kernel(const Kernels& k, int32_t dtype, const char* op, const char* kernel_name) {
  const bool have = is_complex(dtype)                ? k.complex != nullptr
                    : is_floating(dtype)             ? k.real != nullptr
                    : dtype == mpspack::dtype::bool_ ? k.boolean != nullptr
                                                     : k.integer != nullptr;
  if (!have) fail(std::string(op) + ": \"" + kernel_name + "\" not implemented for '" + dtype_name(dtype) + "'");
}

// The shared body of the binary ops: result dtype, broadcast shape, TensorIterator strides, the loop.
TensorPtr binary_op(const Tensor& self, const Tensor& other, bool other_is_scalar, const Kernels& k, double alpha,
                    const char* op, const char* kernel_name) {
  require_cpu(self, op);
  require_cpu(other, op);
  const int32_t dtype = other_is_scalar ? result_type({&self}, true, op) : result_type({&self, &other}, false, op);
  require_kernel(k, dtype, op, kernel_name);
  const std::vector<int64_t> shape = broadcast_shape(self, other, op);
  std::vector<const Tensor*> inputs{&self};
  if (!other_is_scalar) inputs.push_back(&other);
  TensorPtr out(new_tensor(shape, elementwise_strides(shape, inputs), dtype));
  binary_loop(*out, self, other, k, alpha);
  return out;
}

// A 0-d float64 tensor holding a C signature's double scalar.
TensorPtr scalar_tensor(double v) {
  TensorPtr t(new_tensor({}, {}, mpspack::dtype::float64));
  store_from_double(t->data(), mpspack::dtype::float64, v);
  return t;
}

uint64_t wrap_mul(int64_t a, int64_t b) { return static_cast<uint64_t>(a) * static_cast<uint64_t>(b); }

const Kernels kMul{
    [](Complex a, Complex b, double) { return a * b; },
    [](double a, double b, double) { return a * b; },
    [](int64_t a, int64_t b, double) { return wrap_mul(a, b); },
    [](bool a, bool b, double) { return a && b; },
    false,
};

const Kernels kAdd{
    [](Complex a, Complex b, double alpha) { return alpha == 1.0 ? a + b : a + alpha * b; },
    [](double a, double b, double alpha) { return alpha == 1.0 ? a + b : a + alpha * b; },
    [](int64_t a, int64_t b, double alpha) {
      return static_cast<uint64_t>(a) + wrap_mul(static_cast<int64_t>(alpha), b);
    },
    [](bool a, bool b, double alpha) { return a || (alpha != 0.0 && b); },
};

// c10's powi: integer powers by squaring (wrapping); negative exponents give 0 except for bases 1 and -1.
uint64_t int_pow(int64_t base, int64_t exp, double) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (-(exp % 2)) != 0 ? static_cast<uint64_t>(-1) : 1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (auto e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return result;
}

const Kernels kPow{
    [](Complex a, Complex b, double) { return b == Complex(0.0, 0.0) ? Complex(1.0, 0.0) : std::pow(a, b); },
    [](double a, double b, double) { return std::pow(a, b); },
    int_pow,
    nullptr,
};

// alpha of add/sub: a double in the C signatures; torch refuses a non-integral one for integer and bool results
// (an integral-valued double stands for the int scalar a model passes).
void check_alpha(const Tensor& self, const Tensor& other, bool other_is_scalar, double alpha, const char* op) {
  const int32_t dtype = other_is_scalar ? result_type({&self}, true, op) : result_type({&self, &other}, false, op);
  if (is_floating(dtype) || is_complex(dtype)) return;
  if (std::trunc(alpha) != alpha || !(std::fabs(alpha) < 9.2e18))
    fail(std::string(op) + ": For integral input tensors, argument alpha must not be a floating point number.");
  if (dtype == mpspack::dtype::bool_ && alpha != 0.0 && alpha != 1.0)
    fail(std::string(op) + ": Boolean alpha only supported for Boolean results.");
}

TensorPtr add_op(const Tensor& self, const Tensor& other, bool scalar, double alpha, const char* op) {
  check_alpha(self, other, scalar, alpha, op);
  return binary_op(self, other, scalar, kAdd, alpha, op, "add_cpu/sub_cpu");
}

TensorPtr sub_op(const Tensor& self, const Tensor& other, double alpha) {
  if (self.dtype == mpspack::dtype::bool_ && other.dtype == mpspack::dtype::bool_)
    fail("subtract: Subtraction, the `-` operator, with two bool tensors is not supported. "
         "Use the `^` or `logical_xor()` operator instead.");
  if (self.dtype == mpspack::dtype::bool_ || other.dtype == mpspack::dtype::bool_)
    fail("subtract: Subtraction, the `-` operator, with a bool tensor is not supported. "
         "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return add_op(self, other, false, -alpha, "subtract");
}

// pow(tensor, double): the exponent is a float scalar, so integer and bool tensors give float32.
TensorPtr pow_tensor_scalar(const Tensor& self, double exponent) {
  const TensorPtr e = scalar_tensor(exponent);
  return binary_op(self, *e, true, kPow, 1.0, "pow", "pow");
}

// pow(double, tensor): result_type(scalar, exponent); a base of 1 gives ones (torch's shortcut, NaN exponents too).
TensorPtr pow_scalar(double self, const Tensor& exponent) {
  require_cpu(exponent, "pow");
  const TensorPtr base = scalar_tensor(self);
  const int32_t dtype = result_type({&exponent}, true, "pow");
  require_kernel(kPow, dtype, "pow", "pow");
  TensorPtr out(new_contiguous(exponent.sizes, dtype));  // torch's meta function gives no strides: contiguous
  if (self == 1.0) {
    fill(*out, 1.0, "pow");
    return out;
  }
  binary_loop(*out, *base, exponent, kPow, 1.0);
  return out;
}

// aten::slice.Tensor: a view of every step-th element of [start, end) along dim, both clamped into the dim.
TensorPtr slice_view(const Tensor& self, int64_t dim, const int64_t* start, const int64_t* end, int64_t step) {
  if (self.dim() == 0) fail("slice: slice() cannot be applied to a 0-dim tensor.");
  if (step <= 0) fail("slice: slice step must be positive");
  const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim(), "slice"));
  const int64_t size = self.sizes[d];
  int64_t s = start != nullptr ? *start : 0, e = end != nullptr ? *end : std::numeric_limits<int64_t>::max();
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = s < 0 ? 0 : std::min(s, size);
  e = e < s ? s : std::min(e, size);
  std::vector<int64_t> sizes(self.sizes), strides(self.strides);
  sizes[d] = (e - s + step - 1) / step;
  strides[d] *= step;
  return view_of(self, self.dtype, sizes, strides, self.storage_offset + s * self.strides[d]);
}

}  // namespace

namespace {

// aten::sub of tensors on any device: the GPU one's values (and the other's) on the host, the result put back on
// the GPU. A CPU operand beside a GPU one is a 0-d scalar, as torch allows.
TensorPtr subtract_on_any_device(const Tensor& self, const Tensor& other, double alpha) {
  const auto host_copy = [](const Tensor& t) {
    TensorPtr host(new_tensor(t.sizes, empty_like_strides(t), t.dtype));
    copy_values(*host, t, "subtract");
    return host;
  };
  if (self.device_type() != kCpu)
    return via_host(
        self, [&](const Tensor& a) { return sub_op(a, *host_copy(other), alpha); }, "subtract");
  if (other.device_type() != kCpu)
    return via_host(
        other, [&](const Tensor& b) { return sub_op(self, b, alpha); }, "subtract");
  return sub_op(self, other, alpha);
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_mul_Tensor(AtenTensorHandle self, AtenTensorHandle other, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "mul");
    set_result(ret0, binary_op(deref(self, "self"), deref(other, "other"), false, kMul, 1.0, "mul", "mul_cpu"), "mul");
  });
}

AOTITorchError aoti_torch_cpu_mul_Scalar(AtenTensorHandle self, double other, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "mul");
    const TensorPtr s = scalar_tensor(other);
    set_result(ret0, binary_op(deref(self, "self"), *s, true, kMul, 1.0, "mul", "mul_cpu"), "mul");
  });
}

AOTITorchError aoti_torch_cpu_add_Tensor(AtenTensorHandle self, AtenTensorHandle other, double alpha,
                                         AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "add");
    set_result(ret0, add_op(deref(self, "self"), deref(other, "other"), false, alpha, "add"), "add");
  });
}

AOTITorchError aoti_torch_cpu_add_Scalar(AtenTensorHandle self, double other, double alpha, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "add");
    const TensorPtr s = scalar_tensor(other);
    set_result(ret0, add_op(deref(self, "self"), *s, true, alpha, "add"), "add");
  });
}

// Device-generic: a GPU's operands go through host copies, the result back to their device (via_host), as
// c_shim_aten.h's other functions do here.
AOTITorchError aoti_torch_aten_subtract_Tensor(AtenTensorHandle self, AtenTensorHandle other, double alpha,
                                               AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "subtract");
    set_result(ret0, subtract_on_any_device(deref(self, "self"), deref(other, "other"), alpha), "subtract");
  });
}

AOTITorchError aoti_torch_cpu_pow_Tensor_Tensor(AtenTensorHandle self, AtenTensorHandle exponent,
                                                AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "pow");
    set_result(ret0, binary_op(deref(self, "self"), deref(exponent, "exponent"), false, kPow, 1.0, "pow", "pow"),
               "pow");
  });
}

AOTITorchError aoti_torch_cpu_pow_Tensor_Scalar(AtenTensorHandle self, double exponent, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "pow");
    set_result(ret0, pow_tensor_scalar(deref(self, "self"), exponent), "pow");
  });
}

AOTITorchError aoti_torch_cpu_pow_Scalar(double self, AtenTensorHandle exponent, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "pow");
    set_result(ret0, pow_scalar(self, deref(exponent, "exponent")), "pow");
  });
}

AOTITorchError aoti_torch_cpu_fill__Scalar(AtenTensorHandle self, double value) {
  return guarded(__func__, [&] {
    Tensor& t = deref(self, "self");
    require_cpu(t, "fill_");
    fill(t, value, "fill_");
  });
}

// Device-generic: fill works on any device with registered memory.
AOTITorchError aoti_torch_aten_fill__Scalar(AtenTensorHandle self, double value) {
  return guarded(__func__, [&] { fill(deref(self, "self"), value, "fill_"); });
}

// A view: no require_cpu, so the CUDA twin forwards CUDA tensors here as they are.
AOTITorchError aoti_torch_cpu_slice_Tensor(AtenTensorHandle self, int64_t dim, int64_t* start, int64_t* end,
                                           int64_t step, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "slice");
    set_result(ret0, slice_view(deref(self, "self"), dim, start, end, step), "slice");
  });
}

}  // extern "C"
