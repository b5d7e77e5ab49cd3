// The rest of torch's generic shim (torch/csrc/inductor/aoti_torch/c/shim.h): device-type and layout codes, the
// ABI version, scalars of the dtypes beyond the classic ten, undefined and pinned tensors, the generic device
// guard and stream for the CPU, AOTInductor's debug helpers and fbgemm's fp16-weight Linear.
#include "aoti_shim.h"
#include "blas.hpp"
#include "element.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace mpspack::shim;
namespace dt = mpspack::dtype;

struct DeviceGuardOpaque {
  int32_t device_index = -1;
};
struct StreamOpaque {
  int64_t id = 0;
};

namespace {

// c10::Layout and c10::DeviceType codes the other getters return.
enum : int32_t {
  kLayoutSparse = 1,
  kLayoutSparseCsr = 2,
  kLayoutSparseCsc = 4,
  kLayoutSparseBsr = 5,
  kLayoutSparseBsc = 6,
  kLayoutJagged = 7,
};
enum : int32_t { kXpu = 12, kMeta = 14, kPrivateUse1 = 20 };
constexpr uint64_t kTorchAbiVersion = (uint64_t{2} << 56) | (uint64_t{11} << 48) | (uint64_t{0} << 40);

// One element as c10::Scalar holds it after item(): an integer (signed, or unsigned above INT64_MAX), a bool, a
// double or a complex double.
struct Scalar {
  enum Kind { integer, unsigned_integer, boolean, real, complex } kind = integer;
  int64_t i = 0;
  uint64_t u = 0;
  double re = 0, im = 0;
};

// float8 bits as a float (the four formats' NaN and infinity included), for reading and for the NaN check.
double float8_value(uint8_t b, int32_t dtype) {
  const bool e5m2 = dtype == dt::float8_e5m2 || dtype == dt::float8_e5m2fnuz;
  const bool fnuz = dtype == dt::float8_e5m2fnuz || dtype == dt::float8_e4m3fnuz;
  if (fnuz && b == 0x80) return std::numeric_limits<double>::quiet_NaN();
  const int mbits = e5m2 ? 2 : 3, ebits = e5m2 ? 5 : 4;
  const int bias = (1 << (ebits - 1)) - 1 + (fnuz ? 1 : 0);
  const int e = (b >> mbits) & ((1 << ebits) - 1), m = b & ((1 << mbits) - 1);
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  if (e5m2 && !fnuz && e == 31) return m == 0 ? sign * INFINITY : std::numeric_limits<double>::quiet_NaN();
  if (!e5m2 && !fnuz && (b & 0x7F) == 0x7F) return std::numeric_limits<double>::quiet_NaN();
  if (e == 0) return sign * std::ldexp(m, 1 - bias - mbits);
  return sign * std::ldexp((1 << mbits) + m, e - bias - mbits);
}

// The element at p of `dtype`, as item() gives it; fails for a dtype the shim does not know.
Scalar read_scalar(const char* p, int32_t dtype) {
  Scalar s;
  auto as_real = [&](double v) { s.kind = Scalar::real, s.re = v; };
  auto as_complex = [&](double re, double im) { s.kind = Scalar::complex, s.re = re, s.im = im; };
  uint16_t h[2];
  float f[2];
  double d[2];
  switch (dtype) {
    case dt::uint16: return s.i = *reinterpret_cast<const uint16_t*>(p), s;
    case dt::uint32: return s.i = *reinterpret_cast<const uint32_t*>(p), s;
    case dt::uint64: {
      const uint64_t v = *reinterpret_cast<const uint64_t*>(p);
      if (v > uint64_t(std::numeric_limits<int64_t>::max())) return s.kind = Scalar::unsigned_integer, s.u = v, s;
      return s.i = int64_t(v), s;
    }
    case dt::complex32: std::memcpy(h, p, 4); return as_complex(half_to_float(h[0]), half_to_float(h[1])), s;
    case dt::complex64: std::memcpy(f, p, 8); return as_complex(f[0], f[1]), s;
    case dt::complex128: std::memcpy(d, p, 16); return as_complex(d[0], d[1]), s;
    case dt::float8_e5m2:
    case dt::float8_e4m3fn:
    case dt::float8_e5m2fnuz:
    case dt::float8_e4m3fnuz: return as_real(float8_value(uint8_t(*p), dtype)), s;
    case dt::bool_: return s.kind = Scalar::boolean, s.i = *p != 0, s;
    default: break;
  }
  const bool floating = dtype == dt::float16 || dtype == dt::bfloat16 || dtype == dt::float32 || dtype == dt::float64;
  if (floating) return as_real(load_as_double(p, dtype)), s;
  s.i = static_cast<int64_t>(load_as_double(p, dtype));  // int8..int64 and uint8: exact below 2^53
  if (dtype == dt::int64) std::memcpy(&s.i, p, 8);
  return s;
}

// What c10::checked_convert<To> refuses: a value the target cannot hold. `lowest`/`max` are To's (its value
// type's, for a complex To), `has_inf_nan` whether To has infinity and NaN, `complex_to` whether To is complex.
struct Target {
  const char* name;  // as c10 names the type in its message
  double lowest, max;
  bool has_inf_nan, complex_to;
  uint64_t umax;  // for unsigned integer targets, else 0
};

bool real_overflows(double v, const Target& t) {
  if (t.has_inf_nan && (std::isinf(v) || std::isnan(v))) return false;
  if (!t.has_inf_nan && std::isnan(v)) return true;
  if (t.umax != 0) return v < 0 || v >= 18446744073709551616.0 || v > double(t.umax);
  return v < t.lowest || v > t.max;
}

bool overflows(const Scalar& s, const Target& t) {
  switch (s.kind) {
    case Scalar::boolean: return false;
    case Scalar::integer:
      if (t.umax != 0) {  // negative values wrap as two's complement, as c10 allows
        const uint64_t mag = s.i < 0 ? uint64_t(0) - uint64_t(s.i) : uint64_t(s.i);
        return mag > t.umax;
      }
      return double(s.i) < t.lowest || double(s.i) > t.max;
    case Scalar::unsigned_integer: return t.umax != 0 ? s.u > t.umax : double(s.u) > t.max;
    case Scalar::real: return real_overflows(s.re, t);
    case Scalar::complex:
      if (!t.complex_to && s.im != 0) return true;
      return real_overflows(s.re, t) || (t.complex_to && real_overflows(s.im, t));
  }
  return true;
}

const Target kHalf{"at::Half", -65504.0, 65504.0, true, false, 0};
const Target kBFloat16{"at::BFloat16", -3.3895313892515355e38, 3.3895313892515355e38, true, false, 0};
const Target kComplexFloat{"c10::complex<float>",
                           double(std::numeric_limits<float>::lowest()),
                           double(std::numeric_limits<float>::max()),
                           true,
                           true,
                           0};
const Target kU16{"uint16_t", 0, 65535.0, false, false, 0xFFFF};
const Target kU32{"uint32_t", 0, 4294967295.0, false, false, 0xFFFFFFFF};
const Target kU64{"uint64_t", 0, 18446744073709551615.0, false, false, ~uint64_t(0)};

// The one element of `h` (a CPU tensor of one element), checked against `t`.
Scalar item_of(AtenTensorHandle h, const Target& t) {
  const Tensor& x = deref(h);
  require_cpu(x, "item");
  if (x.numel() != 1) fail("a Tensor with " + std::to_string(x.numel()) + " elements cannot be converted to Scalar");
  const Scalar s = read_scalar(x.data(), x.dtype);
  if (overflows(s, t)) fail(std::string("value cannot be converted to type ") + t.name + " without overflow");
  return s;
}

double real_part(const Scalar& s) {
  switch (s.kind) {
    case Scalar::integer:
    case Scalar::boolean: return double(s.i);
    case Scalar::unsigned_integer: return double(s.u);
    default: return s.re;
  }
}

template <class U>
U unsigned_value(const Scalar& s) {
  switch (s.kind) {
    case Scalar::integer:
    case Scalar::boolean: return static_cast<U>(s.i);
    case Scalar::unsigned_integer: return static_cast<U>(s.u);
    default: return static_cast<U>(s.re);
  }
}

template <class T>
AOTITorchError unsigned_item(AtenTensorHandle h, T* ret, const Target& t, const char* func) {
  return guarded(func, [&] {
    const Scalar s = item_of(h, t);
    if (ret == nullptr) fail("ret_value is null");
    *ret = unsigned_value<T>(s);
  });
}

template <class T>
AOTITorchError scalar_tensor(const T& value, int32_t dtype, AtenTensorHandle* ret, const char* func) {
  return guarded(func, [&] {
    if (ret == nullptr) fail("ret_new_tensor is null");
    Tensor* t = new_tensor({}, {}, dtype);
    std::memcpy(t->data(), &value, sizeof(T));
    *ret = t;
  });
}

void check_cpu_index(int32_t device_index) {
  if (device_index != -1 && device_index != 0)
    fail("CPU device index must be -1 or zero, got " + std::to_string(device_index));
}

// A CPU copy of t when it lives on a device (the debug helpers read its values), else t itself.
const Tensor& on_cpu(const Tensor& t, TensorPtr& holder) {
  if (t.device_type() == kCpu) return t;
  holder.reset(new_contiguous(t.sizes, t.dtype));
  copy_any(*holder, t);
  return *holder;
}

// Calls f(value) for each element of t (a CPU tensor) in row-major order.
template <class F>
void for_each_value(const Tensor& t, F&& f) {
  const auto isz = static_cast<int64_t>(t.itemsize());
  for_each_index(t.sizes, [&](std::span<const int64_t> idx) {
    f(read_scalar(t.data() + offset_of(idx, t.strides) * isz, t.dtype));
  });
}

std::string shape_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string value_text(const Scalar& s) {
  char buf[64];
  switch (s.kind) {
    case Scalar::integer: return std::to_string(s.i);
    case Scalar::unsigned_integer: return std::to_string(s.u);
    case Scalar::boolean: return s.i ? "True" : "False";
    case Scalar::real: std::snprintf(buf, sizeof buf, "%.4f", s.re); return buf;
    case Scalar::complex: std::snprintf(buf, sizeof buf, "%.4f%+.4fj", s.re, s.im); return buf;
  }
  return "?";
}

// torch's printout of AOTInductor's debug printer, written to stderr.
void print_tensor(const Tensor& t, const char* msg) {
  std::string out = "[";
  if (msg != nullptr) out += std::string("  ") + msg;
  out += "  ]:\n";
  const int64_t n = t.numel();
  const bool complex = t.dtype == dt::complex32 || t.dtype == dt::complex64 || t.dtype == dt::complex128;
  std::vector<Scalar> values;
  if (n <= 256) for_each_value(t, [&](const Scalar& s) { values.push_back(s); });
  auto all_values = [&] {
    std::string v;
    for (std::size_t i = 0; i < values.size(); ++i) v += (i ? " " : "") + value_text(values[i]);
    return v + "\n";
  };
  if (n <= 64) out += all_values();
  out += "Number of elements: " + std::to_string(n) + "\n";
  out += std::string("Dtype: ") + dtype_name(t.dtype) + "\n";
  if (n > 0) {
    double sum_re = 0, sum_im = 0, lo = INFINITY, hi = -INFINITY;
    bool nan = false;
    for_each_value(t, [&](const Scalar& s) {
      const double re = real_part(s);
      sum_re += re, sum_im += s.kind == Scalar::complex ? s.im : 0;
      nan = nan || std::isnan(re);
      lo = std::min(lo, re), hi = std::max(hi, re);
    });
    char buf[128];
    if (complex) std::snprintf(buf, sizeof buf, "Mean value: (%g,%g)\n", sum_re / double(n), sum_im / double(n));
    else
      std::snprintf(buf, sizeof buf, "Mean value: %g\nMin value: %g\nMax value: %g\n", sum_re / double(n),
                    nan ? NAN : lo, nan ? NAN : hi);
    out += buf;
    if (complex && n <= 256)
      out += std::string("[INFO] min/max are not defined for ") + dtype_name(t.dtype) +
             ". Printing out the whole value:\n" + all_values();
  }
  const std::string device = t.device_type() == kCpu ? "cpu" : "cuda:" + std::to_string(t.storage->device_index);
  out += "Device: " + device + "\n";
  out += "Size: " + shape_text(t.sizes) + "\nStride: " + shape_text(t.strides) + "\nLayout: Strided\n";
  out += std::string("Is contiguous: ") + (t.is_contiguous() ? "1" : "0") + "\nRequires grad: 0\n\n";
  std::fputs(out.c_str(), stderr);
}

}  // namespace

extern "C" {

int32_t aoti_torch_device_type_meta(void) { return kMeta; }
int32_t aoti_torch_device_type_xpu(void) { return kXpu; }
int32_t aoti_torch_device_type_privateuse1(void) { return kPrivateUse1; }
int32_t aoti_torch_layout_sparse_coo(void) { return kLayoutSparse; }
int32_t aoti_torch_layout_sparse_csr(void) { return kLayoutSparseCsr; }
int32_t aoti_torch_layout_sparse_csc(void) { return kLayoutSparseCsc; }
int32_t aoti_torch_layout_sparse_bsr(void) { return kLayoutSparseBsr; }
int32_t aoti_torch_layout_sparse_bsc(void) { return kLayoutSparseBsc; }
int32_t aoti_torch_layout__mkldnn(void) { return kLayoutMkldnn; }
int32_t aoti_torch_layout_jagged(void) { return kLayoutJagged; }
uint64_t aoti_torch_abi_version(void) { return kTorchAbiVersion; }

AOTITorchError aoti_torch_item_float16(AtenTensorHandle tensor, uint16_t* ret_value) {
  return guarded(__func__, [&] {
    const Scalar s = item_of(tensor, kHalf);
    if (ret_value == nullptr) fail("ret_value is null");
    *ret_value = float_to_half(static_cast<float>(real_part(s)));
  });
}
AOTITorchError aoti_torch_item_bfloat16(AtenTensorHandle tensor, uint16_t* ret_value) {
  return guarded(__func__, [&] {
    const Scalar s = item_of(tensor, kBFloat16);
    if (ret_value == nullptr) fail("ret_value is null");
    *ret_value = float_to_bf16(static_cast<float>(real_part(s)));
  });
}
AOTITorchError aoti_torch_item_uint16(AtenTensorHandle t, uint16_t* r) { return unsigned_item(t, r, kU16, __func__); }
AOTITorchError aoti_torch_item_uint32(AtenTensorHandle t, uint32_t* r) { return unsigned_item(t, r, kU32, __func__); }
AOTITorchError aoti_torch_item_uint64(AtenTensorHandle t, uint64_t* r) { return unsigned_item(t, r, kU64, __func__); }
AOTITorchError aoti_torch_item_complex64(AtenTensorHandle tensor, AotiComplex64* ret_value) {
  return guarded(__func__, [&] {
    const Scalar s = item_of(tensor, kComplexFloat);
    if (ret_value == nullptr) fail("ret_value is null");
    ret_value->real = static_cast<float>(real_part(s));
    ret_value->imag = s.kind == Scalar::complex ? static_cast<float>(s.im) : 0.f;
  });
}

AOTITorchError aoti_torch_scalar_to_tensor_uint16(uint16_t v, AtenTensorHandle* r) {
  return scalar_tensor(v, dt::uint16, r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_uint32(uint32_t v, AtenTensorHandle* r) {
  return scalar_tensor(v, dt::uint32, r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_uint64(uint64_t v, AtenTensorHandle* r) {
  return scalar_tensor(v, dt::uint64, r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_complex64(AotiComplex64 v, AtenTensorHandle* r) {
  return scalar_tensor(v, dt::complex64, r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_complex128(AotiComplex128 v, AtenTensorHandle* r) {
  return scalar_tensor(v, dt::complex128, r, __func__);
}

AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle* ret) {
  return guarded(__func__, [&] {
    if (ret == nullptr) fail("ret is null");
    *ret = new Tensor();  // no storage: undefined
  });
}

// Pinned (page-locked) memory only lets a GPU copy run asynchronously beside the host; the CPU shim calls no GPU
// API (docs/CODING.md rule 7), and a copy between a GPU and ordinary memory gives the same bytes (CUDA stages it
// through its own pinned buffer and returns when it is done), so ordinary aligned memory keeps every result.
AOTITorchError aoti_torch_empty_strided_pinned(int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                               int32_t dtype, int32_t device_type, int32_t device_index,
                                               AtenTensorHandle* ret_new_tensor) {
  if (device_type != kCpu) return report_failure(__func__, "only CPU tensors can be pinned");
  return aoti_torch_empty_strided(ndim, sizes_ptr, strides_ptr, dtype, device_type, device_index, ret_new_tensor);
}

AOTITorchError aoti_torch_create_device_guard(int32_t device_index, DeviceGuardHandle* ret_guard) {
  return guarded(__func__, [&] {
    if (ret_guard == nullptr) fail("ret_guard is null");
    check_cpu_index(device_index);
    *ret_guard = new DeviceGuardOpaque{device_index};
  });
}
AOTITorchError aoti_torch_delete_device_guard(DeviceGuardHandle guard) {
  return guarded(__func__, [&] {
    if (guard == nullptr) fail("guard is null");
    delete guard;
  });
}
AOTITorchError aoti_torch_device_guard_set_index(DeviceGuardHandle guard, int32_t device_index) {
  return guarded(__func__, [&] {
    if (guard == nullptr) fail("guard is null");
    check_cpu_index(device_index);
    guard->device_index = device_index;
  });
}
AOTITorchError aoti_torch_get_current_device_index(int32_t* ret_device_index) {
  return guarded(__func__, [&] {
    if (ret_device_index == nullptr) fail("ret_device_index is null");
    *ret_device_index = -1;
  });
}
AOTITorchError aoti_torch_get_current_stream(int32_t device_index, StreamHandle* ret_stream) {
  return guarded(__func__, [&] {
    if (ret_stream == nullptr) fail("ret_stream is null");
    check_cpu_index(device_index);
    *ret_stream = new StreamOpaque{};
  });
}
AOTITorchError aoti_torch_delete_stream(StreamHandle stream) {
  return guarded(__func__, [&] {
    if (stream == nullptr) fail("stream is null");
    delete stream;
  });
}
AOTITorchError aoti_torch_stream_id(StreamHandle stream, int64_t* ret_stream_id) {
  return guarded(__func__, [&] {
    if (stream == nullptr) fail("stream is null");
    if (ret_stream_id == nullptr) fail("ret_stream_id is null");
    *ret_stream_id = stream->id;
  });
}

AOTITorchError aoti_torch_check_inf_and_nan(const char* tensor_name, AtenTensorHandle tensor) {
  return guarded(__func__, [&] {
    TensorPtr holder;
    const Tensor& t = on_cpu(deref(tensor), holder);
    bool nan = false, inf = false;
    for_each_value(t, [&](const Scalar& s) {
      if (s.kind != Scalar::real && s.kind != Scalar::complex) return;
      nan = nan || std::isnan(s.re) || std::isnan(s.im);
      inf = inf || std::isinf(s.re) || std::isinf(s.im);
    });
    const std::string name = tensor_name ? tensor_name : "";
    if (nan) fail("At least one NaN in " + name);  // torch checks the whole tensor for NaN first
    if (inf) fail("At least one INF in " + name);
  });
}

void aoti_torch_print_tensor_handle(AtenTensorHandle self, const char* msg) {
  guarded(__func__, [&] {
    TensorPtr holder;
    print_tensor(on_cpu(deref(self), holder), msg);
  });
}

// torch pickles the tensor to <cwd>/tmp/aoti_torch/<launch_prefix>_<kernel_name>_<tensor_name>_<device>.pt;
// mpspack has no writer of torch's pickle format, so it says so, naming the file, instead of writing another one
// under torch's name.
void aoti_torch_save_tensor_handle(AtenTensorHandle self, const char* tensor_name, const char* launch_prefix,
                                   const char* kernel_name) {
  guarded(__func__, [&] {
    const Tensor& t = deref(self);
    char cwd[4096];
    const std::string dir = getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/tmp/aoti_torch/" : "tmp/aoti_torch/";
    const std::string device = t.device_type() == kCpu ? "cpu" : "cuda:" + std::to_string(t.storage->device_index);
    fail(std::string("not saved: mpspack cannot write torch's pickle format (torch writes ") + dir +
         (launch_prefix ? launch_prefix : "") + "_" + (kernel_name ? kernel_name : "") + "_" +
         (tensor_name ? tensor_name : "") + "_" + device + ".pt); aoti_torch_print_tensor_handle prints it instead");
  });
}

}  // extern "C"
