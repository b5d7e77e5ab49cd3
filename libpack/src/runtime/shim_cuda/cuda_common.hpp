// What the CUDA shim's files share: error checks, this thread's current stream, device-side copies.
#pragma once

#include "runtime/shim/tensor.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace mpspack::shim::cuda {

// Throws ShimError "<what>: <CUDA error string>" unless e is cudaSuccess.
void check(cudaError_t e, const char* what);

// The stream this thread's work goes to: the one the innermost stream guard set (AOTInductor wraps each
// Run in one), else the legacy default stream.
cudaStream_t current_stream();
void set_current_stream(cudaStream_t stream);

void require_cuda(const Tensor& t, const char* op);

// The values of a 1-d int32 tensor (offsets, sequence lengths) on the host, on the CPU or copied from the GPU
// after the current stream's work (a synchronisation). `what` names the op and argument in the errors.
std::vector<int32_t> int32_values(const Tensor& t, const std::string& what);

// dst[i] <- src[i] over `sizes` (nd <= 16) with per-tensor element strides (0 = broadcast), same element size,
// both in device memory, on `stream`.
void launch_strided_copy(void* dst, const int64_t* dst_strides, const void* src, const int64_t* src_strides,
                         const int64_t* sizes, int nd, std::size_t itemsize, cudaStream_t stream);

// A new contiguous device tensor on `t`'s device (uninitialised).
TensorPtr empty_contiguous_like(const Tensor& t, int32_t dtype);
// `t` itself (a new handle on its storage) when it is contiguous, else a contiguous device copy.
TensorPtr contiguous(const Tensor& t);

// c (+)= alpha * a @ b for 2-d or 3-d (batched, a batch stride of 0 broadcasts) cuda tensors of one
// floating dtype, or f16/bf16 operands with a float32 c; when beta != 0, c already holds the term beta scales.
// On cuBLAS (cuda_blas.cpp).
void gemm(Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta, const char* op);

// One operand of a batch of products over pointer arrays (gemm_pointers): `ptrs`, in device memory, holds each
// matrix's address; every matrix is rows x cols with the row-major element strides (rs, cs), of `dtype`.
struct MatrixArray {
  void* const* ptrs;
  int32_t dtype;
  int64_t rows, cols, rs, cs;
};

// Whether cuBLAS reads (blas_reads) or writes (blas_writes: row-major only) a matrix of this geometry as it is.
// gemm() copies an operand it cannot read and writes through a temporary; over pointer arrays there is nothing
// to copy, so gemm_pointers refuses such operands and its callers check first and take gemm() instead.
bool blas_reads(const MatrixArray& m);
bool blas_writes(const MatrixArray& m);

// Every matrix a gemm_pointers call reads or writes starts at a multiple of this many bytes: cuBLAS's kernels may
// load half-precision matrices in 16-byte vectors, and it cannot check addresses that it reads on the GPU (for
// strided batches it checks the base and the strides on the host).
inline constexpr int64_t kPointerGemmAlign = 16;

// c[i] <- alpha * a[i] @ b[i] for i < count (cublasGemmBatchedEx, on the current stream): a M x K, b K x N, c M x N,
// with gemm()'s dtypes and its row-major-to-column-major mapping. The pointer arrays are read by the GPU when the
// product runs, so they may be written on the current stream just before (a kernel, not a host copy: the call then
// stays capturable in a CUDA graph). Every matrix non-empty, readable (blas_reads; c: blas_writes) and aligned to
// kPointerGemmAlign; `device` is the one whose cuBLAS handle runs it. Throws ShimError naming `op`.
void gemm_pointers(const MatrixArray& c, const MatrixArray& a, const MatrixArray& b, int64_t count, double alpha,
                   int device, const char* op);

// Opens cuBLAS and makes `device`'s handle now, as the first product would (cuda_blas.cpp). Throws ShimError.
void open_blas(int device);

// out[i, j] <- acc[i, j] + bias[j], rounded once to out's dtype (float16 or bfloat16); out and acc dense
// [rows, cols], bias dense [cols] in out's dtype (cuda_bias_epilogue.cu).
void launch_add_bias_rounded(void* out, const float* acc, const void* bias, int64_t rows, int64_t cols, int32_t dtype,
                             cudaStream_t stream);

// out[n] <- x . w[n, :] (+ bias[n]) for n < N, float32: x dense [K], w rows of K at a stride of ldw, out and bias
// dense [N], bias null for none; one launch on `stream` (cuda_row_gemv.cu).
void launch_row_gemv(float* out, const float* x, const float* w, int64_t ldw, const float* bias, int64_t N, int64_t K,
                     cudaStream_t stream);
// The same with w [K, N]: out[n] <- sum over k of x[k] w[k, n] (+ bias[n]), w's rows of N at a stride of ldw.
void launch_row_gemv_columns(float* out, const float* x, const float* w, int64_t ldw, const float* bias, int64_t N,
                             int64_t K, cudaStream_t stream);

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace mpspack::shim::cuda
