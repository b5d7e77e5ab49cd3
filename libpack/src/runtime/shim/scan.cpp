// aten::cumsum and aten::cumprod: the input cast to the result dtype, then scanned along one dim into a new contiguous tensor.
// The running value is kept in torch's CPU accumulator type (double for float32 and float64, float for float16
// and bfloat16, int64 for integers and bool) and rounded to the result dtype at each element, as torch's CPU
// kernel does, so that long lines of float32 or bfloat16 do not drift from torch's results.
#include "aoti_shim.h"
#include "element.hpp"
#include "scan.hpp"
#include "tensor.hpp"

#include <algorithm>
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
    case DType::u8: case DType::i8: case DType::i16: case DType::i32: case DType::i64: case DType::boolean:
      return static_cast<int32_t>(DType::i64);
    default:
      return input_dtype;
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
template <class T> struct Accumulator { using type = int64_t; };
template <> struct Accumulator<float> { using type = double; };
template <> struct Accumulator<double> { using type = double; };
template <> struct Accumulator<Half> { using type = float; };
template <> struct Accumulator<BF16> { using type = float; };

// Integer accumulators wrap around as torch's int64 arithmetic does (signed overflow is undefined in C++).
struct Sum {
  static constexpr const char* name = "cumsum";
  template <class A> static A identity() { return A(0); }
  template <class A> static A apply(A acc, A v) {
    if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
    else return acc + v;
  }
};

struct Product {
  static constexpr const char* name = "cumprod";
  template <class A> static A identity() { return A(1); }
  template <class A> static A apply(A acc, A v) {
    if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
    else return acc * v;
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
