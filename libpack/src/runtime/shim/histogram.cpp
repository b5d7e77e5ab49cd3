// Histograms: aten::histc, histogram.bin_ct and _histogramdd_from_bin_cts. The input is read as M points of N
// coordinates (histc and histogram: N = 1, every element a point); each dim has bins[d] equal bins between
// an outer left and right edge; a point outside them, or with a NaN coordinate, is left out; the last bin
// includes its right edge. As torch's CPU kernel, the arithmetic runs in the input's dtype, each operation
// rounded to it (float16 and bfloat16 included): the edges are torch.linspace's (from both ends towards the
// middle), a coordinate's bin is (x - left) * bins / (right - left) truncated, and histogram and histogramdd
// then correct it against the neighbouring edges (histc does not, as torch). density divides by the total
// and by each bin's width.
#include "aoti_shim.h"
#include "element.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

// x rounded to T's precision (the value a T holding it stands for).
template <class T, class V>
V rnd(V x) {
  if constexpr (std::is_same_v<T, Half>) return half_to_float(float_to_half(x));
  else if constexpr (std::is_same_v<T, BF16>) return bf16_to_float(float_to_bf16(x));
  else return x;
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void require_floating(const Tensor& t, const char* op) {
  switch (static_cast<DType>(t.dtype)) {
    case DType::f32:
    case DType::f64:
    case DType::f16:
    case DType::bf16: return;
    default: fail(std::string(op) + ": not implemented for " + dtype_name(t.dtype));
  }
}

// What one histogram computes: M points of N coordinates (contiguous, row-major), optional weights, bins and
// outer edges per dim.
struct HistJob {
  const Tensor* points = nullptr;  // contiguous, M * N elements
  const Tensor* weight = nullptr;  // contiguous, M elements, or null
  int64_t m = 0, n = 1;
  std::vector<int64_t> bins;
  std::vector<double> left, right;
  bool local_search = true, density = false;
};

// torch.linspace(left, right, bins + 1) in T.
template <class T, class V>
std::vector<V> linspace(double left, double right, int64_t steps) {
  const V start = rnd<T>(static_cast<V>(left)), end = rnd<T>(static_cast<V>(right));
  const V step = rnd<T>(rnd<T>(end - start) / static_cast<V>(steps - 1));
  std::vector<V> e(static_cast<std::size_t>(steps));
  const int64_t halfway = steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    e[static_cast<std::size_t>(i)] = i < halfway ? rnd<T>(start + rnd<T>(step * static_cast<V>(i)))
                                                 : rnd<T>(end - rnd<T>(step * static_cast<V>(steps - i - 1)));
  }
  return e;
}

// The bin of coordinate x along one dim with `edges`, or -1 when x is outside them or NaN.
template <class T, class V>
int64_t bin_of(V x, const std::vector<V>& edges, bool local_search) {
  const V lo = edges.front(), hi = edges.back();
  if (!(x >= lo && x <= hi)) return -1;
  const auto n_edges = static_cast<int64_t>(edges.size());
  int64_t pos = static_cast<int64_t>(rnd<T>(rnd<T>(rnd<T>(x - lo) * static_cast<V>(n_edges - 1)) / rnd<T>(hi - lo)));
  if (local_search) {
    const int64_t from = std::max<int64_t>(0, pos - 1), to = std::min<int64_t>(pos + 2, n_edges);
    pos = std::upper_bound(edges.begin() + from, edges.begin() + to, x) - edges.begin() - 1;
  }
  if (pos == n_edges - 1) pos -= 1;
  return std::clamp<int64_t>(pos, 0, n_edges - 2);  // never outside the histogram, whatever the rounding did
}

// Fills `hist` (contiguous, shape bins, T's dtype) and, when given, each dim's edges into `edges_out[d]`.
template <class T>
void histogram_into(const HistJob& job, Tensor& hist, const std::vector<Tensor*>& edges_out) {
  using V = decltype(load(static_cast<const T*>(nullptr)));
  std::vector<std::vector<V>> edges;
  for (int64_t d = 0; d < job.n; ++d) {
    const auto i = static_cast<std::size_t>(d);
    edges.push_back(linspace<T, V>(job.left[i], job.right[i], job.bins[i] + 1));
  }
  const T* p = reinterpret_cast<const T*>(job.points->data());
  const T* w = job.weight ? reinterpret_cast<const T*>(job.weight->data()) : nullptr;
  std::vector<V> h(static_cast<std::size_t>(hist.numel()), V(0));
  for (int64_t pt = 0; pt < job.m; ++pt) {
    int64_t at = 0;
    for (int64_t d = 0; d < job.n && at >= 0; ++d) {
      const int64_t b =
          bin_of<T>(static_cast<V>(load(p + pt * job.n + d)), edges[static_cast<std::size_t>(d)], job.local_search);
      at = b < 0 ? -1 : at * job.bins[static_cast<std::size_t>(d)] + b;
    }
    if (at < 0) continue;
    auto& cell = h[static_cast<std::size_t>(at)];
    cell = rnd<T>(cell + (w ? static_cast<V>(load(w + pt)) : V(1)));
  }
  if (job.density) {
    V total = 0;
    for (V v : h) total += v;
    total = rnd<T>(total);
    for (std::size_t c = 0; c < h.size(); ++c) {
      V v = rnd<T>(h[c] / total);
      std::size_t rest = c;  // the cell's bin along each dim, last dim first
      for (int64_t d = job.n - 1; d >= 0; --d) {
        const auto nb = static_cast<std::size_t>(job.bins[static_cast<std::size_t>(d)]);
        const std::size_t b = rest % nb;
        rest /= nb;
        const auto& e = edges[static_cast<std::size_t>(d)];
        v = rnd<T>(v / rnd<T>(e[b + 1] - e[b]));
      }
      h[c] = v;
    }
  }
  T* o = reinterpret_cast<T*>(hist.data());
  for (std::size_t c = 0; c < h.size(); ++c) store(o + c, h[c]);
  for (std::size_t d = 0; d < edges_out.size(); ++d) {
    T* e = reinterpret_cast<T*>(edges_out[d]->data());
    for (std::size_t k = 0; k < edges[d].size(); ++k) store(e + k, edges[d][k]);
  }
}

void check_bins(const std::vector<int64_t>& bins) {
  for (std::size_t d = 0; d < bins.size(); ++d)
    if (bins[d] <= 0)
      fail("torch.histogram(): bins must be > 0, but got " + std::to_string(bins[d]) + " for dimension " +
           std::to_string(d));
}

// Each column's smallest and largest value (NaN when the column holds one), as doubles.
void data_range(const HistJob& job, std::vector<double>& lo, std::vector<double>& hi) {
  visit_dtype(job.points->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = reinterpret_cast<const T*>(job.points->data());
    for (int64_t d = 0; d < job.n; ++d) {
      double a = static_cast<double>(load(p + d)), b = a;
      for (int64_t pt = 0; pt < job.m; ++pt) {
        const double v = static_cast<double>(load(p + pt * job.n + d));
        if (std::isnan(v) || std::isnan(a)) a = b = std::nan("");
        else a = std::min(a, v), b = std::max(b, v);
      }
      lo[static_cast<std::size_t>(d)] = a;
      hi[static_cast<std::size_t>(d)] = b;
    }
  });
}

// histogram / histogramdd's outer edges: `range` (2 per dim) when given, else the data's (0 and 1 for no
// points); an empty range widened by 0.5 each way.
void select_outer_edges(HistJob& job, const double* range, int64_t range_len) {
  job.left.assign(static_cast<std::size_t>(job.n), 0.0);
  job.right.assign(static_cast<std::size_t>(job.n), 1.0);
  if (range != nullptr) {
    if (range_len != 2 * job.n)
      fail("torch.histogramdd: for a " + std::to_string(job.n) + "-dimensional histogram range should have " +
           std::to_string(2 * job.n) + " elements, but got " + std::to_string(range_len));
    for (std::size_t d = 0; d < job.left.size(); ++d) job.left[d] = range[2 * d], job.right[d] = range[2 * d + 1];
  } else if (job.m > 0) {
    // torch finds the data's range for float32 and float64 only (its kernel takes the half types)
    const auto dt = static_cast<DType>(job.points->dtype);
    if (dt != DType::f32 && dt != DType::f64)
      fail(std::string("histogramdd: finding the range is not implemented for ") + dtype_name(job.points->dtype) +
           ": give a range");
    data_range(job, job.left, job.right);
  }
  for (std::size_t d = 0; d < job.left.size(); ++d) {
    double& l = job.left[d];
    double& r = job.right[d];
    if (!std::isfinite(l) || !std::isfinite(r))
      fail("torch.histogramdd: dimension " + std::to_string(d) + "'s range [" + num(l) + ", " + num(r) +
           "] is not finite");
    if (l > r)
      fail("torch.histogramdd: min should not exceed max, but got min " + num(l) + " max " + num(r) +
           " for dimension " + std::to_string(d));
    if (l == r) l -= 0.5, r += 0.5;
  }
}

// The points of `self` as [M, N] (contiguous) and the weights checked against them.
struct Inputs {
  TensorPtr points, weight;
};

Inputs prepare_inputs(HistJob& job, const Tensor& self, AtenTensorHandle* weight, int64_t n, const char* op) {
  require_cpu(self, op);
  require_floating(self, op);
  Inputs in;
  in.points = contiguous_as(self, self.dtype);
  job.n = n;
  job.m = n == 0 ? 0 : self.numel() / n;
  if (weight != nullptr) {
    const Tensor& w = deref(*weight, "weight");
    require_cpu(w, op);
    if (w.dtype != self.dtype)
      fail(std::string("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should ") +
           "have the same dtype, but got input(" + dtype_name(self.dtype) + "), and weight(" + dtype_name(w.dtype) +
           ")");
    if (w.numel() != job.m)
      fail("torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor "
           "excluding its innermost dimension, but got " +
           std::to_string(job.m) + " points and weight with " + std::to_string(w.numel()) + " elements");
    in.weight = contiguous_as(w, w.dtype);
  }
  job.points = in.points.get();
  job.weight = in.weight.get();
  return in;
}

void run_histogram(const HistJob& job, Tensor& hist, const std::vector<Tensor*>& edges_out) {
  visit_dtype(hist.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<decltype(load(static_cast<const T*>(nullptr)))>)
      histogram_into<T>(job, hist, edges_out);
  });
}

Tensor* histc(const Tensor& self, int64_t bins, double min, double max) {
  HistJob job;
  const Inputs in = prepare_inputs(job, self, nullptr, 1, "histc");
  job.bins = {bins};
  check_bins(job.bins);
  job.local_search = false;
  double lo = min, hi = max;
  if (lo == hi && job.m > 0) {
    std::vector<double> a(1), b(1);
    data_range(job, a, b);
    lo = a[0], hi = b[0];
  }
  if (lo == hi) lo -= 1, hi += 1;
  if (!std::isfinite(lo) || !std::isfinite(hi))
    fail("torch.histc: range of [" + num(lo) + ", " + num(hi) + "] is not finite");
  if (!(lo < hi)) fail("torch.histc: max must be larger than min");
  job.left = {lo};
  job.right = {hi};
  TensorPtr hist(new_contiguous(job.bins, self.dtype));
  run_histogram(job, *hist, {});
  return hist.release();
}

void histogram_bin_ct(const Tensor& self, int64_t bins, const double** range, int64_t range_len,
                      AtenTensorHandle* weight, bool density, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  if (ret0 == nullptr || ret1 == nullptr) fail("histogram: ret0/ret1 is null");
  HistJob job;
  const Inputs in = prepare_inputs(job, self, weight, 1, "histogram");
  job.bins = {bins};
  check_bins(job.bins);
  job.density = density;
  select_outer_edges(job, range ? *range : nullptr, range_len);
  TensorPtr hist(new_contiguous(job.bins, self.dtype));
  const int64_t n_edges[1] = {bins + 1};
  TensorPtr edges(new_contiguous(n_edges, self.dtype));
  run_histogram(job, *hist, {edges.get()});
  *ret0 = hist.release();
  *ret1 = edges.release();
}

Tensor* histogramdd_from_bin_cts(const Tensor& self, const int64_t* bins, int64_t bins_len, const double** range,
                                 int64_t range_len, AtenTensorHandle* weight, bool density) {
  require_cpu(self, "histogramdd");
  if (self.dim() < 2) fail("torch.histogramdd: input tensor should have at least 2 dimensions");
  const int64_t n = self.sizes.back();
  if (bins_len != n || (bins_len > 0 && bins == nullptr))
    fail("torch.histogramdd: expected " + std::to_string(n) + " bin counts for a " + std::to_string(n) +
         "-dimensional histogram but got " + std::to_string(bins_len));
  HistJob job;
  const Inputs in = prepare_inputs(job, self, weight, n, "histogramdd");
  job.bins.assign(bins, bins + bins_len);
  check_bins(job.bins);
  job.density = density;
  select_outer_edges(job, range ? *range : nullptr, range_len);
  TensorPtr hist(new_contiguous(job.bins, self.dtype));
  run_histogram(job, *hist, {});
  return hist.release();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_histc(AtenTensorHandle self, int64_t bins, double min, double max,
                                    AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("histc: ret0 is null");
    *ret0 = histc(deref(self, "self"), bins, min, max);
  });
}

AOTITorchError aoti_torch_cpu_histogram_bin_ct(AtenTensorHandle self, int64_t bins, const double** range,
                                               int64_t range_len_, AtenTensorHandle* weight, int32_t density,
                                               AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    histogram_bin_ct(deref(self, "self"), bins, range, range_len_, weight, density != 0, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu__histogramdd_from_bin_cts(AtenTensorHandle self, const int64_t* bins, int64_t bins_len_,
                                                        const double** range, int64_t range_len_,
                                                        AtenTensorHandle* weight, int32_t density,
                                                        AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("histogramdd: ret0 is null");
    *ret0 = histogramdd_from_bin_cts(deref(self, "self"), bins, bins_len_, range, range_len_, weight, density != 0);
  });
}

}  // extern "C"
