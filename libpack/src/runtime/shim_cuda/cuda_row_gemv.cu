// A float32 row vector times a Linear layer's weight, with its bias, in one kernel: out[n] = x . w[n, :] + bias[n]
// for nn.Linear's [N, K] weight, out[n] = sum over k of x[k] w[k, n] + bias[n] for a [K, N] one (GPT-2's Conv1D).
// The decode step's products are all of this shape (one token); through cuBLAS each is a bias copy and a GEMM, two
// launches and cuBLAS's own host time (MPSPACK_CUDA_GEMM=gemv, cuda_blas.cpp).
#include "cuda_common.hpp"

namespace mpspack::shim::cuda {
namespace {

constexpr int kWarps = 8;  // outputs per block of 256 threads: one warp reads one row of w

// Each warp sums one output over K; float4 loads where x and the row are 16-byte aligned and K a multiple of 4.
__global__ void row_gemv(float* out, const float* x, const float* w, int64_t ldw, const float* bias, int64_t N,
                         int64_t K, bool vectorized) {
  const int lane = threadIdx.x % 32;
  const int64_t n = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (n >= N) return;
  const float* row = w + n * ldw;
  float sum = 0.f;
  if (vectorized) {
    const auto* x4 = reinterpret_cast<const float4*>(x);
    const auto* r4 = reinterpret_cast<const float4*>(row);
    for (int64_t k = lane; k < K / 4; k += 32) {
      const float4 a = x4[k], b = r4[k];
      sum += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
  } else {
    for (int64_t k = lane; k < K; k += 32) sum += x[k] * row[k];
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) out[n] = bias ? sum + bias[n] : sum;
}

// [K, N] weights: a block takes 8 columns and its 256 threads 32 groups of k (a warp reads 4 rows' 32 bytes at a time,
// whole sectors), so that a 768-column product still spans 96 blocks; the 32 partial sums of a column are added in
// shared memory in a fixed order.
constexpr int kColumns = 8, kGroups = 256 / kColumns;

__global__ void row_gemv_columns(float* out, const float* x, const float* w, int64_t ldw, const float* bias, int64_t N,
                                 int64_t K) {
  __shared__ float partial[kGroups][kColumns];
  const int column = threadIdx.x % kColumns, group = threadIdx.x / kColumns;
  const int64_t n = int64_t(blockIdx.x) * kColumns + column;
  float sum = 0.f;
  if (n < N)
    for (int64_t k = group; k < K; k += kGroups) sum += x[k] * w[k * ldw + n];
  partial[group][column] = sum;
  __syncthreads();
  if (group == 0 && n < N) {
    float total = 0.f;
    for (int i = 0; i < kGroups; ++i) total += partial[i][column];
    out[n] = bias ? total + bias[n] : total;
  }
}

}  // namespace

void launch_row_gemv_columns(float* out, const float* x, const float* w, int64_t ldw, const float* bias, int64_t N,
                             int64_t K, cudaStream_t stream) {
  if (N == 0) return;
  row_gemv_columns<<<unsigned(ceil_div(N, kColumns)), kColumns * kGroups, 0, stream>>>(out, x, w, ldw, bias, N, K);
  check(cudaGetLastError(), "row GEMV");
}

void launch_row_gemv(float* out, const float* x, const float* w, int64_t ldw, const float* bias, int64_t N, int64_t K,
                     cudaStream_t stream) {
  if (N == 0) return;
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vectorized = K % 4 == 0 && ldw % 4 == 0 && aligned(x) && aligned(w);
  const auto blocks = unsigned(ceil_div(N, kWarps));
  row_gemv<<<blocks, kWarps * 32, 0, stream>>>(out, x, w, ldw, bias, N, K, vectorized);
  check(cudaGetLastError(), "row GEMV");
}

}  // namespace mpspack::shim::cuda
