// What the linear-algebra ops (linalg_*.cpp, distances.cpp, scaled_mm.cpp) share: views that reuse a tensor's
// storage, batch broadcasting of leading dims, column-major (Fortran) layouts as LAPACK-backed torch ops return
// them, and matrices copied in and out of contiguous buffers of the computing type.
#pragma once

#include "index_walk.hpp"
#include "tensor.hpp"

#include <string>
#include <vector>

namespace mpspack::shim::linalg {

// A handle on t's storage with other sizes and strides (same offset and dtype): torch's as_strided.
inline Tensor view_as(const Tensor& t, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  Tensor v;
  v.storage = t.storage;
  v.dtype = t.dtype;
  v.storage_offset = t.storage_offset;
  v.sizes = std::move(sizes);
  v.strides = std::move(strides);
  return v;
}

inline std::string shape_str(std::span<const int64_t> s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The leading dims of t before its last `keep` dims.
inline std::vector<int64_t> batch_of(const Tensor& t, int64_t keep) { return {t.sizes.begin(), t.sizes.end() - keep}; }

// torch's broadcast of two batch shapes; throws ShimError with torch's wording when they do not broadcast.
inline std::vector<int64_t> broadcast_batch(std::span<const int64_t> a, std::span<const int64_t> b) {
  const std::size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1)
      fail("The size of tensor a (" + std::to_string(x) + ") must match the size of tensor b (" + std::to_string(y) +
           ") at non-singleton dimension " + std::to_string(i));
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// Element offsets of each matrix of t (its last `keep` dims) for every index of `batch`, t's own batch dims
// broadcast to it (size 1 read with stride 0), in row-major order of `batch`.
inline std::vector<int64_t> batch_offsets(const Tensor& t, int64_t keep, std::span<const int64_t> batch) {
  const std::size_t tb = t.sizes.size() - static_cast<std::size_t>(keep);
  std::vector<int64_t> st(batch.size(), 0);
  for (std::size_t i = 0; i < tb; ++i) {
    const std::size_t d = batch.size() - tb + i;
    st[d] = t.sizes[i] == 1 ? 0 : t.strides[i];
  }
  std::vector<int64_t> offs;
  if (batch.empty()) return {0};
  for_each_index(batch, [&](std::span<const int64_t> idx) { offs.push_back(offset_of(idx, st)); });
  return offs;
}

// Strides of a batch of column-major matrices: each matrix [rows, cols] with strides (1, rows), the batch dims
// row-major over whole matrices, as torch's cloneBatchedColumnMajor.
inline std::vector<int64_t> fortran_strides(std::span<const int64_t> sizes) {
  std::vector<int64_t> st = contiguous_strides(sizes);
  const std::size_t n = sizes.size();
  if (n >= 2) {
    st[n - 2] = 1;
    st[n - 1] = std::max<int64_t>(sizes[n - 2], 1);
  }
  return st;
}

// dst[i + j * ld] = t[base + i * rs + j * cs] for the rows x cols matrix at element offset `base` of t (rs, cs:
// t's strides of its last two dims), converted to T.
template <class T>
void read_matrix(const Tensor& t, int64_t base, int64_t rows, int64_t cols, T* dst, int64_t ld) {
  const int64_t rs = t.strides[t.sizes.size() - 2], cs = t.strides[t.sizes.size() - 1];
  const auto isz = static_cast<int64_t>(t.itemsize());
  const char* p = t.data();
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i)
      dst[i + j * ld] = static_cast<T>(load_as_double(p + (base + i * rs + j * cs) * isz, t.dtype));
}

// The reverse of read_matrix.
template <class T>
void write_matrix(Tensor& t, int64_t base, int64_t rows, int64_t cols, const T* src, int64_t ld) {
  const int64_t rs = t.strides[t.sizes.size() - 2], cs = t.strides[t.sizes.size() - 1];
  const auto isz = static_cast<int64_t>(t.itemsize());
  char* p = t.data();
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i)
      store_from_double(p + (base + i * rs + j * cs) * isz, t.dtype, static_cast<double>(src[i + j * ld]));
}

inline bool is_f32_or_f64(int32_t dtype) {
  return dtype == static_cast<int32_t>(DType::f32) || dtype == static_cast<int32_t>(DType::f64);
}

// Fails with "<op>: <what> must be float32 or float64, got <dtype>" (the dtypes the LAPACK-backed ops take here).
inline void require_lapack_dtype(const Tensor& t, const char* op, const char* what) {
  if (!is_f32_or_f64(t.dtype))
    fail(std::string(op) + ": " + what + " must be float32 or float64 (complex is not supported by the mpspack " +
         "shim), got " + dtype_name(t.dtype));
}

// Whose _addmm_activation to compute: torch's CPU kernel applies exact (erf) GELU or ReLU to beta * self +
// alpha * mat1 @ mat2; its CUDA kernel the tanh GELU of cuBLASLt's epilogue, and no activation at all when mat1
// has no columns (it returns beta * self early).
enum class ActivationKernel { cpu, cuda };
TensorPtr addmm_activation(const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha, bool gelu,
                           ActivationKernel kernel);

}  // namespace mpspack::shim::linalg
