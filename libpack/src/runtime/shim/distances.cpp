// aten::_cdist_forward and _pdist_forward: p-norm distances between the rows of two batches of matrices, and
// between each pair of rows of one matrix. p = 0 counts the differing coordinates, p = inf takes the largest
// difference, as torch's CPU kernel. For p = 2 _cdist_forward follows torch's compute_mode: 1, or 0 with more
// than 25 rows on either side, computes |x|^2 + |y|^2 - 2 x.y through one product per batch and clamps at 0
// before the square root, as torch's _euclidean_dist does (faster, and less exact for near rows); 2 never does.
// float32 and float64, as torch's CPU kernels; results contiguous.
#include "aoti_shim.h"
#include "linalg_util.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::linalg;

namespace {

// The p-norm of the difference of rows a and b (c coordinates, contiguous T).
template <class T>
T row_distance(const T* a, const T* b, int64_t c, double p) {
  T acc = 0;
  if (p == 0.0) {
    for (int64_t k = 0; k < c; ++k) acc += T(a[k] != b[k]);
    return acc;
  }
  if (std::isinf(p)) {
    for (int64_t k = 0; k < c; ++k) acc = std::max(acc, T(std::abs(a[k] - b[k])));
    return acc;
  }
  if (p == 1.0) {
    for (int64_t k = 0; k < c; ++k) acc += std::abs(a[k] - b[k]);
    return acc;
  }
  if (p == 2.0) {
    for (int64_t k = 0; k < c; ++k) acc += (a[k] - b[k]) * (a[k] - b[k]);
    return std::sqrt(acc);
  }
  for (int64_t k = 0; k < c; ++k) acc += T(std::pow(std::abs(a[k] - b[k]), T(p)));
  return T(std::pow(acc, T(1.0 / p)));
}

// Row-major [rows, cols] copy of t's matrix at element offset `base`.
template <class T>
std::vector<T> rows_of(const Tensor& t, int64_t base, int64_t rows, int64_t cols) {
  std::vector<T> col_major(static_cast<std::size_t>(rows * cols)), out(col_major.size());
  read_matrix(t, base, rows, cols, col_major.data(), std::max<int64_t>(rows, 1));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < cols; ++k) out[std::size_t(i * cols + k)] = col_major[std::size_t(i + k * rows)];
  return out;
}

// torch's _euclidean_dist for one batch: the product of [-2x, |x|^2, 1] and [y, 1, |y|^2], clamped at 0, rooted.
template <class T>
void euclid_by_product(const std::vector<T>& x, const std::vector<T>& y, int64_t r1, int64_t r2, int64_t c, T* out) {
  std::vector<T> nx(std::size_t(r1), 0), ny(std::size_t(r2), 0);
  for (int64_t i = 0; i < r1; ++i)
    for (int64_t k = 0; k < c; ++k) nx[std::size_t(i)] += x[std::size_t(i * c + k)] * x[std::size_t(i * c + k)];
  for (int64_t j = 0; j < r2; ++j)
    for (int64_t k = 0; k < c; ++k) ny[std::size_t(j)] += y[std::size_t(j * c + k)] * y[std::size_t(j * c + k)];
  for (int64_t i = 0; i < r1; ++i)
    for (int64_t j = 0; j < r2; ++j) {
      T acc = 0;
      for (int64_t k = 0; k < c; ++k) acc += T(-2) * x[std::size_t(i * c + k)] * y[std::size_t(j * c + k)];
      acc += nx[std::size_t(i)] + ny[std::size_t(j)];
      out[i * r2 + j] = std::sqrt(std::max(acc, T(0)));
    }
}

void check_cdist(const Tensor& x1, const Tensor& x2, double p, int64_t mode) {
  require_cpu(x1, "_cdist_forward");
  require_cpu(x2, "_cdist_forward");
  if (x1.dim() < 2) fail("cdist only supports at least 2D tensors, X1 got: " + std::to_string(x1.dim()) + "D");
  if (x2.dim() < 2) fail("cdist only supports at least 2D tensors, X2 got: " + std::to_string(x2.dim()) + "D");
  if (x1.sizes.back() != x2.sizes.back())
    fail("cdist: X1 and X2 must have the same number of columns. X1: " + std::to_string(x1.sizes.back()) +
         " X2: " + std::to_string(x2.sizes.back()));
  if (!is_f32_or_f64(x1.dtype))
    fail(std::string("cdist only supports floating-point dtypes (float32, float64), X1 got: ") + dtype_name(x1.dtype));
  if (!is_f32_or_f64(x2.dtype))
    fail(std::string("cdist only supports floating-point dtypes (float32, float64), X2 got: ") + dtype_name(x2.dtype));
  if (x1.dtype != x2.dtype)
    fail(std::string("cdist: X1 and X2 must have the same dtype, got ") + dtype_name(x1.dtype) + " and " +
         dtype_name(x2.dtype));
  if (!(p >= 0)) fail("cdist only supports non-negative p values");
  if (mode < 0 || mode > 2) fail("cdist: possible modes: 0, 1, 2, but was: " + std::to_string(mode));
}

TensorPtr cdist(const Tensor& x1, const Tensor& x2, double p, int64_t mode) {
  check_cdist(x1, x2, p, mode);
  const std::vector<int64_t> batch = broadcast_batch(batch_of(x1, 2), batch_of(x2, 2));
  const int64_t r1 = x1.sizes[x1.sizes.size() - 2], r2 = x2.sizes[x2.sizes.size() - 2], c = x1.sizes.back();
  std::vector<int64_t> sizes = batch;
  sizes.push_back(r1);
  sizes.push_back(r2);
  TensorPtr r(new_contiguous(sizes, x1.dtype));
  if (r->numel() == 0) return r;
  const bool by_product = p == 2.0 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
  const auto o1 = batch_offsets(x1, 2, batch), o2 = batch_offsets(x2, 2, batch);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    T* out = reinterpret_cast<T*>(r->data());
    for (std::size_t b = 0; b < o1.size(); ++b, out += r1 * r2) {
      const std::vector<T> x = rows_of<T>(x1, o1[b], r1, c), y = rows_of<T>(x2, o2[b], r2, c);
      if (by_product && c > 0) {
        euclid_by_product(x, y, r1, r2, c, out);
        continue;
      }
      for (int64_t i = 0; i < r1; ++i)
        for (int64_t j = 0; j < r2; ++j) out[i * r2 + j] = row_distance(x.data() + i * c, y.data() + j * c, c, p);
    }
  };
  if (x1.dtype == static_cast<int32_t>(DType::f32)) run(float{});
  else run(double{});
  return r;
}

TensorPtr pdist(const Tensor& x, double p) {
  require_cpu(x, "_pdist_forward");
  if (!x.is_contiguous()) fail("_pdist_forward requires contiguous input");
  if (x.dim() != 2) fail("pdist only supports 2D tensors, got: " + std::to_string(x.dim()) + "D");
  if (!is_f32_or_f64(x.dtype))
    fail(std::string("pdist only supports floating-point dtypes (float32, float64), got ") + dtype_name(x.dtype));
  const int64_t n = x.sizes[0], c = x.sizes[1];
  const int64_t count[1] = {n <= 1 ? 0 : n * (n - 1) / 2};
  TensorPtr r(new_contiguous(count, x.dtype));
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* rows = reinterpret_cast<const T*>(x.data());
    T* out = reinterpret_cast<T*>(r->data());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) *out++ = c == 0 ? T(0) : row_distance(rows + i * c, rows + j * c, c, p);
  };
  if (x.dtype == static_cast<int32_t>(DType::f32)) run(float{});
  else run(double{});
  return r;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__cdist_forward(AtenTensorHandle x1, AtenTensorHandle x2, double p, int64_t* compute_mode,
                                             AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("_cdist_forward: ret0 is null");
    *ret0 = cdist(deref(x1, "x1"), deref(x2, "x2"), p, compute_mode ? *compute_mode : 0).release();
  });
}

AOTITorchError aoti_torch_cpu__pdist_forward(AtenTensorHandle self, double p, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("_pdist_forward: ret0 is null");
    *ret0 = pdist(deref(self, "self"), p).release();
  });
}

}  // extern "C"
