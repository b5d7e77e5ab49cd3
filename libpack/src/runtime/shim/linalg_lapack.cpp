// The LAPACK-backed ops torch's CPU kernels run on LAPACK too: cholesky_solve (potrs), cholesky_inverse (potri),
// triangular_solve (trsm, which does not check for a zero diagonal, as torch does not), geqrf, ormqr (orm2r) and
// lu_unpack (no LAPACK). float32 and float64 only: complex would need a second set of routines and its own
// conversions, and no model we build uses it. Leading batch dims broadcast where torch broadcasts them, and
// results come back in torch's layout: each matrix column-major (strides 1, rows), the batch row-major over
// matrices, as AOTInductor's generated code expects.
//
// Why Fortran LAPACK symbols from the static OpenBLAS the shim already links: OpenBLAS carries LAPACK, and the
// routines used here need nothing from libgfortran, so the binary keeps needing no Fortran runtime. LAPACKE would
// only add a C layer over the same symbols. ormqr runs on the unblocked orm2r: the blocked ormqr names its
// sub-calls for ilaenv with Fortran string concatenation, which needs libgfortran's _gfortran_concat_string;
// the reflectors applied are the same, in the same order.
#include "aoti_shim.h"
#include "linalg_util.hpp"
#include "tensor.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

extern "C" {
// LP64 LAPACK (Debian's OpenBLAS): int is 32 bits; each character argument has a hidden length argument.
void spotrs_(const char*, const int*, const int*, const float*, const int*, float*, const int*, int*, std::size_t);
void dpotrs_(const char*, const int*, const int*, const double*, const int*, double*, const int*, int*, std::size_t);
void spotri_(const char*, const int*, float*, const int*, int*, std::size_t);
void dpotri_(const char*, const int*, double*, const int*, int*, std::size_t);
void sgeqrf_(const int*, const int*, float*, const int*, float*, float*, const int*, int*);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void sorm2r_(const char*, const char*, const int*, const int*, const int*, const float*, const int*, const float*,
             float*, const int*, float*, int*, std::size_t, std::size_t);
void dorm2r_(const char*, const char*, const int*, const int*, const int*, const double*, const int*, const double*,
             double*, const int*, double*, int*, std::size_t, std::size_t);
}

using namespace mpspack::shim;
using namespace mpspack::shim::linalg;

namespace {

int as_int(int64_t v, const char* op) {
  if (v < 0 || v > INT32_MAX)
    fail(std::string(op) + ": a matrix dimension of " + std::to_string(v) + " is too large for LAPACK");
  return static_cast<int>(v);
}

void potrs(char uplo, int n, int nrhs, const float* a, float* b, int* info) {
  spotrs_(&uplo, &n, &nrhs, a, &n, b, &n, info, 1);
}
void potrs(char uplo, int n, int nrhs, const double* a, double* b, int* info) {
  dpotrs_(&uplo, &n, &nrhs, a, &n, b, &n, info, 1);
}
void potri(char uplo, int n, float* a, int* info) { spotri_(&uplo, &n, a, &n, info, 1); }
void potri(char uplo, int n, double* a, int* info) { dpotri_(&uplo, &n, a, &n, info, 1); }
void geqrf(int m, int n, float* a, float* tau, float* work, int lwork, int* info) {
  sgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
}
void geqrf(int m, int n, double* a, double* tau, double* work, int lwork, int* info) {
  dgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
}
void orm2r(char side, char trans, int m, int n, int k, const float* a, int lda, const float* tau, float* c, float* work,
           int* info) {
  sorm2r_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &m, work, info, 1, 1);
}
void orm2r(char side, char trans, int m, int n, int k, const double* a, int lda, const double* tau, double* c,
           double* work, int* info) {
  dorm2r_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &m, work, info, 1, 1);
}
void trsm(bool upper, bool trans, bool unit, int n, int nrhs, const float* a, float* b) {
  cblas_strsm(CblasColMajor, CblasLeft, upper ? CblasUpper : CblasLower, trans ? CblasTrans : CblasNoTrans,
              unit ? CblasUnit : CblasNonUnit, n, nrhs, 1.0f, a, n, b, n);
}
void trsm(bool upper, bool trans, bool unit, int n, int nrhs, const double* a, double* b) {
  cblas_dtrsm(CblasColMajor, CblasLeft, upper ? CblasUpper : CblasLower, trans ? CblasTrans : CblasNoTrans,
              unit ? CblasUnit : CblasNonUnit, n, nrhs, 1.0, a, n, b, n);
}

// Calls f(T{}) with float for float32 and double for float64.
template <class F>
void on_real(int32_t dtype, F&& f) {
  if (dtype == static_cast<int32_t>(DType::f32)) f(float{});
  else f(double{});
}

std::string size_pair(const Tensor& t) {
  return std::to_string(t.sizes[t.sizes.size() - 2]) + " by " + std::to_string(t.sizes.back());
}

// The checks torch's linearSolveCheckInputs makes for (b, A): at least 2-D, one dtype, A square with as many
// rows as b.
void check_solve_inputs(const Tensor& b, const Tensor& a, const char* name) {
  require_cpu(b, name);
  require_cpu(a, name);
  if (b.dim() < 2)
    fail(std::string(name) + ": b should have at least 2 dimensions, but has " + std::to_string(b.dim()) +
         " dimensions instead");
  if (a.dim() < 2)
    fail(std::string(name) + ": A should have at least 2 dimensions, but has " + std::to_string(a.dim()) +
         " dimensions instead");
  if (a.dtype != b.dtype)
    fail(std::string(name) + ": Expected b and A to have the same dtype, but found b of type " + dtype_name(b.dtype) +
         " and A of type " + dtype_name(a.dtype) + " instead.");
  require_lapack_dtype(a, name, "A");
  const int64_t n = a.sizes.back();
  if (a.sizes[a.sizes.size() - 2] != n)
    fail(std::string(name) + ": A must be batches of square matrices, but they are " + size_pair(a) + " matrices");
  if (b.sizes[b.sizes.size() - 2] != n)
    fail(std::string("Incompatible matrix sizes for ") + name + ": each A matrix is " + size_pair(a) +
         " but each b matrix is " + size_pair(b));
}

// The result of a solve: batch(b) broadcast with batch(A), then b's matrix shape; column-major matrices.
TensorPtr solve_result(const Tensor& b, const Tensor& a, std::vector<int64_t>& batch) {
  batch = broadcast_batch(batch_of(b, 2), batch_of(a, 2));
  std::vector<int64_t> sizes = batch;
  sizes.push_back(b.sizes[b.sizes.size() - 2]);
  sizes.push_back(b.sizes.back());
  return TensorPtr(new_tensor(sizes, fortran_strides(sizes), b.dtype));
}

TensorPtr cholesky_solve(const Tensor& b, const Tensor& a, bool upper) {
  check_solve_inputs(b, a, "cholesky_solve");
  std::vector<int64_t> batch;
  TensorPtr x = solve_result(b, a, batch);
  const int n = as_int(a.sizes.back(), "cholesky_solve"), k = as_int(b.sizes.back(), "cholesky_solve");
  if (x->numel() == 0) return x;
  const auto ob = batch_offsets(b, 2, batch), oa = batch_offsets(a, 2, batch), ox = batch_offsets(*x, 2, batch);
  on_real(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> am(std::size_t(n) * n), xm(std::size_t(n) * k);
    for (std::size_t i = 0; i < ob.size(); ++i) {
      read_matrix(a, oa[i], n, n, am.data(), n);
      read_matrix(b, ob[i], n, k, xm.data(), n);
      int info = 0;
      potrs(upper ? 'U' : 'L', n, k, am.data(), xm.data(), &info);
      write_matrix(*x, ox[i], n, k, xm.data(), n);
    }
  });
  return x;
}

// Copies the triangle potri filled (upper or lower) onto the other one: the inverse is symmetric.
template <class T>
void symmetrize(T* a, int n, bool upper) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (upper ? i < j : i > j) a[j + std::size_t(i) * n] = a[i + std::size_t(j) * n];
}

TensorPtr cholesky_inverse(const Tensor& a, bool upper) {
  require_cpu(a, "cholesky_inverse");
  if (a.dim() < 2) fail("cholesky_inverse: The input tensor A must have at least 2 dimensions.");
  require_lapack_dtype(a, "cholesky_inverse", "A");
  if (a.sizes[a.sizes.size() - 2] != a.sizes.back())
    fail("cholesky_inverse: A must be batches of square matrices, but they are " + size_pair(a) + " matrices");
  TensorPtr r(new_tensor(a.sizes, fortran_strides(a.sizes), a.dtype));
  const int n = as_int(a.sizes.back(), "cholesky_inverse");
  if (r->numel() == 0) return r;
  const std::vector<int64_t> batch = batch_of(a, 2);
  const auto oa = batch_offsets(a, 2, batch), orr = batch_offsets(*r, 2, batch);
  on_real(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> m(std::size_t(n) * n);
    for (std::size_t i = 0; i < oa.size(); ++i) {
      read_matrix(a, oa[i], n, n, m.data(), n);
      int info = 0;
      potri(upper ? 'U' : 'L', n, m.data(), &info);
      if (info > 0)
        fail(std::string("cholesky_inverse: ") + (batch.empty() ? "" : "(Batch element " + std::to_string(i) + "): ") +
             "The diagonal element " + std::to_string(info) +
             " is zero, the inversion could not be completed because the input matrix is singular.");
      symmetrize(m.data(), n, upper);
      write_matrix(*r, orr[i], n, n, m.data(), n);
    }
  });
  return r;
}

void triangular_solve(const Tensor& b, const Tensor& a, bool upper, bool trans, bool unit, TensorPtr& x,
                      TensorPtr& coeff) {
  check_solve_inputs(b, a, "triangular_solve");
  std::vector<int64_t> batch;
  x = solve_result(b, a, batch);
  std::vector<int64_t> csizes = batch;
  csizes.push_back(a.sizes[a.sizes.size() - 2]);
  csizes.push_back(a.sizes.back());
  coeff.reset(new_tensor(csizes, fortran_strides(csizes), a.dtype));
  const int n = as_int(a.sizes.back(), "triangular_solve"), k = as_int(b.sizes.back(), "triangular_solve");
  if (x->numel() == 0 && coeff->numel() == 0) return;
  const auto ob = batch_offsets(b, 2, batch), oa = batch_offsets(a, 2, batch);
  const auto ox = batch_offsets(*x, 2, batch), oc = batch_offsets(*coeff, 2, batch);
  on_real(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> am(std::size_t(n) * n), xm(std::size_t(n) * k);
    for (std::size_t i = 0; i < ob.size(); ++i) {
      read_matrix(a, oa[i], n, n, am.data(), n);
      write_matrix(*coeff, oc[i], n, n, am.data(), n);
      if (k == 0 || n == 0) continue;
      read_matrix(b, ob[i], n, k, xm.data(), n);
      trsm(upper, trans, unit, n, k, am.data(), xm.data());
      write_matrix(*x, ox[i], n, k, xm.data(), n);
    }
  });
}

void geqrf_op(const Tensor& a, TensorPtr& qr, TensorPtr& tau) {
  require_cpu(a, "geqrf");
  if (a.dim() < 2) fail("torch.geqrf: input must have at least 2 dimensions.");
  require_lapack_dtype(a, "geqrf", "input");
  const int m = as_int(a.sizes[a.sizes.size() - 2], "geqrf"), n = as_int(a.sizes.back(), "geqrf");
  const std::vector<int64_t> batch = batch_of(a, 2);
  qr.reset(new_tensor(a.sizes, fortran_strides(a.sizes), a.dtype));
  std::vector<int64_t> tsizes = batch;
  tsizes.push_back(std::min(m, n));
  tau.reset(new_contiguous(tsizes, a.dtype));
  if (qr->numel() == 0) return;
  const auto oa = batch_offsets(a, 2, batch), oq = batch_offsets(*qr, 2, batch);
  const int k = std::min(m, n);
  on_real(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> mat(std::size_t(m) * n), t(std::size_t(std::max(k, 1)));
    T query{};
    int info = 0;
    geqrf(m, n, mat.data(), t.data(), &query, -1, &info);
    std::vector<T> work(std::max<std::size_t>(1, static_cast<std::size_t>(query)));
    for (std::size_t i = 0; i < oa.size(); ++i) {
      read_matrix(a, oa[i], m, n, mat.data(), m);
      geqrf(m, n, mat.data(), t.data(), work.data(), static_cast<int>(work.size()), &info);
      write_matrix(*qr, oq[i], m, n, mat.data(), m);
      for (int j = 0; j < k; ++j)
        store_from_double(tau->data() + (int64_t(i) * k + j) * int64_t(tau->itemsize()), tau->dtype, double(t[j]));
    }
  });
}

void check_ormqr(const Tensor& a, const Tensor& tau, const Tensor& c, bool left) {
  for (const Tensor* t : {&a, &tau, &c}) require_cpu(*t, "ormqr");
  if (a.dim() < 2) fail("torch.ormqr: input must have at least 2 dimensions.");
  if (c.dim() < 2) fail("torch.ormqr: other must have at least 2 dimensions.");
  const int64_t cond = left ? c.sizes[c.sizes.size() - 2] : c.sizes.back();
  const std::string which = left ? "-2" : "-1";
  if (cond != a.sizes[a.sizes.size() - 2])
    fail("torch.ormqr: other.shape[" + which + "] must be equal to input.shape[-2]");
  if (tau.dim() == 0 || tau.sizes.back() != std::min(cond, a.sizes.back()))
    fail("torch.ormqr: tau.shape[-1] must be equal to min(other.shape[" + which + "], input.shape[-1])");
  if (a.dim() - tau.dim() != 1)
    fail("torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal to " +
         std::to_string(tau.dim()) + " and input.ndim is equal to " + std::to_string(a.dim()));
  if (a.dim() != c.dim())
    fail("torch.ormqr: Expected other to have the same number of dimensions as input, but got other.ndim equal to " +
         std::to_string(c.dim()) + " and input.ndim is equal to " + std::to_string(a.dim()));
  if (batch_of(tau, 1) != batch_of(a, 2))
    fail("torch.ormqr: Expected batch dimensions of tau to be equal to input.shape[:-2], but got " +
         shape_str(batch_of(tau, 1)));
  if (batch_of(c, 2) != batch_of(a, 2))
    fail("torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], but got " +
         shape_str(batch_of(c, 2)));
  if (tau.dtype != a.dtype || c.dtype != a.dtype)
    fail(std::string("torch.ormqr: Expected input, tau and other to have the same dtype, but got ") +
         dtype_name(a.dtype) + ", " + dtype_name(tau.dtype) + " and " + dtype_name(c.dtype));
  require_lapack_dtype(a, "ormqr", "input");
}

TensorPtr ormqr_op(const Tensor& a, const Tensor& tau, const Tensor& c, bool left, bool trans) {
  check_ormqr(a, tau, c, left);
  TensorPtr r(new_tensor(c.sizes, fortran_strides(c.sizes), c.dtype));
  if (r->numel() == 0) return r;
  const int m = as_int(c.sizes[c.sizes.size() - 2], "ormqr"), n = as_int(c.sizes.back(), "ormqr");
  const int am = as_int(a.sizes[a.sizes.size() - 2], "ormqr"), an = as_int(a.sizes.back(), "ormqr");
  const int k = as_int(tau.sizes.back(), "ormqr");
  const std::vector<int64_t> batch = batch_of(c, 2);
  const auto oa = batch_offsets(a, 2, batch), oc = batch_offsets(c, 2, batch), orr = batch_offsets(*r, 2, batch);
  const auto ot = batch_offsets(view_as(tau, tau.sizes, tau.strides), 1, batch);
  const int64_t ts = tau.strides.back();
  on_real(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> am_(std::size_t(am) * std::max(an, 1)), cm(std::size_t(m) * n), tv(std::size_t(std::max(k, 1)));
    std::vector<T> work(std::size_t(std::max(left ? n : m, 1)));
    for (std::size_t i = 0; i < oc.size(); ++i) {
      read_matrix(a, oa[i], am, an, am_.data(), std::max(am, 1));
      read_matrix(c, oc[i], m, n, cm.data(), m);
      for (int j = 0; j < k; ++j)
        tv[j] = static_cast<T>(load_as_double(tau.data() + (ot[i] + j * ts) * int64_t(tau.itemsize()), tau.dtype));
      int info = 0;
      orm2r(left ? 'L' : 'R', trans ? 'T' : 'N', m, n, k, am_.data(), std::max(am, 1), tv.data(), cm.data(),
            work.data(), &info);
      write_matrix(*r, orr[i], m, n, cm.data(), m);
    }
  });
  return r;
}

// P, L and U of each LU matrix of the batch; each left out is an empty [0], as torch gives it.
void lu_unpack_op(const Tensor& lu, const Tensor& piv, bool unpack_data, bool unpack_pivots, TensorPtr& P, TensorPtr& L,
                  TensorPtr& U) {
  require_cpu(lu, "lu_unpack");
  require_cpu(piv, "lu_unpack");
  if (piv.dtype != static_cast<int32_t>(DType::i32) || !piv.is_contiguous())
    fail("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.");
  if (lu.dim() < 2)
    fail("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: " + shape_str(lu.sizes) + " instead");
  if (!is_f32_or_f64(lu.dtype) && lu.dtype != static_cast<int32_t>(DType::f16) &&
      lu.dtype != static_cast<int32_t>(DType::bf16))
    fail(std::string("lu_unpack: LU_data must be a floating point tensor, got ") + dtype_name(lu.dtype));
  const int64_t m = lu.sizes[lu.sizes.size() - 2], n = lu.sizes.back(), k = std::min(m, n);
  const std::vector<int64_t> batch = batch_of(lu, 2);
  if (piv.dim() != lu.dim() - 1 || batch_of(piv, 1) != batch || piv.sizes.back() != k)
    fail("torch.lu_unpack: Expected LU_pivots of shape " + shape_str(batch) + " + [" + std::to_string(k) +
         "] for LU_data of shape " + shape_str(lu.sizes) + ", got " + shape_str(piv.sizes));
  auto with = [&](int64_t r, int64_t c) {
    std::vector<int64_t> s = batch;
    s.push_back(r);
    s.push_back(c);
    return s;
  };
  const int64_t empty[1] = {0};
  P.reset(unpack_pivots ? new_contiguous(with(m, m), lu.dtype) : new_contiguous(empty, lu.dtype));
  L.reset(unpack_data ? new_contiguous(with(m, k), lu.dtype) : new_contiguous(empty, lu.dtype));
  U.reset(unpack_data ? new_contiguous(with(k, n), lu.dtype) : new_contiguous(empty, lu.dtype));
  const auto* pv = reinterpret_cast<const int32_t*>(piv.data());
  int64_t nb = 1;
  for (int64_t s : batch) nb *= s;
  const auto olu = batch_offsets(lu, 2, batch);
  std::vector<double> buf(static_cast<std::size_t>(m * n));
  std::vector<int64_t> perm(static_cast<std::size_t>(m));
  for (int64_t b = 0; b < nb; ++b) {
    if (unpack_pivots) {
      for (int64_t i = 0; i < m; ++i) perm[std::size_t(i)] = i;
      for (int64_t i = 0; i < k; ++i) {
        const int32_t p = pv[b * k + i];
        if (p < 1 || p > m)
          fail("lu_unpack: pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive. Did you properly "
               "pass the result of lu_factor?");
        std::swap(perm[std::size_t(i)], perm[std::size_t(p - 1)]);
      }
      char* pb = P->data() + b * m * m * int64_t(P->itemsize());
      for (int64_t e = 0; e < m * m; ++e) store_from_double(pb + e * int64_t(P->itemsize()), P->dtype, 0.0);
      for (int64_t j = 0; j < m; ++j)  // A = P L U: column j of P has its one in row perm[j]
        store_from_double(pb + (perm[std::size_t(j)] * m + j) * int64_t(P->itemsize()), P->dtype, 1.0);
    }
    if (!unpack_data || m * n == 0) continue;
    read_matrix(lu, olu[std::size_t(b)], m, n, buf.data(), m);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < k; ++j)
        store_from_double(L->data() + ((b * m + i) * k + j) * int64_t(L->itemsize()), L->dtype,
                          i > j ? buf[std::size_t(i + j * m)] : double(i == j));  // unit diagonal
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j)
        store_from_double(U->data() + ((b * k + i) * n + j) * int64_t(U->itemsize()), U->dtype,
                          i <= j ? buf[std::size_t(i + j * m)] : 0.0);
  }
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_cholesky_solve(AtenTensorHandle self, AtenTensorHandle input2, int32_t upper,
                                             AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("cholesky_solve: ret0 is null");
    *ret0 = cholesky_solve(deref(self, "self"), deref(input2, "input2"), upper != 0).release();
  });
}

AOTITorchError aoti_torch_cpu_cholesky_inverse(AtenTensorHandle self, int32_t upper, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("cholesky_inverse: ret0 is null");
    *ret0 = cholesky_inverse(deref(self, "self"), upper != 0).release();
  });
}

AOTITorchError aoti_torch_cpu_triangular_solve(AtenTensorHandle self, AtenTensorHandle A, int32_t upper,
                                               int32_t transpose, int32_t unitriangular, AtenTensorHandle* ret0,
                                               AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr || ret1 == nullptr) fail("triangular_solve: ret0 or ret1 is null");
    TensorPtr x, coeff;
    triangular_solve(deref(self, "self"), deref(A, "A"), upper != 0, transpose != 0, unitriangular != 0, x, coeff);
    *ret0 = x.release();
    *ret1 = coeff.release();
  });
}

AOTITorchError aoti_torch_cpu_geqrf(AtenTensorHandle self, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr || ret1 == nullptr) fail("geqrf: ret0 or ret1 is null");
    TensorPtr qr, tau;
    geqrf_op(deref(self, "self"), qr, tau);
    *ret0 = qr.release();
    *ret1 = tau.release();
  });
}

AOTITorchError aoti_torch_cpu_ormqr(AtenTensorHandle self, AtenTensorHandle input2, AtenTensorHandle input3,
                                    int32_t left, int32_t transpose, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("ormqr: ret0 is null");
    *ret0 = ormqr_op(deref(self, "self"), deref(input2, "input2"), deref(input3, "input3"), left != 0, transpose != 0)
                .release();
  });
}

AOTITorchError aoti_torch_cpu_lu_unpack(AtenTensorHandle LU_data, AtenTensorHandle LU_pivots, int32_t unpack_data,
                                        int32_t unpack_pivots, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                        AtenTensorHandle* ret2) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr || ret1 == nullptr || ret2 == nullptr) fail("lu_unpack: a result pointer is null");
    TensorPtr P, L, U;
    lu_unpack_op(deref(LU_data, "LU_data"), deref(LU_pivots, "LU_pivots"), unpack_data != 0, unpack_pivots != 0, P, L,
                 U);
    *ret0 = P.release();
    *ret1 = L.release();
    *ret2 = U.release();
  });
}

}  // extern "C"
