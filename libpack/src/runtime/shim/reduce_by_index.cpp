// Reductions that group slices by an index or into segments: aten::index_reduce (a copy of self whose slice
// index[i] along dim is reduced with source's slice i, in index order) and aten::segment_reduce (runs of
// consecutive slices along axis, given by lengths or offsets, each reduced to one slice).
// Each reduction step is rounded to the tensor's dtype, as torch's in-place CPU loops round: index_reduce
// computes a step in double (int64 for integers, wrapping) and stores it; segment_reduce keeps its running
// value in the dtype (float16 and bfloat16 rounded after each step). amax/amin and max/min propagate NaN.
#include "aoti_shim.h"
#include "element.hpp"
#include "scan.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

enum class Reduce { sum, prod, mean, max, min };

template <class C>
C combine(Reduce r, C acc, C v) {
  if constexpr (std::is_floating_point_v<C>) {
    if ((r == Reduce::max || r == Reduce::min) && (std::isnan(acc) || std::isnan(v))) return std::isnan(acc) ? acc : v;
  }
  switch (r) {
    case Reduce::sum:
    case Reduce::mean:
      if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
      else return acc + v;
    case Reduce::prod:
      if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
      else return acc * v;
    case Reduce::max: return v > acc ? v : acc;
    case Reduce::min: return v < acc ? v : acc;
  }
  return v;
}

// The value a reduction starts from when nothing else is given: the identity of the operation (the extreme
// of T for max and min on integers).
template <class C, class T>
C identity(Reduce r) {
  if (r == Reduce::prod) return C(1);
  if (r != Reduce::max && r != Reduce::min) return C(0);
  const bool max = r == Reduce::max;
  if constexpr (std::is_floating_point_v<C>) {
    return max ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
  } else if constexpr (std::is_same_v<T, bool>) {
    return max ? C(0) : C(1);
  } else {
    return max ? C(std::numeric_limits<T>::lowest()) : C(std::numeric_limits<T>::max());
  }
}

// x rounded to T's precision.
template <class T, class V>
V rnd(V x) {
  if constexpr (std::is_same_v<T, Half>) return half_to_float(float_to_half(x));
  else if constexpr (std::is_same_v<T, BF16>) return bf16_to_float(float_to_bf16(x));
  else return x;
}

// ---- index_reduce

Reduce parse_index_reduce(const char* reduce) {
  const std::string r = reduce ? reduce : "";
  if (r == "prod") return Reduce::prod;
  if (r == "mean") return Reduce::mean;
  if (r == "amax") return Reduce::max;
  if (r == "amin") return Reduce::min;
  fail("index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got " + r + ".");
}

int64_t size_at(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.sizes[static_cast<std::size_t>(dim)]; }

// The index's values, checked against dim's size.
std::vector<int64_t> index_values(const Tensor& index, int64_t dim_size) {
  if (index.dim() > 1)
    fail("index_reduce_(): Index is supposed to be a vector, but got dim: " + std::to_string(index.dim()));
  if (index.dtype != static_cast<int32_t>(DType::i64) && index.dtype != static_cast<int32_t>(DType::i32))
    fail(std::string("index_reduce_(): Expected dtype int32/int64 for index but got: ") + dtype_name(index.dtype));
  const TensorPtr idx = contiguous_as(index, static_cast<int32_t>(DType::i64));
  const auto* p = reinterpret_cast<const int64_t*>(idx->data());
  std::vector<int64_t> v(p, p + idx->numel());
  for (int64_t j : v)
    if (j < 0 || j >= dim_size)
      fail("index_reduce: index " + std::to_string(j) + " is out of range in self (dim size " +
           std::to_string(dim_size) + ")");
  return v;
}

void check_index_reduce(const Tensor& self, int64_t dim, const Tensor& source, int64_t count) {
  if (source.dtype != self.dtype)
    fail(std::string("index_reduce_(): self (") + dtype_name(self.dtype) + ") and source (" + dtype_name(source.dtype) +
         ") must have the same scalar type");
  if (count != size_at(source, dim))
    fail("index_reduce_(): Number of indices (" + std::to_string(count) + ") should be equal to source.size(dim): (" +
         std::to_string(size_at(source, dim)) + "), for dim: " + std::to_string(dim));
  bool slices_match = self.dim() == source.dim();
  for (int64_t d = 0; slices_match && d < self.dim(); ++d)
    slices_match = d == dim || self.sizes[static_cast<std::size_t>(d)] == source.sizes[static_cast<std::size_t>(d)];
  if (!slices_match)
    fail("index_reduce_(): source tensor shape must match self tensor shape, excluding the specified dimension");
}

template <class T>
void index_reduce_into(Tensor& out, const Tensor& src, int64_t dim, const std::vector<int64_t>& idx, Reduce r,
                       bool include_self) {
  using V = decltype(load(static_cast<const T*>(nullptr)));
  using C = std::conditional_t<std::is_integral_v<V>, int64_t, double>;
  const ScanLines lo = scan_lines(out.sizes, dim), ls = scan_lines(src.sizes, dim);
  T* o = reinterpret_cast<T*>(out.data());
  const T* s = reinterpret_cast<const T*>(src.data());
  // The first element of slice `at` along dim in block `outer` of a contiguous tensor laid out as `l`.
  const auto slice = [](auto* base, ScanLines l, int64_t outer, int64_t at) {
    return base + (outer * l.length + at) * l.inner;
  };
  std::vector<int64_t> count(static_cast<std::size_t>(lo.length), include_self ? 1 : 0);
  for (int64_t outer = 0; outer < lo.outer; ++outer) {
    if (!include_self)
      for (int64_t j : idx)
        for (int64_t e = 0; e < lo.inner; ++e) store(slice(o, lo, outer, j) + e, identity<C, T>(r));
    for (std::size_t i = 0; i < idx.size(); ++i) {
      T* to = slice(o, lo, outer, idx[i]);
      const T* from = slice(s, ls, outer, static_cast<int64_t>(i));
      for (int64_t e = 0; e < lo.inner; ++e)
        store(to + e, combine<C>(r, static_cast<C>(load(to + e)), static_cast<C>(load(from + e))));
      if (outer == 0) ++count[static_cast<std::size_t>(idx[i])];
    }
  }
  if (r != Reduce::mean) return;
  for (int64_t outer = 0; outer < lo.outer; ++outer) {
    for (int64_t j = 0; j < lo.length; ++j) {
      const int64_t n = std::max<int64_t>(count[static_cast<std::size_t>(j)], 1);
      T* row = slice(o, lo, outer, j);
      for (int64_t e = 0; e < lo.inner; ++e) {
        const C sum = static_cast<C>(load(row + e));
        if constexpr (std::is_integral_v<C>) {
          const C q = sum / n;
          store(row + e, (sum % n != 0 && sum < 0) ? q - 1 : q);  // torch divides integers with floor rounding
        } else {
          store(row + e, sum / static_cast<C>(n));
        }
      }
    }
  }
}

Tensor* index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const char* reduce,
                     bool include_self) {
  for (const Tensor* t : {&self, &index, &source}) require_cpu(*t, "index_reduce");
  const Reduce r = parse_index_reduce(reduce);
  const int64_t d = wrap_scan_dim(self, dim, "index_reduce");
  const std::vector<int64_t> idx = index_values(index, size_at(self, d));
  check_index_reduce(self, d, source, static_cast<int64_t>(idx.size()));
  TensorPtr out(new_contiguous(self.sizes, self.dtype));
  if (out->numel() > 0) copy_into(*out, self);
  const TensorPtr src = contiguous_as(source, source.dtype);
  if (out->numel() > 0 && src->numel() > 0) {
    visit_dtype(self.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      index_reduce_into<T>(*out, *src, d, idx, r, include_self);
    });
  }
  return out.release();
}

// ---- segment_reduce

Reduce parse_segment_reduce(const char* reduce) {
  const std::string r = reduce ? reduce : "";
  if (r == "sum") return Reduce::sum;
  if (r == "mean") return Reduce::mean;
  if (r == "max") return Reduce::max;
  if (r == "min") return Reduce::min;
  if (r == "prod") return Reduce::prod;
  fail("segment_reduce: unsupported reduction given! " + r);
}

// The segments of each row along axis: starts and lengths, row after row (rows: data's dims before axis).
struct Segments {
  int64_t count = 0;
  std::vector<int64_t> start, length;
};

Segments segments_of(const Tensor& data, int64_t axis, const Tensor* lengths, const Tensor* offsets, bool unsafe) {
  const Tensor& t = offsets ? *offsets : *lengths;
  const char* what = offsets ? "offsets" : "lengths";
  require_cpu(t, "segment_reduce");
  if (t.dtype != static_cast<int32_t>(DType::i64) && t.dtype != static_cast<int32_t>(DType::i32))
    fail(std::string("segment_reduce: ") + what + " must be int32 or int64, got " + dtype_name(t.dtype));
  if (axis != t.dim() - 1)
    fail("segment_reduce(): Expected axis to be the last dimension of " + std::string(what) + " but got " +
         std::to_string(axis) + ".");
  for (int64_t d = 0; d < axis; ++d)
    if (t.sizes[static_cast<std::size_t>(d)] != data.sizes[static_cast<std::size_t>(d)])
      fail(std::string("segment_reduce: ") + what + "' leading dims differ from data's");
  const TensorPtr v = contiguous_as(t, static_cast<int32_t>(DType::i64));
  const auto* p = reinterpret_cast<const int64_t*>(v->data());
  const int64_t per_row = t.sizes.back(), rows = per_row == 0 ? 0 : v->numel() / per_row;
  const int64_t axis_size = data.sizes[static_cast<std::size_t>(axis)];
  Segments s;
  s.count = offsets ? std::max<int64_t>(per_row - 1, 0) : per_row;
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t* q = p + row * per_row;
    int64_t end = offsets ? q[0] : 0;
    for (int64_t k = 0; k < s.count; ++k) {
      const int64_t start = end, len = offsets ? q[k + 1] - q[k] : q[k];
      end = start + len;
      if (len < 0)
        fail(offsets ? "segment_reduce: offsets decrease" : "segment_reduce: lengths contains negative value!");
      if (start < 0 || end > axis_size)
        fail("segment_reduce: segment [" + std::to_string(start) + ", " + std::to_string(end) +
             ") is outside data's axis of size " + std::to_string(axis_size));
      s.start.push_back(start);
      s.length.push_back(len);
    }
    if (!offsets && !unsafe && end != axis_size)
      fail(
          "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe.");
  }
  return s;
}

template <class T>
void segment_reduce_into(const Tensor& data, Tensor& out, int64_t axis, const Segments& s, Reduce r,
                         const double* initial) {
  using V = decltype(load(static_cast<const T*>(nullptr)));
  const ScanLines ld = scan_lines(data.sizes, axis);
  const T* in = reinterpret_cast<const T*>(data.data());
  T* o = reinterpret_cast<T*>(out.data());
  for (int64_t outer = 0; outer < ld.outer; ++outer) {
    for (int64_t k = 0; k < s.count; ++k) {
      const auto at = static_cast<std::size_t>(outer * s.count + k);
      const int64_t start = s.start[at], len = s.length[at];
      for (int64_t e = 0; e < ld.inner; ++e) {
        V acc = initial ? rnd<T>(static_cast<V>(*initial)) : identity<V, T>(r);
        for (int64_t j = start; j < start + len; ++j)
          acc = rnd<T>(combine<V>(r, acc, static_cast<V>(load(in + (outer * ld.length + j) * ld.inner + e))));
        if (r == Reduce::mean) {
          if (len == 0 && !initial) acc = std::numeric_limits<V>::quiet_NaN();
          else if (len > 0 && !std::isnan(acc)) acc = rnd<T>(acc / static_cast<V>(len));
        }
        store(o + (outer * s.count + k) * ld.inner + e, acc);
      }
    }
  }
}

Tensor* segment_reduce(const Tensor& data, const char* reduce, AtenTensorHandle* lengths, AtenTensorHandle* indices,
                       AtenTensorHandle* offsets, int64_t axis, bool unsafe, const double* initial) {
  require_cpu(data, "segment_reduce");
  if (indices != nullptr) fail("segment_reduce(): indices based reduction is not supported yet.");
  if (lengths == nullptr && offsets == nullptr) fail("segment_reduce(): Either lengths or offsets must be defined.");
  const Reduce r = parse_segment_reduce(reduce);
  switch (static_cast<DType>(data.dtype)) {
    case DType::f32:
    case DType::f64:
    case DType::f16:
    case DType::bf16: break;
    default: fail(std::string("segment_reduce: not implemented for ") + dtype_name(data.dtype));
  }
  if (data.dim() == 0) fail("segment_reduce: data must have at least one dim");
  const int64_t ax = wrap_scan_dim(data, axis, "segment_reduce");
  const Tensor* off = offsets ? &deref(*offsets, "offsets") : nullptr;
  const Tensor* len = lengths ? &deref(*lengths, "lengths") : nullptr;
  const Segments s = segments_of(data, ax, len, off, unsafe);
  std::vector<int64_t> sizes(data.sizes);
  sizes[static_cast<std::size_t>(ax)] = s.count;
  TensorPtr out(new_contiguous(sizes, data.dtype));
  const TensorPtr in = contiguous_as(data, data.dtype);
  visit_dtype(data.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<decltype(load(static_cast<const T*>(nullptr)))>)
      segment_reduce_into<T>(*in, *out, ax, s, r, initial);
  });
  return out.release();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_index_reduce(AtenTensorHandle self, int64_t dim, AtenTensorHandle index,
                                           AtenTensorHandle source, const char* reduce, int32_t include_self,
                                           AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("index_reduce: ret0 is null");
    *ret0 = index_reduce(deref(self, "self"), dim, deref(index, "index"), deref(source, "source"), reduce,
                         include_self != 0);
  });
}

AOTITorchError aoti_torch_cpu_segment_reduce(AtenTensorHandle data, const char* reduce, AtenTensorHandle* lengths,
                                             AtenTensorHandle* indices, AtenTensorHandle* offsets, int64_t axis,
                                             int32_t unsafe, double* initial, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("segment_reduce: ret0 is null");
    *ret0 = segment_reduce(deref(data, "data"), reduce, lengths, indices, offsets, axis, unsafe != 0, initial);
  });
}

}  // extern "C"
