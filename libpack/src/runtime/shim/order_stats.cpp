// Order statistics: aten::median and nanmedian (of all elements), kthvalue and mode (of each line along a dim).
// The input is first made contiguous, so each line is a strided run of one buffer. NaN counts as larger than
// every number, as in torch's sort: median of anything holding NaN is NaN, nanmedian leaves NaN out (NaN only
// when nothing else is left), the k-th smallest of a line holding NaN may be NaN.
// mode follows torch's CPU kernel: the most frequent value, the smallest of them on a tie, with the position
// of its last occurrence in the line. (torch sorts (value, position) pairs by value alone with std::sort, which
// keeps positions in order for lines of at most 16 elements, the lengths its answer is defined for: checked
// in torch 1.13.1, where longer lines give an arbitrary occurrence.)
#include "aoti_shim.h"
#include "element.hpp"
#include "scan.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

// a < b with NaN above every number and equal to itself.
template <class V>
bool less_nan_last(V a, V b) {
  return (!is_nan(a) && is_nan(b)) || a < b;
}

template <class V>
bool same_value(V a, V b) {
  return a == b || (is_nan(a) && is_nan(b));
}

void require_not_bool(const Tensor& t, const char* op) {
  if (t.dtype == static_cast<int32_t>(DType::boolean)) fail(std::string(op) + ": not implemented for bool");
}

// median / nanmedian: the lower middle of the (non-NaN) values, as a 0-d tensor of self's dtype.
Tensor* median_all(const Tensor& self, bool ignore_nan, const char* op) {
  require_cpu(self, op);
  require_not_bool(self, op);
  const TensorPtr in = contiguous_as(self, self.dtype);
  TensorPtr out(new_contiguous({}, self.dtype));
  visit_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using V = decltype(load(static_cast<const T*>(nullptr)));
    const T* p = reinterpret_cast<const T*>(in->data());
    std::vector<V> values;
    values.reserve(static_cast<std::size_t>(in->numel()));
    bool saw_nan = false;
    for (int64_t i = 0; i < in->numel(); ++i) {
      const V v = load(p + i);
      if (is_nan(v)) saw_nan = true;
      else values.push_back(v);
    }
    T* o = reinterpret_cast<T*>(out->data());
    if (values.empty() || (saw_nan && !ignore_nan)) {
      // torch's answer for no values is NaN cast to the dtype; for integers that is the x86 conversion's
      // "indefinite" value, written here without the undefined cast.
      if constexpr (std::is_floating_point_v<V>) store(o, std::numeric_limits<V>::quiet_NaN());
      else store(o, static_cast<V>(std::numeric_limits<int64_t>::min()));
      return;
    }
    const auto mid = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
    std::nth_element(values.begin(), mid, values.end());
    store(o, static_cast<V>(*mid));
  });
  return out.release();
}

// Sizes of a reduction's result: self's without dim, or with it as 1 (keepdim).
std::vector<int64_t> reduced_sizes(const Tensor& self, int64_t dim, bool keepdim) {
  std::vector<int64_t> sizes(self.sizes);
  if (sizes.empty()) return sizes;
  if (keepdim) sizes[static_cast<std::size_t>(dim)] = 1;
  else sizes.erase(sizes.begin() + dim);
  return sizes;
}

// Calls f(line, values_out, index_out) for each line of contiguous `in` along dim (lines in the row-major
// order of the reduced shape, which is the contiguous results' order); `line` holds the line's values.
template <class T, class F>
void for_each_reduced_line(const Tensor& in, int64_t dim, Tensor& values, Tensor& indices, F&& f) {
  using V = decltype(load(static_cast<const T*>(nullptr)));
  const ScanLines l = scan_lines(in.sizes, dim);
  const T* src = reinterpret_cast<const T*>(in.data());
  T* vout = reinterpret_cast<T*>(values.data());
  auto* iout = reinterpret_cast<int64_t*>(indices.data());
  std::vector<V> line(static_cast<std::size_t>(l.length));
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t j = 0; j < l.inner; ++j) {
      const T* first = src + o * l.length * l.inner + j;
      for (int64_t k = 0; k < l.length; ++k) line[static_cast<std::size_t>(k)] = load(first + k * l.inner);
      const int64_t at = o * l.inner + j;
      f(line, vout + at, iout + at);
    }
  }
}

struct LineReduction {
  TensorPtr in, values, indices;
  int64_t dim = 0;
};

// The checks torch makes before kthvalue and mode, and their results allocated (contiguous).
LineReduction prepare_line_reduction(const Tensor& self, int64_t dim, bool keepdim, const char* op) {
  require_cpu(self, op);
  LineReduction r;
  r.dim = wrap_scan_dim(self, dim, op);
  const int64_t n = self.dim() == 0 ? 1 : self.sizes[static_cast<std::size_t>(r.dim)];
  if (n == 0) fail(std::string(op) + ": Expected reduction dim " + std::to_string(r.dim) + " to have non-zero size.");
  r.in = contiguous_as(self, self.dtype);
  const std::vector<int64_t> sizes = reduced_sizes(self, r.dim, keepdim);
  r.values.reset(new_contiguous(sizes, self.dtype));
  r.indices.reset(new_contiguous(sizes, static_cast<int32_t>(DType::i64)));
  return r;
}

void kthvalue_op(const Tensor& self, int64_t k, int64_t dim, bool keepdim, AtenTensorHandle* ret0,
                 AtenTensorHandle* ret1) {
  if (ret0 == nullptr || ret1 == nullptr) fail("kthvalue: ret0/ret1 is null");
  require_not_bool(self, "kthvalue");
  LineReduction r = prepare_line_reduction(self, dim, keepdim, "kthvalue");
  const int64_t n = self.dim() == 0 ? 1 : self.sizes[static_cast<std::size_t>(r.dim)];
  if (k < 1 || k > n)
    fail("kthvalue: selected number k " + std::to_string(k) + " out of range for dimension " + std::to_string(r.dim) +
         " of size " + std::to_string(n));
  visit_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using V = decltype(load(static_cast<const T*>(nullptr)));
    std::vector<int64_t> order(static_cast<std::size_t>(n));
    for_each_reduced_line<T>(*r.in, r.dim, *r.values, *r.indices, [&](const std::vector<V>& line, T* v, int64_t* i) {
      std::iota(order.begin(), order.end(), int64_t(0));
      const auto kth = order.begin() + (k - 1);
      std::nth_element(order.begin(), kth, order.end(), [&](int64_t a, int64_t b) {
        return less_nan_last(line[static_cast<std::size_t>(a)], line[static_cast<std::size_t>(b)]);
      });
      store(v, static_cast<V>(line[static_cast<std::size_t>(*kth)]));
      *i = *kth;
    });
  });
  *ret0 = r.values.release();
  *ret1 = r.indices.release();
}

void mode_op(const Tensor& self, int64_t dim, bool keepdim, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  if (ret0 == nullptr || ret1 == nullptr) fail("mode: ret0/ret1 is null");
  LineReduction r = prepare_line_reduction(self, dim, keepdim, "mode");
  visit_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using V = decltype(load(static_cast<const T*>(nullptr)));
    std::vector<int64_t> order;
    for_each_reduced_line<T>(*r.in, r.dim, *r.values, *r.indices, [&](const std::vector<V>& line, T* v, int64_t* i) {
      order.resize(line.size());
      std::iota(order.begin(), order.end(), int64_t(0));
      // Equal values keep their positions in order, so each run ends at its value's last occurrence.
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return less_nan_last(line[static_cast<std::size_t>(a)], line[static_cast<std::size_t>(b)]);
      });
      std::size_t best_end = 0, best_count = 0, run = 0;
      for (std::size_t q = 0; q < order.size(); ++q) {
        ++run;
        const bool run_ends = q + 1 == order.size() || !same_value(line[static_cast<std::size_t>(order[q])],
                                                                   line[static_cast<std::size_t>(order[q + 1])]);
        if (!run_ends) continue;
        if (run > best_count) best_count = run, best_end = q;  // strictly more: the smaller value wins a tie
        run = 0;
      }
      store(v, static_cast<V>(line[static_cast<std::size_t>(order[best_end])]));
      *i = order[best_end];
    });
  });
  *ret0 = r.values.release();
  *ret1 = r.indices.release();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_median(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("median: ret0 is null");
    *ret0 = median_all(deref(self, "self"), false, "median");
  });
}

AOTITorchError aoti_torch_cpu_nanmedian(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("nanmedian: ret0 is null");
    *ret0 = median_all(deref(self, "self"), true, "nanmedian");
  });
}

AOTITorchError aoti_torch_cpu_kthvalue(AtenTensorHandle self, int64_t k, int64_t dim, int32_t keepdim,
                                       AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] { kthvalue_op(deref(self, "self"), k, dim, keepdim != 0, ret0, ret1); });
}

AOTITorchError aoti_torch_cpu_mode(AtenTensorHandle self, int64_t dim, int32_t keepdim, AtenTensorHandle* ret0,
                                   AtenTensorHandle* ret1) {
  return guarded(__func__, [&] { mode_op(deref(self, "self"), dim, keepdim != 0, ret0, ret1); });
}

}  // extern "C"
