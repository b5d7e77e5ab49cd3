// aoti_torch_cuda__scaled_dot_product_efficient_attention, correct before fast: one thread block per
// (batch, head, query row) computes that row's scores in shared memory, a numerically safe softmax (max
// subtracted), and the weighted sum of the values, in float whatever the input dtype. The outputs have the
// shapes and strides torch's kernel returns (its meta function), which the compiled model relies on.
#include "aoti_shim_cuda.h"
#include "cuda_common.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <string>

namespace mpspack::shim::cuda {
namespace {

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ inline T from_float(float v);
template <> __device__ inline float from_float<float>(float v) { return v; }
template <> __device__ inline __half from_float<__half>(float v) { return __float2half(v); }
template <> __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

struct Strides4 {
  int64_t b, h, l, e;
};

struct Problem {
  int64_t B, H, L, S, E, Ev;
  Strides4 q, k, v, bias, out;
  int64_t lse_b, lse_h;  // logsumexp [B, H, Lpad] strides; unused when lse is null
  float scale;
  bool causal;
};

constexpr int kThreads = 128;

__device__ float block_reduce(float v, float* scratch, bool is_max) {
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) r = is_max ? fmaxf(r, scratch[w]) : r + scratch[w];
  return r;
}

template <class T>
__global__ void attention_row_kernel(const T* q, const T* k, const T* v, const T* bias, T* out, float* lse,
                                     Problem p) {
  extern __shared__ float smem[];
  float* scores = smem;            // [S]
  float* qrow = smem + p.S;        // [E]
  float* scratch = qrow + p.E;     // [kThreads / 32]
  const int64_t i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const T* qp = q + b * p.q.b + h * p.q.h + i * p.q.l;
  for (int64_t e = threadIdx.x; e < p.E; e += blockDim.x) qrow[e] = to_float(qp[e * p.q.e]);
  __syncthreads();
  float local_max = -INFINITY;
  for (int64_t j = threadIdx.x; j < p.S; j += blockDim.x) {
    float s;
    if (p.causal && j > i) {
      s = -INFINITY;
    } else {
      const T* kp = k + b * p.k.b + h * p.k.h + j * p.k.l;
      float dot = 0.f;
      for (int64_t e = 0; e < p.E; ++e) dot += qrow[e] * to_float(kp[e * p.k.e]);
      s = dot * p.scale;
      if (bias) s += to_float(bias[b * p.bias.b + h * p.bias.h + i * p.bias.l + j * p.bias.e]);
    }
    scores[j] = s;
    local_max = fmaxf(local_max, s);
  }
  const float row_max = block_reduce(local_max, scratch, true);
  float local_sum = 0.f;
  for (int64_t j = threadIdx.x; j < p.S; j += blockDim.x) {
    const float e = row_max == -INFINITY ? 0.f : __expf(scores[j] - row_max);
    scores[j] = e;
    local_sum += e;
  }
  const float sum = block_reduce(local_sum, scratch, false);
  __syncthreads();
  const float inv = sum > 0.f ? 1.f / sum : 0.f;  // a fully masked row gives zeros, not NaN
  T* op = out + b * p.out.b + h * p.out.h + i * p.out.l;
  for (int64_t e = threadIdx.x; e < p.Ev; e += blockDim.x) {
    float acc = 0.f;
    const T* vp = v + b * p.v.b + h * p.v.h + e * p.v.e;
    for (int64_t j = 0; j < p.S; ++j) acc += scores[j] * to_float(vp[j * p.v.l]);
    op[e * p.out.e] = from_float<T>(acc * inv);
  }
  if (lse && threadIdx.x == 0) lse[b * p.lse_b + h * p.lse_h + i] = sum > 0.f ? row_max + logf(sum) : -INFINITY;
}

Strides4 strides4(const Tensor& t, const char* what) {
  if (t.dim() != 4) fail(std::string("scaled_dot_product_efficient_attention: ") + what + " must be 4-d");
  return {t.strides[0], t.strides[1], t.strides[2], t.strides[3]};
}

// The bias's strides broadcast to [B, H, L, S] (trailing dims aligned, size-1 dims stride 0).
Strides4 bias_strides(const Tensor& t, const Problem& p) {
  const int64_t want[4] = {p.B, p.H, p.L, p.S};
  int64_t st[4] = {0, 0, 0, 0};
  const int nd = int(t.dim());
  if (nd > 4) fail("scaled_dot_product_efficient_attention: attn_bias has more than 4 dims");
  for (int i = 0; i < nd; ++i) {
    const int d = 4 - nd + i;
    if (t.sizes[i] == want[d]) st[d] = t.strides[i];
    else if (t.sizes[i] != 1) fail("scaled_dot_product_efficient_attention: attn_bias does not broadcast to [B, H, L, S]");
  }
  return {st[0], st[1], st[2], st[3]};
}

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" AOTITorchError aoti_torch_cuda__scaled_dot_product_efficient_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  return guarded(__func__, [&] {
    const Tensor& q = deref(query, "query");
    const Tensor& k = deref(key, "key");
    const Tensor& v = deref(value, "value");
    const Tensor* bias = (attn_bias != nullptr && *attn_bias != nullptr) ? *attn_bias : nullptr;
    if (!ret0 || !ret1 || !ret2 || !ret3) fail("a result pointer is null");
    for (const Tensor* t : {&q, &k, &v}) require_cuda(*t, "scaled_dot_product_efficient_attention");
    if (bias) require_cuda(*bias, "scaled_dot_product_efficient_attention");
    if (dropout_p != 0.0) fail("scaled_dot_product_efficient_attention: dropout is not supported (inference only)");
    if (k.dtype != q.dtype || v.dtype != q.dtype || (bias && bias->dtype != q.dtype))
      fail("scaled_dot_product_efficient_attention: query, key, value and bias dtypes differ");
    Problem p{};
    p.q = strides4(q, "query");
    p.k = strides4(k, "key");
    p.v = strides4(v, "value");
    p.B = q.sizes[0], p.H = q.sizes[1], p.L = q.sizes[2], p.E = q.sizes[3];
    p.S = k.sizes[2], p.Ev = v.sizes[3];
    if (k.sizes[0] != p.B || v.sizes[0] != p.B || k.sizes[1] != p.H || v.sizes[1] != p.H || k.sizes[3] != p.E ||
        v.sizes[2] != p.S)
      fail("scaled_dot_product_efficient_attention: query [B,H,L,E], key [B,H,S,E] and value [B,H,S,Ev] do not fit");
    if (bias) p.bias = bias_strides(*bias, p);
    p.scale = float(scale ? *scale : 1.0 / std::sqrt(double(p.E)));
    p.causal = is_causal != 0;
    const int32_t device = q.storage->device_index;
    // torch: the output is made as [B, L, H, Ev] and returned transposed to [B, H, L, Ev].
    TensorPtr out(new_tensor_on(kCuda, device, std::vector<int64_t>{p.B, p.H, p.L, p.Ev},
                                std::vector<int64_t>{p.L * p.H * p.Ev, p.Ev, p.H * p.Ev, 1}, q.dtype));
    p.out = {out->strides[0], out->strides[1], out->strides[2], out->strides[3]};
    // logsumexp: float32 [B, H, L rounded up to 32] when asked for, else [B, H, 0].
    const int64_t lpad = compute_log_sumexp ? ceil_div(p.L, 32) * 32 : 0;
    TensorPtr lse(new_tensor_on(kCuda, device, std::vector<int64_t>{p.B, p.H, lpad},
                                std::vector<int64_t>{p.H * lpad, lpad, 1}, int32_t(DType::f32)));
    p.lse_b = p.H * lpad, p.lse_h = lpad;
    TensorPtr seed(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    TensorPtr offset(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    if (p.B * p.H * p.L * p.Ev > 0) {
      const std::size_t smem = std::size_t(p.S + p.E + kThreads / 32) * sizeof(float);
      if (smem > 48 * 1024)
        fail("scaled_dot_product_efficient_attention: key length " + std::to_string(p.S) + " + head size " +
             std::to_string(p.E) + " exceed this kernel's shared memory (48 KiB)");
      if (p.L > 2147483647 || p.H > 65535 || p.B > 65535)
        fail("scaled_dot_product_efficient_attention: grid too large");
      const dim3 grid(unsigned(p.L), unsigned(p.H), unsigned(p.B));
      float* lse_ptr = compute_log_sumexp ? reinterpret_cast<float*>(lse->data()) : nullptr;
      cudaStream_t st = current_stream();
      switch (static_cast<DType>(q.dtype)) {
        case DType::f32:
          attention_row_kernel<float><<<grid, kThreads, smem, st>>>(
              (const float*)q.data(), (const float*)k.data(), (const float*)v.data(),
              bias ? (const float*)bias->data() : nullptr, (float*)out->data(), lse_ptr, p);
          break;
        case DType::f16:
          attention_row_kernel<__half><<<grid, kThreads, smem, st>>>(
              (const __half*)q.data(), (const __half*)k.data(), (const __half*)v.data(),
              bias ? (const __half*)bias->data() : nullptr, (__half*)out->data(), lse_ptr, p);
          break;
        case DType::bf16:
          attention_row_kernel<__nv_bfloat16><<<grid, kThreads, smem, st>>>(
              (const __nv_bfloat16*)q.data(), (const __nv_bfloat16*)k.data(), (const __nv_bfloat16*)v.data(),
              bias ? (const __nv_bfloat16*)bias->data() : nullptr, (__nv_bfloat16*)out->data(), lse_ptr, p);
          break;
        default:
          fail(std::string("scaled_dot_product_efficient_attention: dtype ") + dtype_name(q.dtype) +
               " is not supported");
      }
      check(cudaGetLastError(), "attention kernel launch");
    }
    *ret0 = out.release();
    *ret1 = lse.release();
    *ret2 = seed.release();
    *ret3 = offset.release();
  });
}
