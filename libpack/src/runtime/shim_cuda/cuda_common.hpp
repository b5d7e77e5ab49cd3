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

// Opens cuBLAS and makes `device`'s handle now, as the first product would (cuda_blas.cpp). Throws ShimError.
void open_blas(int device);

// out[i, j] <- acc[i, j] + bias[j], rounded once to out's dtype (float16 or bfloat16); out and acc dense
// [rows, cols], bias dense [cols] in out's dtype (cuda_bias_epilogue.cu).
void launch_add_bias_rounded(void* out, const float* acc, const void* bias, int64_t rows, int64_t cols, int32_t dtype,
                             cudaStream_t stream);

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace mpspack::shim::cuda
