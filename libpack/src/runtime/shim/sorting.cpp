// aten::sort, sort.stable and topk: each line along dim is ordered by a stable sort of its positions, so equal
// values keep their input order (torch's CPU sort is stable whatever `stable` says; its topk leaves the order
// of ties unspecified). NaN sorts above every number, as in torch: last ascending, first descending and
// first among the largest. Values are compared in their own type (integers exactly, half types as float).
#include "aoti_shim.h"
#include "element.hpp"
#include "index_walk.hpp"
#include "scan.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

// a before b when sorting in ascending (or descending) order, NaN counting as the largest value.
template <class V>
bool ordered_before(V a, V b, bool descending) {
  if (descending) return (is_nan(a) && !is_nan(b)) || a > b;
  return (!is_nan(a) && is_nan(b)) || a < b;
}

// Where one line along dim lies in the input and in the two outputs.
struct LineOffsets {
  int64_t in, values, indices;
};

// Calls f(offsets) for each line along `dim` of `in`; the outputs have the same sizes except along dim.
template <class F>
void for_each_line(const Tensor& in, int64_t dim, const Tensor& values, const Tensor& indices, F&& f) {
  std::vector<int64_t> outer(in.sizes);
  if (!outer.empty()) outer[static_cast<std::size_t>(dim)] = 1;
  for_each_index(outer, [&](std::span<const int64_t> idx) {
    f(LineOffsets{offset_of(idx, in.strides), offset_of(idx, values.strides), offset_of(idx, indices.strides)});
  });
}

int64_t stride_along(const Tensor& t, int64_t dim) {
  return t.dim() == 0 ? 1 : t.strides[static_cast<std::size_t>(dim)];
}
int64_t size_along(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.sizes[static_cast<std::size_t>(dim)]; }

// Writes the first `keep` elements of each line of `in`, in sorted order, to `values` (same dtype) and their
// positions to `indices` (int64).
void sort_lines(const Tensor& in, int64_t dim, bool descending, int64_t keep, Tensor& values, Tensor& indices) {
  const int64_t n = size_along(in, dim), in_st = stride_along(in, dim);
  const int64_t v_st = stride_along(values, dim), i_st = stride_along(indices, dim);
  visit_dtype(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using V = decltype(load(static_cast<const T*>(nullptr)));
    std::vector<V> line(static_cast<std::size_t>(n));
    std::vector<int64_t> order(static_cast<std::size_t>(n));
    const T* src = reinterpret_cast<const T*>(in.data());
    T* vout = reinterpret_cast<T*>(values.data());
    int64_t* iout = reinterpret_cast<int64_t*>(indices.data());
    for_each_line(in, dim, values, indices, [&](LineOffsets o) {
      for (int64_t k = 0; k < n; ++k) line[static_cast<std::size_t>(k)] = load(src + o.in + k * in_st);
      std::iota(order.begin(), order.end(), int64_t(0));
      const auto before = [&](int64_t a, int64_t b) {
        return ordered_before<V>(line[static_cast<std::size_t>(a)], line[static_cast<std::size_t>(b)], descending);
      };
      if (keep < n) {
        std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](int64_t a, int64_t b) {
          return before(a, b) || (!before(b, a) && a < b);  // ties by position: stable
        });
      } else {
        std::stable_sort(order.begin(), order.end(), before);
      }
      for (int64_t k = 0; k < keep; ++k) {
        const int64_t from = order[static_cast<std::size_t>(k)];
        store(vout + o.values + k * v_st, static_cast<V>(line[static_cast<std::size_t>(from)]));
        iout[o.indices + k * i_st] = from;
      }
    });
  });
}

void sort_op(const Tensor& self, int64_t dim, bool descending, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  require_cpu(self, "sort");
  if (ret0 == nullptr || ret1 == nullptr) fail("sort: ret0/ret1 is null");
  const int64_t d = wrap_scan_dim(self, dim, "sort");
  // torch's meta function: self's strides when dense, else dense strides in self's order, for both outputs.
  const std::vector<int64_t> strides = empty_like_strides(self);
  TensorPtr values(new_tensor(self.sizes, strides, self.dtype));
  TensorPtr indices(new_tensor(self.sizes, strides, static_cast<int32_t>(DType::i64)));
  if (self.numel() > 0) sort_lines(self, d, descending, size_along(self, d), *values, *indices);
  *ret0 = values.release();
  *ret1 = indices.release();
}

void topk_op(const Tensor& self, int64_t k, int64_t dim, bool largest, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  require_cpu(self, "topk");
  if (ret0 == nullptr || ret1 == nullptr) fail("topk: ret0/ret1 is null");
  const int64_t d = wrap_scan_dim(self, dim, "topk");
  if (k < 0 || k > size_along(self, d))
    fail("topk: k " + std::to_string(k) + " is out of range for dim " + std::to_string(d) + " of size " +
         std::to_string(size_along(self, d)));
  std::vector<int64_t> sizes(self.sizes);
  if (!sizes.empty()) sizes[static_cast<std::size_t>(d)] = k;
  TensorPtr values(new_contiguous(sizes, self.dtype));
  TensorPtr indices(new_contiguous(sizes, static_cast<int32_t>(DType::i64)));
  if (values->numel() > 0) sort_lines(self, d, largest, k, *values, *indices);
  *ret0 = values.release();
  *ret1 = indices.release();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_sort(AtenTensorHandle self, int64_t dim, int32_t descending, AtenTensorHandle* ret0,
                                   AtenTensorHandle* ret1) {
  return guarded(__func__, [&] { sort_op(deref(self, "self"), dim, descending != 0, ret0, ret1); });
}

AOTITorchError aoti_torch_cpu_sort_stable(AtenTensorHandle self, int32_t* stable, int64_t dim, int32_t descending,
                                          AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  (void)stable;  // every sort here is stable, which satisfies stable=True and stable=False alike
  return guarded(__func__, [&] { sort_op(deref(self, "self"), dim, descending != 0, ret0, ret1); });
}

AOTITorchError aoti_torch_cpu_topk(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest, int32_t sorted,
                                   AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  (void)sorted;  // the k values always come sorted, which sorted=False allows
  return guarded(__func__, [&] { topk_op(deref(self, "self"), k, dim, largest != 0, ret0, ret1); });
}

}  // extern "C"
