// Products built on the shim's addmm (matmul.cpp: OpenBLAS, oneDNN, loops for the other dtypes): addmv, addbmm
// and _addmm_activation (addmm then ReLU or GELU, as torch's CPU kernel or, for the CUDA shim, its CUDA one); _int_mm
// (int8 x int8 summed in int32, torch's CPU loop) and _trilinear (the sum of products bilinear layers lower to). Each
// result is contiguous, as torch's. beta == 0 ignores self, NaNs included, as torch does.
#include "aoti_shim.h"
#include "element.hpp"
#include "linalg_util.hpp"
#include "tensor.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::linalg;

namespace {

bool is_floating(int32_t dtype) {
  const auto d = static_cast<DType>(dtype);
  return d == DType::f32 || d == DType::f64 || d == DType::f16 || d == DType::bf16;
}

void require_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype != b.dtype)
    fail(std::string(op) + ": expected both operands to have the same dtype, but got " + dtype_name(a.dtype) + " and " +
         dtype_name(b.dtype));
}

// r <- beta * self broadcast to r's shape, or zeros when beta is 0 (torch ignores self then, NaNs included).
void beta_term(Tensor& r, const Tensor& self, double beta, const char* op) {
  require_cpu(self, op);
  const auto isz = static_cast<int64_t>(r.itemsize());
  if (beta == 0.0) {
    for (int64_t e = 0; e < r.numel(); ++e) store_from_double(r.data() + e * isz, r.dtype, 0.0);
    return;
  }
  broadcast_strides(r, self);  // fails when self does not broadcast to r
  copy_into(r, self);
  if (beta != 1.0)
    for (int64_t e = 0; e < r.numel(); ++e) {
      char* p = r.data() + e * isz;
      store_from_double(p, r.dtype, beta * load_as_double(p, r.dtype));
    }
}

// r (contiguous [M, N]) += alpha * a @ b through the shim's addmm; the shapes were checked by the caller.
void accumulate_product(Tensor& r, const Tensor& a, const Tensor& b, double alpha) {
  if (r.numel() == 0 || a.sizes[1] == 0) return;
  if (aoti_torch_cpu_addmm_out(&r, &r, const_cast<Tensor*>(&a), const_cast<Tensor*>(&b), 1.0, alpha) !=
      AOTI_TORCH_SUCCESS)
    fail("the product failed (the line above says why)");
}

TensorPtr addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, double beta, double alpha) {
  for (const Tensor* t : {&self, &mat, &vec}) require_cpu(*t, "addmv");
  if (!(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1))
    fail("addmv: vector + matrix @ vector expected, got " + std::to_string(self.dim()) + ", " +
         std::to_string(mat.dim()) + ", " + std::to_string(vec.dim()));
  if (mat.sizes[1] != vec.sizes[0] || (mat.sizes[0] != self.numel() && self.numel() != 1))
    fail("addmv: size mismatch, got input (" + std::to_string(self.numel()) + "), mat (" +
         std::to_string(mat.sizes[0]) + "x" + std::to_string(mat.sizes[1]) + "), vec (" + std::to_string(vec.sizes[0]) +
         ")");
  require_same_dtype(mat, vec, "addmv");
  require_same_dtype(self, mat, "addmv");
  if (mat.dtype == static_cast<int32_t>(DType::boolean)) fail("addmv: bool is not supported");
  const int64_t n = mat.sizes[0], m = mat.sizes[1];
  const int64_t rs[1] = {n};
  TensorPtr r(new_contiguous(rs, mat.dtype));
  Tensor r2 = view_as(*r, {n, 1}, {1, 1});
  Tensor s2 = view_as(self, {self.numel(), 1}, {self.dim() == 1 ? self.strides[0] : 0, 1});
  beta_term(r2, s2, beta, "addmv");
  accumulate_product(r2, mat, view_as(vec, {m, 1}, {vec.strides[0], 1}), alpha);
  return r;
}

TensorPtr addbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, double beta, double alpha) {
  for (const Tensor* t : {&self, &b1, &b2}) require_cpu(*t, "addbmm");
  if (b1.dim() != 3) fail("addbmm: batch1 must be a 3D tensor");
  if (b2.dim() != 3) fail("addbmm: batch2 must be a 3D tensor");
  if (b1.sizes[0] != b2.sizes[0])
    fail("addbmm: batch1 and batch2 must have same number of batches, got " + std::to_string(b1.sizes[0]) + " and " +
         std::to_string(b2.sizes[0]));
  if (b1.sizes[2] != b2.sizes[1])
    fail("addbmm: Incompatible matrix sizes for bmm (" + std::to_string(b1.sizes[1]) + "x" +
         std::to_string(b1.sizes[2]) + " and " + std::to_string(b2.sizes[1]) + "x" + std::to_string(b2.sizes[2]) + ")");
  require_same_dtype(b1, b2, "addbmm");
  require_same_dtype(self, b1, "addbmm");
  if (b1.dtype == static_cast<int32_t>(DType::boolean)) fail("addbmm: bool is not supported");
  const int64_t rs[2] = {b1.sizes[1], b2.sizes[2]};
  TensorPtr r(new_contiguous(rs, b1.dtype));
  beta_term(*r, self, beta, "addbmm");
  for (int64_t i = 0; i < b1.sizes[0]; ++i) {
    Tensor m1 = view_as(b1, {b1.sizes[1], b1.sizes[2]}, {b1.strides[1], b1.strides[2]});
    Tensor m2 = view_as(b2, {b2.sizes[1], b2.sizes[2]}, {b2.strides[1], b2.strides[2]});
    m1.storage_offset += i * b1.strides[0];
    m2.storage_offset += i * b2.strides[0];
    accumulate_product(*r, m1, m2, alpha);
  }
  return r;
}

void check_matrices(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dim() != 2) fail(std::string(op) + ": mat1 must be a matrix, got " + std::to_string(a.dim()) + "-D tensor");
  if (b.dim() != 2) fail(std::string(op) + ": mat2 must be a matrix, got " + std::to_string(b.dim()) + "-D tensor");
  if (a.sizes[1] != b.sizes[0])
    fail(std::string(op) + ": mat1 and mat2 shapes cannot be multiplied (" + std::to_string(a.sizes[0]) + "x" +
         std::to_string(a.sizes[1]) + " and " + std::to_string(b.sizes[0]) + "x" + std::to_string(b.sizes[1]) + ")");
}

double gelu_of(double x, ActivationKernel kernel) {
  if (kernel == ActivationKernel::cpu) return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
  const double inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(inner));
}

}  // namespace

TensorPtr mpspack::shim::linalg::addmm_activation(const Tensor& self, const Tensor& a, const Tensor& b, double beta,
                                                  double alpha, bool gelu, ActivationKernel kernel) {
  for (const Tensor* t : {&self, &a, &b}) require_cpu(*t, "_addmm_activation");
  check_matrices(a, b, "_addmm_activation");
  require_same_dtype(a, b, "_addmm_activation");
  require_same_dtype(self, a, "_addmm_activation");
  if (!is_floating(a.dtype))
    fail(std::string("_addmm_activation: dtype ") + dtype_name(a.dtype) + " is not supported (a floating type)");
  const int64_t rs[2] = {a.sizes[0], b.sizes[1]};
  TensorPtr r(new_contiguous(rs, a.dtype));
  beta_term(*r, self, beta, "_addmm_activation");
  accumulate_product(*r, a, b, alpha);
  if (kernel == ActivationKernel::cuda && a.sizes[1] == 0) return r;
  const auto isz = static_cast<int64_t>(r->itemsize());
  for (int64_t e = 0; e < r->numel(); ++e) {
    char* p = r->data() + e * isz;
    const double x = load_as_double(p, r->dtype);
    const double y = gelu ? gelu_of(x, kernel) : (x > 0.0 || std::isnan(x) ? x : 0.0);  // ReLU keeps NaN
    store_from_double(p, r->dtype, y);
  }
  return r;
}

namespace {

void int_mm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  static const std::string f = "int_mm_out_cpu: ";
  for (const Tensor* t : {static_cast<const Tensor*>(&out), &a, &b}) require_cpu(*t, "_int_mm");
  if (a.dim() != 2) fail(f + "Expected self to be of dimension 2 but got " + std::to_string(a.dim()));
  if (b.dim() != 2) fail(f + "Expected mat2 to be of dimension 2 but got " + std::to_string(b.dim()));
  if (a.sizes[1] != b.sizes[0])
    fail(f + "self.size(1) needs to match mat2.size(0) but got " + std::to_string(a.sizes[1]) + " and " +
         std::to_string(b.sizes[0]));
  const auto i8 = static_cast<int32_t>(DType::i8);
  if (a.dtype != i8) fail(f + "Expected self dtype to be of type int8 but got " + dtype_name(a.dtype));
  if (b.dtype != i8) fail(f + "Expected mat2 dtype to be of type int8 but got " + dtype_name(b.dtype));
  if (out.dtype != static_cast<int32_t>(DType::i32))
    fail(f + "Expected result dtype to be of type kInt but got " + dtype_name(out.dtype));
  if (out.dim() != 2) fail(f + "Expected result to be of dimension 2 but got " + std::to_string(out.dim()));
  if (out.sizes[0] != a.sizes[0])
    fail(f + "Expected result.size(0) to be " + std::to_string(a.sizes[0]) + " but got " +
         std::to_string(out.sizes[0]));
  if (out.sizes[1] != b.sizes[1])
    fail(f + "Expected result.size(1) to be " + std::to_string(b.sizes[1]) + " but got " +
         std::to_string(out.sizes[1]));
  if (!out.is_contiguous()) fail(f + "Expected result to be contiguous.");
  const int64_t M = a.sizes[0], K = a.sizes[1], N = b.sizes[1];
  const auto* A = reinterpret_cast<const int8_t*>(a.data());
  const auto* B = reinterpret_cast<const int8_t*>(b.data());
  auto* C = reinterpret_cast<int32_t*>(out.data());
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      int32_t acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += int32_t(A[i * a.strides[0] + k * a.strides[1]]) * int32_t(B[k * b.strides[0] + j * b.strides[1]]);
      C[i * N + j] = acc;
    }
}

// One input of _trilinear seen in the full dims: its own dims where not expanded, size 1 (stride 0) where it is.
struct TriInput {
  const Tensor* t;
  std::vector<int64_t> sizes, strides;
};

TriInput expand_input(const Tensor& t, const std::vector<bool>& expanded) {
  TriInput in{&t, {}, {}};
  std::size_t src = 0;
  for (bool e : expanded) {
    if (e) {
      in.sizes.push_back(1);
      in.strides.push_back(0);
    } else {
      in.sizes.push_back(t.sizes[src]);
      in.strides.push_back(t.sizes[src] == 1 ? 0 : t.strides[src]);
      ++src;
    }
  }
  return in;
}

std::vector<bool> dim_bits(const int64_t* dims, int64_t n, int64_t total, const char* what) {
  std::vector<bool> bits(static_cast<std::size_t>(total), false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = dims[i] < 0 ? dims[i] + total : dims[i];
    if (d < 0 || d >= total)
      fail(std::string("_trilinear: ") + what + " dim " + std::to_string(dims[i]) + " is out of range");
    if (bits[std::size_t(d)])
      fail(std::string("_trilinear: dim ") + std::to_string(d) + " appears multiple times in " + what);
    bits[std::size_t(d)] = true;
  }
  return bits;
}

struct TrilinearArgs {
  std::vector<bool> e1, e2, e3, sum;
};

// Each output element sums i1 * i2 * i3 over the summed dims; a dim's size is that of the last input not
// expanded in it (torch's rule), and the summed dims are dropped from the result.
TensorPtr trilinear(const Tensor& i1, const Tensor& i2, const Tensor& i3, const TrilinearArgs& args) {
  const auto total = static_cast<int64_t>(args.sum.size());
  require_same_dtype(i1, i2, "_trilinear");
  require_same_dtype(i1, i3, "_trilinear");
  if (i1.dtype == static_cast<int32_t>(DType::boolean)) fail("_trilinear: bool is not supported");
  const TriInput in[3] = {expand_input(i1, args.e1), expand_input(i2, args.e2), expand_input(i3, args.e3)};
  std::vector<int64_t> full(static_cast<std::size_t>(total), 1), kept, summed_sizes;
  std::vector<std::size_t> kept_dims, summed_dims;
  for (std::size_t d = 0; d < full.size(); ++d) {
    int64_t s = 0;
    if (!args.e1[d]) s = in[0].sizes[d];
    if (!args.e2[d]) s = in[1].sizes[d];
    if (!args.e3[d]) s = in[2].sizes[d];
    full[d] = s;
    for (const TriInput& x : in)
      if (x.sizes[d] != 1 && x.sizes[d] != s)
        fail("_trilinear: sizes " + shape_str(i1.sizes) + ", " + shape_str(i2.sizes) + " and " + shape_str(i3.sizes) +
             " do not match in dim " + std::to_string(d));
    (args.sum[d] ? summed_dims : kept_dims).push_back(d);
    (args.sum[d] ? summed_sizes : kept).push_back(s);
  }
  TensorPtr r(new_contiguous(kept, i1.dtype));
  const int64_t isz = int64_t(i1.itemsize());
  int64_t e = 0;
  std::vector<int64_t> idx(full.size(), 0);
  for_each_index(kept, [&](std::span<const int64_t> k) {
    for (std::size_t j = 0; j < kept_dims.size(); ++j) idx[kept_dims[j]] = k[j];
    double acc = 0.0;
    for_each_index(summed_sizes, [&](std::span<const int64_t> s) {
      for (std::size_t j = 0; j < summed_dims.size(); ++j) idx[summed_dims[j]] = s[j];
      double prod = 1.0;
      for (const TriInput& x : in) prod *= load_as_double(x.t->data() + offset_of(idx, x.strides) * isz, x.t->dtype);
      acc += prod;
    });
    store_from_double(r->data() + (e++) * isz, r->dtype, acc);
  });
  return r;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_addmv(AtenTensorHandle self, AtenTensorHandle mat, AtenTensorHandle vec, double beta,
                                    double alpha, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("addmv: ret0 is null");
    *ret0 = addmv(deref(self, "self"), deref(mat, "mat"), deref(vec, "vec"), beta, alpha).release();
  });
}

AOTITorchError aoti_torch_cpu_addbmm(AtenTensorHandle self, AtenTensorHandle batch1, AtenTensorHandle batch2,
                                     double beta, double alpha, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("addbmm: ret0 is null");
    *ret0 = addbmm(deref(self, "self"), deref(batch1, "batch1"), deref(batch2, "batch2"), beta, alpha).release();
  });
}

AOTITorchError aoti_torch_cpu__addmm_activation(AtenTensorHandle self, AtenTensorHandle mat1, AtenTensorHandle mat2,
                                                double beta, double alpha, int32_t use_gelu, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("_addmm_activation: ret0 is null");
    *ret0 = addmm_activation(deref(self, "self"), deref(mat1, "mat1"), deref(mat2, "mat2"), beta, alpha, use_gelu != 0,
                             ActivationKernel::cpu)
                .release();
  });
}

AOTITorchError aoti_torch_cpu__int_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  return guarded(__func__, [&] { int_mm_out(deref(out, "out"), deref(self, "self"), deref(mat2, "mat2")); });
}

AOTITorchError aoti_torch_cpu__trilinear(AtenTensorHandle i1, AtenTensorHandle i2, AtenTensorHandle i3,
                                         const int64_t* expand1, int64_t expand1_len_, const int64_t* expand2,
                                         int64_t expand2_len_, const int64_t* expand3, int64_t expand3_len_,
                                         const int64_t* sumdim, int64_t sumdim_len_, int64_t unroll_dim,
                                         AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("_trilinear: ret0 is null");
    const Tensor &a = deref(i1, "i1"), &b = deref(i2, "i2"), &c = deref(i3, "i3");
    for (const Tensor* t : {&a, &b, &c}) require_cpu(*t, "_trilinear");
    const int64_t total = a.dim() + expand1_len_;
    if (b.dim() + expand2_len_ != total || c.dim() + expand3_len_ != total)
      fail("_trilinear: number of dimensions must match");
    if (unroll_dim < 0 || (unroll_dim >= total && total > 0)) fail("_trilinear: unroll_dim is out of range");
    const TrilinearArgs args{
        dim_bits(expand1, expand1_len_, total, "expand1"), dim_bits(expand2, expand2_len_, total, "expand2"),
        dim_bits(expand3, expand3_len_, total, "expand3"), dim_bits(sumdim, sumdim_len_, total, "sumdim")};
    *ret0 = trilinear(a, b, c, args).release();
  });
}

}  // extern "C"
