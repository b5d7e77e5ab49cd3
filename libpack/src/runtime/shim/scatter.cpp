// aten::scatter.src_out, scatter.value_out and scatter_reduce.two_out: out <- self, then for every position i
// of index, the element of out at i with its `dim` coordinate replaced by index[i] takes src[i] (or the value),
// or is reduced with it. Positions are visited in index's row-major order, so where an index repeats, the last
// write wins and reductions run in that order, as torch's CPU kernels do. Each reduction step is computed in
// double (int64 for integers, wrapping) and rounded to out's dtype, which is the dtype's own arithmetic.
#include "aoti_shim.h"
#include "element.hpp"
#include "index_walk.hpp"
#include "scan.hpp"
#include "tensor.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

enum class Reduce { assign, sum, prod, mean, amax, amin };

Reduce parse_reduce(const char* reduce) {
  if (reduce == nullptr) fail("scatter_reduce: reduce is null");
  const std::string r(reduce);
  if (r == "sum") return Reduce::sum;
  if (r == "prod") return Reduce::prod;
  if (r == "mean") return Reduce::mean;
  if (r == "amax") return Reduce::amax;
  if (r == "amin") return Reduce::amin;
  fail("scatter_reduce: reduce \"" + r + "\" is not one of sum, prod, mean, amax, amin");
}

// A 0-d tensor as a 1-d tensor of one element (same storage), so that it has a dim 0 to scatter along.
Tensor at_least_1d(const Tensor& t) {
  Tensor v = t;
  if (v.dim() == 0) {
    v.sizes = {1};
    v.strides = {1};
  }
  return v;
}

// torch's checks: int64 index with self's number of dims, no larger than src (or self off dim); same dtypes.
void check_scatter(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                   const char* op) {
  for (const Tensor* t : {&out, &self, &index}) require_cpu(*t, op);
  if (src) require_cpu(*src, op);
  const std::string o(op);
  if (index.dtype != static_cast<int32_t>(DType::i64))
    fail(o + ": index must be int64, got " + dtype_name(index.dtype));
  if (out.dtype != self.dtype || out.sizes != self.sizes) fail(o + ": out differs from self in dtype or shape");
  if (src && src->dtype != self.dtype)
    fail(o + ": src dtype " + dtype_name(src->dtype) + " differs from self dtype " + dtype_name(self.dtype));
  if (index.numel() == 0) return;
  if (index.dim() != self.dim()) fail(o + ": index must have as many dims as self");
  for (int64_t d = 0; d < index.dim(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    if ((src && index.sizes[i] > src->sizes[i]) || (d != dim && index.sizes[i] > self.sizes[i]))
      fail(o + ": index size " + std::to_string(index.sizes[i]) + " at dim " + std::to_string(d) +
           " is larger than src's or self's");
  }
}

// Calls f(out_offset, index_position) for every element of index, after checking it is within dim's size.
template <class F>
void for_each_target(const Tensor& out, int64_t dim, const Tensor& index, const char* op, F&& f) {
  const auto* idx_data = reinterpret_cast<const int64_t*>(index.data());
  const int64_t size = out.sizes[static_cast<std::size_t>(dim)], stride = out.strides[static_cast<std::size_t>(dim)];
  for_each_index(index.sizes, [&](std::span<const int64_t> pos) {
    const int64_t j = idx_data[offset_of(pos, index.strides)];
    if (j < 0 || j >= size)
      fail(std::string(op) + ": index " + std::to_string(j) + " is out of bounds for dim " + std::to_string(dim) +
           " with size " + std::to_string(size));
    f(offset_of(pos, out.strides) + (j - pos[static_cast<std::size_t>(dim)]) * stride, pos);
  });
}

template <class C>
C combine(Reduce r, C acc, C v) {
  if constexpr (std::is_floating_point_v<C>) {
    if ((r == Reduce::amax || r == Reduce::amin) && (std::isnan(acc) || std::isnan(v)))
      return std::numeric_limits<C>::quiet_NaN();
  }
  switch (r) {
    case Reduce::sum:
    case Reduce::mean:
      if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
      else return acc + v;
    case Reduce::prod:
      if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
      else return acc * v;
    case Reduce::amax: return v > acc ? v : acc;
    case Reduce::amin: return v < acc ? v : acc;
    case Reduce::assign: break;
  }
  return v;
}

// The value a reduction starts from where self is left out (include_self=False).
template <class C, class T>
C reduce_identity(Reduce r) {
  if (r == Reduce::prod) return C(1);
  if (r != Reduce::amax && r != Reduce::amin) return C(0);
  const bool max = r == Reduce::amax;
  if constexpr (std::is_floating_point_v<C>) {
    return max ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
  } else {
    return max ? C(std::numeric_limits<T>::lowest()) : C(std::numeric_limits<T>::max());
  }
}

// out (holding self) reduced with src along index; `value` stands in for src when src is null.
void scatter_into(Tensor& out, int64_t dim, const Tensor& index, const Tensor* src, double value, Reduce r,
                  bool include_self, const char* op) {
  visit_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using V = decltype(load(static_cast<const T*>(nullptr)));
    using C = std::conditional_t<std::is_integral_v<V>, int64_t, double>;
    T* o = reinterpret_cast<T*>(out.data());
    const T* s = src ? reinterpret_cast<const T*>(src->data()) : nullptr;
    const auto source = [&](std::span<const int64_t> pos) {
      return s ? static_cast<C>(load(s + offset_of(pos, src->strides))) : static_cast<C>(value);
    };
    if (r == Reduce::assign) {
      for_each_target(out, dim, index, op,
                      [&](int64_t at, std::span<const int64_t> pos) { store(o + at, source(pos)); });
      return;
    }
    if (!include_self)
      for_each_target(out, dim, index, op,
                      [&](int64_t at, std::span<const int64_t>) { store(o + at, reduce_identity<C, T>(r)); });
    // mean: how many values each element of out gathered (self counting as one), by its offset in out.
    std::vector<int64_t> count;
    const int64_t span_elems = static_cast<int64_t>(storage_nbytes(out.sizes, out.strides, 1));
    if (r == Reduce::mean) count.assign(static_cast<std::size_t>(span_elems), include_self ? 1 : 0);
    for_each_target(out, dim, index, op, [&](int64_t at, std::span<const int64_t> pos) {
      store(o + at, combine<C>(r, static_cast<C>(load(o + at)), source(pos)));
      if (r == Reduce::mean) ++count[static_cast<std::size_t>(at)];
    });
    if (r != Reduce::mean) return;
    for_each_target(out, dim, index, op, [&](int64_t at, std::span<const int64_t>) {
      int64_t& n = count[static_cast<std::size_t>(at)];
      if (n <= 1) return;  // a single value, or already divided (a repeated index)
      const C sum = static_cast<C>(load(o + at));
      if constexpr (std::is_integral_v<C>) {
        const C q = sum / n;
        store(o + at, (sum % n != 0 && sum < 0) ? q - 1 : q);  // torch divides integers with floor rounding
      } else {
        store(o + at, sum / static_cast<C>(n));
      }
      n = 1;
    });
  });
}

void scatter_op(const char* op, AtenTensorHandle out_h, AtenTensorHandle self_h, int64_t dim, AtenTensorHandle index_h,
                AtenTensorHandle src_h, double value, Reduce r, bool include_self) {
  Tensor& out_ref = deref(out_h, "out");
  const Tensor& self_ref = deref(self_h, "self");
  const Tensor& index_ref = deref(index_h, "index");
  const int64_t d = wrap_scan_dim(self_ref, dim, op);
  Tensor out = at_least_1d(out_ref), self = at_least_1d(self_ref), index = at_least_1d(index_ref);
  Tensor src_view;
  const Tensor* src = nullptr;
  if (src_h) {
    src_view = at_least_1d(deref(src_h, "src"));
    src = &src_view;
  }
  check_scatter(out, self, d, index, src, op);
  copy_into(out, self);
  if (index.numel() > 0) scatter_into(out, d, index, src, value, r, include_self, op);
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_scatter_src_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                              AtenTensorHandle index, AtenTensorHandle src) {
  return guarded(__func__, [&] {
    if (src == nullptr) fail("src handle is null");
    scatter_op("scatter", out, self, dim, index, src, 0.0, Reduce::assign, true);
  });
}

AOTITorchError aoti_torch_cpu_scatter_value_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                AtenTensorHandle index, double value) {
  return guarded(__func__, [&] { scatter_op("scatter", out, self, dim, index, nullptr, value, Reduce::assign, true); });
}

AOTITorchError aoti_torch_cpu_scatter_reduce_two_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                     AtenTensorHandle index, AtenTensorHandle src, const char* reduce,
                                                     int32_t include_self) {
  return guarded(__func__, [&] {
    if (src == nullptr) fail("src handle is null");
    scatter_op("scatter_reduce", out, self, dim, index, src, 0.0, parse_reduce(reduce), include_self != 0);
  });
}

// The generic shim's names of the same two ops (c/shim.h).
AOTITorchError aoti_torch_scatter_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim, AtenTensorHandle index,
                                      AtenTensorHandle src) {
  return guarded(__func__, [&] {
    if (src == nullptr) fail("src handle is null");
    scatter_op("scatter", out, self, dim, index, src, 0.0, Reduce::assign, true);
  });
}

AOTITorchError aoti_torch_scatter_reduce_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                             AtenTensorHandle index, AtenTensorHandle src, const char* reduce,
                                             int32_t include_self) {
  return guarded(__func__, [&] {
    if (src == nullptr) fail("src handle is null");
    scatter_op("scatter_reduce", out, self, dim, index, src, 0.0, parse_reduce(reduce), include_self != 0);
  });
}

}  // extern "C"
