// The last step of a half-precision addmm with a 1-d bias, as cuBLASLt's bias epilogue does it for torch: the
// product's float32 accumulator plus the bias, rounded once to the output's dtype (cuda_blas.cpp says why).
#include "cuda_common.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace mpspack::shim::cuda {
namespace {

template <class T>
__global__ void add_bias_rounded(T* out, const float* acc, const T* bias, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = T(acc[i] + float(bias[i % cols]));  // T(float) rounds to nearest, ties to even
}

}  // namespace

void launch_add_bias_rounded(void* out, const float* acc, const void* bias, int64_t rows, int64_t cols, int32_t dtype,
                             cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  const int threads = 256;
  const unsigned blocks = unsigned(std::min<int64_t>(ceil_div(n, threads), 65535));
  if (dtype == int32_t(DType::bf16))
    add_bias_rounded<<<blocks, threads, 0, stream>>>(static_cast<__nv_bfloat16*>(out), acc,
                                                     static_cast<const __nv_bfloat16*>(bias), rows, cols);
  else if (dtype == int32_t(DType::f16))
    add_bias_rounded<<<blocks, threads, 0, stream>>>(static_cast<__half*>(out), acc, static_cast<const __half*>(bias),
                                                     rows, cols);
  else fail(std::string("bias epilogue for ") + dtype_name(dtype) + ": only float16 and bfloat16");
  check(cudaGetLastError(), "bias epilogue");
}

}  // namespace mpspack::shim::cuda
