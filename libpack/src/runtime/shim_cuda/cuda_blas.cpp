// aoti_torch_cuda_{addmm,mm,bmm,baddbmm}_out on cuBLAS.
//
// Every product goes through cublasGemmStridedBatchedEx, a single one as a batch of one. For comparisons with the
// decode step's batch-1 products (docs/CLI.md, MPSPACK_CUDA_GEMM): `plain` sends a single one where torch's mm and
// addmm send it (cublasSgemm for float32, cublasGemmEx for the others), in case cuBLAS picks another kernel or
// spends less host time there; `gemv` runs a float32 row times a Linear's weight, bias included, as one kernel of
// ours (row_gemv) instead of a bias copy and a GEMM.
//
// cuBLAS is opened at the first matrix product (dlopen), not linked: mpspack then starts on machines without
// the CUDA libraries (CI, CPU-only hosts), and the GPU host's own libcublas (the toolkit's, or the one torch
// installed, found through LD_LIBRARY_PATH or MPSPACK_CUBLAS) is the one used. The math mode stays cuBLAS's
// default (full float32, no TF32), as torch's default `allow_tf32 = False` for matmul.
#include "aoti_shim_cuda.h"
#include "cuda_common.hpp"
#include "runtime/tuning/tuning.hpp"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mpspack::shim::cuda {
namespace {

struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  // Spelled out: cublas_api.h overloads this name in C++.
  using GemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, long long, const void*, cudaDataType, int,
                                    long long, const void*, void*, cudaDataType, int, long long, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
  GemmFn gemm = nullptr;
  using GemmPointersFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void* const[], cudaDataType, int, const void* const[],
                                            cudaDataType, int, const void*, void* const[], cudaDataType, int, int,
                                            cublasComputeType_t, cublasGemmAlgo_t);
  GemmPointersFn gemm_pointers = nullptr;  // cublasGemmBatchedEx
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  using GemmOneFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                       const void*, cudaDataType, int, const void*, cudaDataType, int, const void*,
                                       void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmOneFn gemm_one = nullptr;  // cublasGemmEx
  decltype(&cublasGetStatusString) status_string = nullptr;
  std::vector<cublasHandle_t> handles;  // per device
  std::string error;                    // why it could not be opened
};

Cublas& cublas() {
  static Cublas lib;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> names;
    if (!tuning().cublas.empty()) names.push_back(tuning().cublas);
    names.insert(names.end(),
                 {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13", "libcublas.so.12", "libcublas.so"});
    void* h = nullptr;
    for (const auto& n : names)
      if ((h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (h == nullptr) {
      lib.error = "cuBLAS (libcublas.so.13) could not be opened; put its folder on LD_LIBRARY_PATH or name the "
                  "file in MPSPACK_CUBLAS";
      return;
    }
    lib.create = reinterpret_cast<decltype(lib.create)>(dlsym(h, "cublasCreate_v2"));
    lib.set_stream = reinterpret_cast<decltype(lib.set_stream)>(dlsym(h, "cublasSetStream_v2"));
    lib.gemm = reinterpret_cast<decltype(lib.gemm)>(dlsym(h, "cublasGemmStridedBatchedEx"));
    lib.gemm_pointers = reinterpret_cast<decltype(lib.gemm_pointers)>(dlsym(h, "cublasGemmBatchedEx"));
    lib.sgemm = reinterpret_cast<decltype(lib.sgemm)>(dlsym(h, "cublasSgemm_v2"));
    lib.gemm_one = reinterpret_cast<decltype(lib.gemm_one)>(dlsym(h, "cublasGemmEx"));
    lib.status_string = reinterpret_cast<decltype(lib.status_string)>(dlsym(h, "cublasGetStatusString"));
    if (!lib.create || !lib.set_stream || !lib.gemm) lib.error = "the cuBLAS found lacks cublasGemmStridedBatchedEx";
    else if (!lib.gemm_pointers) lib.error = "the cuBLAS found lacks cublasGemmBatchedEx";
    else if (!lib.sgemm || !lib.gemm_one) lib.error = "the cuBLAS found lacks cublasSgemm_v2 or cublasGemmEx";
  });
  return lib;
}

void check_blas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const char* why = cublas().status_string ? cublas().status_string(s) : nullptr;
  fail(std::string(what) + ": " + (why ? why : ("cuBLAS status " + std::to_string(int(s)))));
}

cublasHandle_t handle_for(int device) {
  Cublas& lib = cublas();
  if (!lib.error.empty()) fail(lib.error);
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (lib.handles.size() <= std::size_t(device)) lib.handles.resize(std::size_t(device) + 1, nullptr);
  cublasHandle_t& h = lib.handles[std::size_t(device)];
  if (!h) { check_blas(lib.create(&h), "cublasCreate"); }
  return h;
}

}  // namespace

void open_blas(int device) { (void)handle_for(device); }

namespace {

// How cuBLAS (column-major) reads a row-major (rows x cols) matrix with strides (rs, cs): a row-major matrix
// is its transpose in column-major order, read with op N and ld = rs; a column-major one needs op T, ld = cs.
struct BlasMat {
  const char* ptr;
  int64_t ld;
  bool transposed;
};

std::optional<BlasMat> blas_view(const char* ptr, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (rows <= 1) rs = std::max<int64_t>(cols, 1);  // a stride that is never stepped does not matter
  if (cols <= 1) cs = 1;
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) return BlasMat{ptr, rs, false};
  if (rows > 1 && cols > 1 && rs == 1 && cs >= rows) return BlasMat{ptr, cs, true};
  if (cols <= 1 && rs == 1) return BlasMat{ptr, std::max<int64_t>(cols, 1), false};
  return std::nullopt;
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
  bool dbl;
};

Types blas_types(int32_t dtype) {
  switch (static_cast<DType>(dtype)) {
    case DType::f32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F, false};
    case DType::f16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    case DType::bf16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    case DType::f64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    default: fail(std::string("matrix product of ") + dtype_name(dtype) + " tensors on cuda is not supported");
  }
}

// A 3-d view (batch, rows, cols) of a 2-d or 3-d tensor.
struct View3 {
  int64_t b, r, c, bs, rs, cs;
};
View3 view3(const Tensor& t, const char* what) {
  if (t.dim() == 2) return {1, t.sizes[0], t.sizes[1], 0, t.strides[0], t.strides[1]};
  if (t.dim() == 3) return {t.sizes[0], t.sizes[1], t.sizes[2], t.strides[0], t.strides[1], t.strides[2]};
  fail(std::string(what) + " must be 2-d or 3-d, is " + std::to_string(t.dim()) + "-d");
}

// An operand as cuBLAS reads it: itself, or when cuBLAS cannot read it as it is a contiguous copy (`dense`
// keeps the copy alive).
auto readable(const Tensor& t, int64_t rows, int64_t cols, const char* what, TensorPtr& dense) {
  View3 v = view3(t, what);
  if (auto m = blas_view(t.data(), rows, cols, v.rs, v.cs)) return std::pair{&t, *m};
  dense = contiguous(t);
  v = view3(*dense, what);
  return std::pair{static_cast<const Tensor*>(dense.get()), *blas_view(dense->data(), rows, cols, v.rs, v.cs)};
}

// One dtype throughout, or half-precision operands into a float32 result (accumulated in float32 either way).
void check_product_dtypes(int32_t c, int32_t a, int32_t b, const char* op) {
  const bool widened = c == int32_t(DType::f32) && (a == int32_t(DType::f16) || a == int32_t(DType::bf16));
  if (a != b || (a != c && !widened))
    fail(std::string(op) + ": operands differ in dtype (" + dtype_name(a) + ", " + dtype_name(b) + ", out " +
         dtype_name(c) + ")");
}

}  // namespace

void gemm(Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta, const char* op) {
  require_cuda(c, op);
  require_cuda(a, op);
  require_cuda(b, op);
  check_product_dtypes(c.dtype, a.dtype, b.dtype, op);
  const View3 va = view3(a, "mat1"), vb = view3(b, "mat2"), vc = view3(c, "out");
  const int64_t batch = vc.b, M = vc.r, N = vc.c, K = va.c;
  if (va.b != batch || vb.b != batch || va.r != M || vb.r != K || vb.c != N)
    fail(std::string(op) + ": shapes do not chain");
  if (M == 0 || N == 0) return;
  const Types ty = blas_types(c.dtype), in_ty = blas_types(a.dtype);
  if (K == 0) {  // the product is all zeros: out = beta * out
    if (beta != 0 && beta != 1) fail(std::string(op) + " with an empty inner dimension and beta not in {0, 1}");
    if (beta == 0) check(cudaMemsetAsync(c.data(), 0, std::size_t(c.numel()) * c.itemsize(), current_stream()), op);
    return;
  }
  TensorPtr a_dense, b_dense;
  auto [pa, ma] = readable(a, M, K, "mat1", a_dense);
  auto [pb, mb] = readable(b, K, N, "mat2", b_dense);
  // The output must be row-major (cuBLAS writes C without a transpose); else through a temporary.
  auto mc = blas_view(c.data(), M, N, vc.rs, vc.cs);
  TensorPtr c_tmp;
  Tensor* pc = &c;
  if (!mc || mc->transposed) {
    c_tmp = empty_contiguous_like(c, c.dtype);
    if (beta != 0) copy_any(*c_tmp, c);
    pc = c_tmp.get();
    mc = blas_view(pc->data(), M, N, N, 1);
  }
  const int64_t sa = view3(*pa, "mat1").bs, sb = view3(*pb, "mat2").bs, sc = view3(*pc, "out").bs;
  const int device = c.storage->device_index;
  cublasHandle_t h = handle_for(device);
  check_blas(cublas().set_stream(h, current_stream()), "cublasSetStream");
  const float falpha = float(alpha), fbeta = float(beta);
  const void* pal = ty.dbl ? static_cast<const void*>(&alpha) : &falpha;
  const void* pbe = ty.dbl ? static_cast<const void*>(&beta) : &fbeta;
  // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS's "A" is our b, its "B" our a.
  const cublasOperation_t op_b = mb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                          op_a = ma.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (batch == 1 && tuning().cuda_gemm == "plain") {
    if (c.dtype == int32_t(DType::f32) && a.dtype == int32_t(DType::f32))
      check_blas(cublas().sgemm(h, op_b, op_a, int(N), int(M), int(K), &falpha, reinterpret_cast<const float*>(mb.ptr),
                                int(mb.ld), reinterpret_cast<const float*>(ma.ptr), int(ma.ld), &fbeta,
                                reinterpret_cast<float*>(pc->data()), int(mc->ld)),
                 op);
    else
      check_blas(cublas().gemm_one(h, op_b, op_a, int(N), int(M), int(K), pal, mb.ptr, in_ty.data, int(mb.ld), ma.ptr,
                                   in_ty.data, int(ma.ld), pbe, pc->data(), ty.data, int(mc->ld), ty.compute,
                                   CUBLAS_GEMM_DEFAULT),
                 op);
  } else {
    check_blas(cublas().gemm(h, op_b, op_a, int(N), int(M), int(K), pal, mb.ptr, in_ty.data, int(mb.ld), sb, ma.ptr,
                             in_ty.data, int(ma.ld), sa, pbe, pc->data(), ty.data, int(mc->ld), sc, int(batch),
                             ty.compute, CUBLAS_GEMM_DEFAULT),
               op);
  }
  if (pc != &c) copy_any(c, *pc);
}

bool blas_reads(const MatrixArray& m) { return blas_view(nullptr, m.rows, m.cols, m.rs, m.cs).has_value(); }

bool blas_writes(const MatrixArray& m) {
  const auto v = blas_view(nullptr, m.rows, m.cols, m.rs, m.cs);
  return v && !v->transposed;
}

void gemm_pointers(const MatrixArray& c, const MatrixArray& a, const MatrixArray& b, int64_t count, double alpha,
                   int device, const char* op) {
  // The checks gemm() makes, on the geometry alone: the addresses are in device memory.
  check_product_dtypes(c.dtype, a.dtype, b.dtype, op);
  const int64_t M = c.rows, N = c.cols, K = a.cols;
  if (a.rows != M || b.rows != K || b.cols != N) fail(std::string(op) + ": shapes do not chain");
  // gemm() clears C for an empty inner dimension; scattered matrices have no one range to clear.
  if (M <= 0 || N <= 0 || K <= 0 || count <= 0)
    fail(std::string(op) + ": a product over pointer arrays needs non-empty matrices");
  const auto ma = blas_view(nullptr, M, K, a.rs, a.cs), mb = blas_view(nullptr, K, N, b.rs, b.cs),
             mc = blas_view(nullptr, M, N, c.rs, c.cs);
  if (!ma || !mb || !mc || mc->transposed)
    fail(std::string(op) + ": an operand of a product over pointer arrays is not laid out as cuBLAS reads it");
  for (int64_t x : {M, N, K, ma->ld, mb->ld, mc->ld, count})
    if (x > INT32_MAX) fail(std::string(op) + ": a product over pointer arrays is past cuBLAS's 32-bit sizes");
  const Types ty = blas_types(c.dtype), in_ty = blas_types(a.dtype);
  cublasHandle_t h = handle_for(device);
  check_blas(cublas().set_stream(h, current_stream()), "cublasSetStream");
  const double zero = 0.0;
  const float falpha = float(alpha), fzero = 0.f;
  const void* pal = ty.dbl ? static_cast<const void*>(&alpha) : &falpha;
  const void* pbe = ty.dbl ? static_cast<const void*>(&zero) : &fzero;
  // Row-major C = A B is column-major C^T = B^T A^T, as in gemm(): cuBLAS's "A" is our b, its "B" our a.
  check_blas(cublas().gemm_pointers(h, mb->transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                                    ma->transposed ? CUBLAS_OP_T : CUBLAS_OP_N, int(N), int(M), int(K), pal, b.ptrs,
                                    in_ty.data, int(mb->ld), a.ptrs, in_ty.data, int(ma->ld), pbe, c.ptrs, ty.data,
                                    int(mc->ld), int(count), ty.compute, CUBLAS_GEMM_DEFAULT),
             op);
}

namespace {

// Whether torch's addmm would take cuBLASLt's bias epilogue here (addmm_out_cuda_impl's useLtInterface, for the
// dtypes where it changes the result): a dense 1-d bias, beta 1, a dense 2-d half-precision output, every size
// above 1. The epilogue adds the bias to the float32 accumulator and rounds once; through C with beta 1 the
// product is rounded first and the sum again, which left 26% of a bf16 Linear's outputs one ulp from torch's
// (bench/device/bf16_blas.py, docs/PERFORMANCE.md).
bool torch_takes_bias_epilogue(const Tensor& out, const Tensor& self, const Tensor& a, double beta) {
  const bool half = out.dtype == int32_t(DType::bf16) || out.dtype == int32_t(DType::f16);
  return half && a.dtype == out.dtype && self.dtype == out.dtype && beta == 1.0 && self.dim() == 1 && out.dim() == 2 &&
         a.dim() == 2 && self.is_contiguous() && out.is_contiguous() && self.sizes[0] == out.sizes[1] &&
         out.sizes[0] > 1 && out.sizes[1] > 1 && a.sizes[1] > 1;
}

// By default (MPSPACK_CUDA_GEMM unset or gemv): a float32 product of one row by a weight read along K or along N (b a
// transposed view of nn.Linear's dense rows, or dense rows itself as GPT-2's Conv1D has it), alpha 1, with its bias
// added (beta 1, a bias row) or none (beta 0), as one kernel (cuda_row_gemv.cu). False, with nothing done, for any
// other product.
bool row_gemv(Tensor& out, const Tensor* bias, const Tensor& a, const Tensor& b, double beta, double alpha,
              const char* op) {
  const std::string& way = tuning().cuda_gemm;
  if ((!way.empty() && way != "gemv") || alpha != 1.0) return false;
  const auto f32 = int32_t(DType::f32);
  if (out.dtype != f32 || a.dtype != f32 || b.dtype != f32 || out.dim() != 2 || a.dim() != 2 || b.dim() != 2)
    return false;
  const int64_t N = out.sizes[1], K = a.sizes[1];
  if (out.sizes[0] != 1 || a.sizes[0] != 1 || b.sizes[0] != K || b.sizes[1] != N || N == 0 || K == 0) return false;
  if ((N > 1 && out.strides[1] != 1) || (K > 1 && a.strides[1] != 1)) return false;
  if (out.storage == a.storage || out.storage == b.storage) return false;
  // Along K: b [K, N] is w [N, K] with rows ldw apart. Along N: b's own rows, ldw apart.
  const bool along_k = (K == 1 || b.strides[0] == 1) && (N == 1 || b.strides[1] >= K);
  const bool along_n = (N == 1 || b.strides[1] == 1) && (K == 1 || b.strides[0] >= N);
  if (!along_k && !along_n) return false;
  const int64_t ldw = along_k ? (N > 1 ? b.strides[1] : K) : (K > 1 ? b.strides[0] : N);
  const float* bias_row = nullptr;
  if (beta != 0) {
    if (beta != 1.0 || bias == nullptr || bias->dtype != f32) return false;
    const Tensor& s = *bias;
    const bool row = s.dim() == 1   ? s.sizes[0] == N && (N == 1 || s.strides[0] == 1)
                     : s.dim() == 2 ? s.sizes[0] == 1 && s.sizes[1] == N && (N == 1 || s.strides[1] == 1)
                                    : false;
    if (!row) return false;
    require_cuda(s, op);
    bias_row = reinterpret_cast<const float*>(s.data());
  }
  require_cuda(out, op);
  require_cuda(a, op);
  require_cuda(b, op);
  auto* y = reinterpret_cast<float*>(out.data());
  const auto *x = reinterpret_cast<const float*>(a.data()), *w = reinterpret_cast<const float*>(b.data());
  if (along_k) launch_row_gemv(y, x, w, ldw, bias_row, N, K, current_stream());
  else launch_row_gemv_columns(y, x, w, ldw, bias_row, N, K, current_stream());
  return true;
}

// out <- beta * self (broadcast) + alpha * a @ b
void add_product(Tensor& out, const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha,
                 const char* op) {
  if (row_gemv(out, &self, a, b, beta, alpha, op)) return;
  if (torch_takes_bias_epilogue(out, self, a, beta)) {
    require_cuda(self, op);
    TensorPtr acc = empty_contiguous_like(out, int32_t(DType::f32));
    gemm(*acc, a, b, alpha, 0.0, op);
    launch_add_bias_rounded(out.data(), reinterpret_cast<const float*>(acc->data()), self.data(), out.sizes[0],
                            out.sizes[1], out.dtype, current_stream());
    return;
  }
  if (beta != 0 && !(self.storage == out.storage && self.storage_offset == out.storage_offset &&
                     self.sizes == out.sizes && self.strides == out.strides))
    copy_any(out, self);
  gemm(out, a, b, alpha, beta, op);
}

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" {

AOTITorchError aoti_torch_cuda_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                         AtenTensorHandle mat2, double beta, double alpha) {
  return guarded(__func__, [&] {
    add_product(deref(out, "out"), deref(self, "self"), deref(mat1, "mat1"), deref(mat2, "mat2"), beta, alpha, "addmm");
  });
}

AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    const Tensor &a = deref(self, "self"), &b = deref(mat2, "mat2");
    if (!row_gemv(o, nullptr, a, b, 0.0, 1.0, "mm")) gemm(o, a, b, 1.0, 0.0, "mm");
  });
}

// aten::mm.dtype_out: a float16/bfloat16 product accumulated and written in float32 (out_dtype float32), or in the
// operands' own dtype (torch's only two choices).
AOTITorchError aoti_torch_cuda_mm_dtype_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2,
                                            int32_t out_dtype) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    const Tensor& a = deref(self, "self");
    const bool half = a.dtype == int32_t(DType::f16) || a.dtype == int32_t(DType::bf16);
    if (out_dtype != a.dtype && !(half && out_dtype == int32_t(DType::f32)))
      fail(std::string("mm_dtype: out_dtype ") + dtype_name(out_dtype) + " is neither self's dtype (" +
           dtype_name(a.dtype) + ") nor float32 for float16/bfloat16 operands");
    if (o.dtype != out_dtype)
      fail(std::string("mm_dtype: out is ") + dtype_name(o.dtype) + ", not out_dtype " + dtype_name(out_dtype));
    gemm(o, a, deref(mat2, "mat2"), 1.0, 0.0, "mm_dtype");
  });
}

AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    if (o.dim() != 3) fail("bmm: out must be 3-d");
    gemm(o, deref(self, "self"), deref(mat2, "mat2"), 1.0, 0.0, "bmm");
  });
}

AOTITorchError aoti_torch_cuda_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle batch1,
                                           AtenTensorHandle batch2, double beta, double alpha) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    if (o.dim() != 3) fail("baddbmm: out must be 3-d");
    add_product(o, deref(self, "self"), deref(batch1, "batch1"), deref(batch2, "batch2"), beta, alpha, "baddbmm");
  });
}

}  // extern "C"
