// aten::cumsum, cumprod and logcumsumexp: the input cast to the result dtype, then scanned along one dim into a new
// contiguous tensor; aten::cummax and cummin: the running extreme and its position.
// The running value is kept in torch's CPU accumulator type (double for float32 and float64, float for float16
// and bfloat16, int64 for integers and bool) and rounded to the result dtype at each element, as torch's CPU
// kernel does, so that long lines of float32 or bfloat16 do not drift from torch's results.
#include "aoti_shim.h"
#include "element.hpp"
#include "scan.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

using namespace mpspack::shim;

namespace mpspack::shim {

int32_t cumulative_result_dtype(int32_t input_dtype, const int32_t* dtype) {
  if (dtype != nullptr) {
    element_size(*dtype);  // fails for a dtype code the shim does not handle
    return *dtype;
  }
  switch (static_cast<DType>(input_dtype)) {
    case DType::u8:
    case DType::i8:
    case DType::i16:
    case DType::i32:
    case DType::i64:
    case DType::boolean: return static_cast<int32_t>(DType::i64);
    default: return input_dtype;
  }
}

int64_t wrap_scan_dim(const Tensor& t, int64_t dim, const char* op) {
  const int64_t nd = std::max<int64_t>(t.dim(), 1);
  if (dim < -nd || dim >= nd)
    fail(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for a tensor of " +
         std::to_string(t.dim()) + " dims");
  return dim < 0 ? dim + nd : dim;
}

ScanLines scan_lines(std::span<const int64_t> sizes, int64_t dim) {
  ScanLines l;
  if (sizes.empty()) return l;
  l.length = sizes[static_cast<std::size_t>(dim)];
  for (int64_t d = 0; d < dim; ++d) l.outer *= sizes[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(dim) + 1; d < sizes.size(); ++d) l.inner *= sizes[d];
  return l;
}

}  // namespace mpspack::shim

namespace {

using namespace mpspack::shim::typed;

// torch's CPU accumulator type (at::acc_type<T, false>): integers and bool run in int64.
template <class T>
struct Accumulator {
  using type = int64_t;
};
template <>
struct Accumulator<float> {
  using type = double;
};
template <>
struct Accumulator<double> {
  using type = double;
};
template <>
struct Accumulator<Half> {
  using type = float;
};
template <>
struct Accumulator<BF16> {
  using type = float;
};

// Integer accumulators wrap around as torch's int64 arithmetic does (signed overflow is undefined in C++).
struct Sum {
  static constexpr const char* name = "cumsum";
  template <class A>
  static A identity() {
    return A(0);
  }
  template <class A>
  static A apply(A acc, A v) {
    if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
    else return acc + v;
  }
};

struct Product {
  static constexpr const char* name = "cumprod";
  template <class A>
  static A identity() {
    return A(1);
  }
  template <class A>
  static A apply(A acc, A v) {
    if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
    else return acc * v;
  }
};

// log(exp(x) + exp(acc)) as torch's _log_add_exp_helper: NaN propagates, and two equal infinities give
// themselves (the formula would give NaN for +inf, +inf).
struct LogAddExp {
  static constexpr const char* name = "logcumsumexp";
  template <class A>
  static A identity() {
    return -std::numeric_limits<A>::infinity();
  }
  template <class A>
  static A apply(A acc, A x) {
    const A lo = std::isnan(acc) ? acc : std::min(x, acc);
    const A hi = std::isnan(acc) ? acc : std::max(x, acc);
    if (lo != hi || std::isfinite(lo)) return hi + std::log1p(std::exp(lo - hi));
    return x;
  }
};

// Scans every line of the contiguous `data` in place: element k of a line becomes op(elements 0..k).
template <class Op, class T>
void scan_in_place(T* data, ScanLines l) {
  using A = typename Accumulator<T>::type;
  std::vector<A> acc(static_cast<std::size_t>(l.inner));
  for (int64_t o = 0; o < l.outer; ++o) {
    std::fill(acc.begin(), acc.end(), Op::template identity<A>());
    T* block = data + o * l.length * l.inner;
    for (int64_t k = 0; k < l.length; ++k) {
      T* row = block + k * l.inner;
      for (int64_t j = 0; j < l.inner; ++j) {
        acc[static_cast<std::size_t>(j)] = Op::apply(acc[static_cast<std::size_t>(j)], static_cast<A>(load(row + j)));
        store(row + j, acc[static_cast<std::size_t>(j)]);
      }
    }
  }
}

template <class Op>
Tensor* cumulative(const Tensor& self, int64_t dim, const int32_t* dtype) {
  require_cpu(self, Op::name);
  const int64_t d = wrap_scan_dim(self, dim, Op::name);
  TensorPtr out(new_contiguous(self.sizes, cumulative_result_dtype(self.dtype, dtype)));
  copy_into(*out, self);  // the cast to the result dtype comes first, as in aten
  if (out->numel() > 0) {
    const ScanLines lines = scan_lines(out->sizes, d);
    visit_dtype(out->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      scan_in_place<Op>(reinterpret_cast<T*>(out->data()), lines);
    });
  }
  return out.release();
}

// logcumsumexp keeps the input's dtype, which must be a floating one.
Tensor* logcumsumexp(const Tensor& self, int64_t dim) {
  require_cpu(self, "logcumsumexp");
  switch (static_cast<DType>(self.dtype)) {
    case DType::f32:
    case DType::f64:
    case DType::f16:
    case DType::bf16: break;
    default: fail(std::string("logcumsumexp: not implemented for ") + dtype_name(self.dtype));
  }
  const int32_t same = self.dtype;
  return cumulative<LogAddExp>(self, dim, &same);
}

// cummax (or cummin): element k of a line becomes the largest (smallest) of elements 0..k and its position the
// last position holding it, since a value equal to the running one takes its place as in torch (>= and <=).
// A NaN takes the place of anything and is only replaced by a later NaN, so NaN propagates.
template <class T>
void running_extreme(const T* in, T* values, int64_t* indices, ScanLines l, bool largest) {
  using V = decltype(load(static_cast<const T*>(nullptr)));
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t j = 0; j < l.inner; ++j) {
      const int64_t first = o * l.length * l.inner + j;
      V best{};
      int64_t at = 0;
      for (int64_t k = 0; k < l.length; ++k) {
        const int64_t e = first + k * l.inner;
        const V v = load(in + e);
        bool take = k == 0 || (largest ? v >= best : v <= best);
        if constexpr (std::is_floating_point_v<V>) take = take || std::isnan(v);
        if (take) best = v, at = k;
        store(values + e, best);
        indices[e] = at;
      }
    }
  }
}

void cumulative_extreme(const Tensor& self, int64_t dim, bool largest, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  const char* op = largest ? "cummax" : "cummin";
  require_cpu(self, op);
  if (ret0 == nullptr || ret1 == nullptr) fail(std::string(op) + ": ret0/ret1 is null");
  const int64_t d = wrap_scan_dim(self, dim, op);
  const TensorPtr in = contiguous_as(self, self.dtype);
  TensorPtr values(new_contiguous(self.sizes, self.dtype));
  TensorPtr indices(new_contiguous(self.sizes, static_cast<int32_t>(DType::i64)));
  if (self.numel() > 0) {
    visit_dtype(self.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      running_extreme(reinterpret_cast<const T*>(in->data()), reinterpret_cast<T*>(values->data()),
                      reinterpret_cast<int64_t*>(indices->data()), scan_lines(self.sizes, d), largest);
    });
  }
  *ret0 = values.release();
  *ret1 = indices.release();
}

template <class Op>
AOTITorchError cumulative_op(const char* func, AtenTensorHandle self, int64_t dim, int32_t* dtype,
                             AtenTensorHandle* ret0) {
  return guarded(func, [&] {
    if (ret0 == nullptr) fail("ret0 is null");
    *ret0 = cumulative<Op>(deref(self, "self"), dim, dtype);
  });
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                AtenTensorHandle* ret0) {
  return cumulative_op<Sum>(__func__, self, dim, dtype, ret0);
}

extern "C" AOTITorchError aoti_torch_cpu_cumprod(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                 AtenTensorHandle* ret0) {
  return cumulative_op<Product>(__func__, self, dim, dtype, ret0);
}

extern "C" AOTITorchError aoti_torch_cpu_logcumsumexp(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("logcumsumexp: ret0 is null");
    *ret0 = logcumsumexp(deref(self, "self"), dim);
  });
}

extern "C" AOTITorchError aoti_torch_cpu_cummax(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                                AtenTensorHandle* ret1) {
  return guarded(__func__, [&] { cumulative_extreme(deref(self, "self"), dim, true, ret0, ret1); });
}

extern "C" AOTITorchError aoti_torch_cpu_cummin(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                                AtenTensorHandle* ret1) {
  return guarded(__func__, [&] { cumulative_extreme(deref(self, "self"), dim, false, ret0, ret1); });
}
