// aten::_thnn_fused_lstm_cell on cuda (what nn.LSTMCell runs on the GPU): gates = input_gates + hidden_gates
// (+ input_bias + hidden_bias), split into the input, forget, cell and output gates in that order along dim 1;
// cy = sigmoid(f) * cx + sigmoid(i) * tanh(g), hy = sigmoid(o) * tanh(cy). The workspace torch returns for the
// backward pass holds the four activated gates [B, 4H]. Computed in float for float16 and bfloat16, as torch's
// kernel does.
#include "aoti_shim_cuda.h"
#include "cuda_common.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <vector>

namespace mpspack::shim::cuda {
namespace {

template <class T>
__device__ float to_float(T v) {
  return float(v);
}
template <>
__device__ float to_float(__half v) {
  return __half2float(v);
}
template <>
__device__ float to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <class T>
__device__ T from_float(float v) {
  return T(v);
}
template <>
__device__ __half from_float(float v) {
  return __float2half(v);
}
template <>
__device__ __nv_bfloat16 from_float(float v) {
  return __float2bfloat16(v);
}

__device__ float sigmoid(float x) { return 1.f / (1.f + expf(-x)); }

template <class T>
__global__ void lstm_cell_kernel(const T* ig, const T* hg, const T* cx, const T* ib, const T* hb, T* hy, T* cy,
                                 T* workspace, int64_t batch, int64_t hidden) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= batch * hidden) return;
  const int64_t b = idx / hidden, h = idx % hidden;
  float gate[4];
  for (int q = 0; q < 4; ++q) {
    const int64_t col = q * hidden + h, at = b * 4 * hidden + col;
    float v = to_float(ig[at]) + to_float(hg[at]);
    if (ib != nullptr) v += to_float(ib[col]) + to_float(hb[col]);
    gate[q] = q == 2 ? tanhf(v) : sigmoid(v);
    workspace[at] = from_float<T>(gate[q]);
  }
  const float c = gate[1] * to_float(cx[idx]) + gate[0] * gate[2];
  cy[idx] = from_float<T>(c);
  hy[idx] = from_float<T>(gate[3] * tanhf(c));
}

const char* kOp = "_thnn_fused_lstm_cell";

const Tensor* optional(AtenTensorHandle* h) { return (h != nullptr && *h != nullptr) ? *h : nullptr; }

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" AOTITorchError aoti_torch_cuda__thnn_fused_lstm_cell(AtenTensorHandle input_gates,
                                                                AtenTensorHandle hidden_gates, AtenTensorHandle cx,
                                                                AtenTensorHandle* input_bias,
                                                                AtenTensorHandle* hidden_bias, AtenTensorHandle* ret0,
                                                                AtenTensorHandle* ret1, AtenTensorHandle* ret2) {
  return guarded(__func__, [&] {
    const std::string op = kOp;
    const Tensor& ig = deref(input_gates, "input_gates");
    const Tensor& hg = deref(hidden_gates, "hidden_gates");
    const Tensor& c = deref(cx, "cx");
    const Tensor* ib = optional(input_bias);
    const Tensor* hb = optional(hidden_bias);
    if ((ib == nullptr) != (hb == nullptr)) fail(op + ": give both biases or neither");
    for (const Tensor* t : {&ig, &hg, &c, ib, hb})
      if (t != nullptr) require_cuda(*t, kOp);
    if (c.dim() != 2 || ig.dim() != 2 || ig.sizes != hg.sizes || ig.sizes[0] != c.sizes[0] ||
        ig.sizes[1] != 4 * c.sizes[1])
      fail(op + ": input_gates and hidden_gates must be [B, 4H] for cx [B, H]");
    if (ib && (ib->dim() != 1 || ib->sizes[0] != ig.sizes[1] || hb->dim() != 1 || hb->sizes[0] != ig.sizes[1]))
      fail(op + ": the biases must be [4H]");
    for (const Tensor* t : {&hg, &c, ib, hb})
      if (t != nullptr && t->dtype != ig.dtype) fail(op + ": the operands' dtypes differ");
    const int64_t batch = c.sizes[0], hidden = c.sizes[1];
    const int32_t device = ig.storage->device_index;
    // The kernel reads dense rows: contiguous copies where the operands are not.
    TensorPtr igc = contiguous(ig), hgc = contiguous(hg), cxc = contiguous(c);
    TensorPtr ibc = ib ? contiguous(*ib) : nullptr, hbc = hb ? contiguous(*hb) : nullptr;
    TensorPtr hy(
        new_tensor_on(kCuda, device, std::vector<int64_t>{batch, hidden}, std::vector<int64_t>{hidden, 1}, ig.dtype));
    TensorPtr cy(
        new_tensor_on(kCuda, device, std::vector<int64_t>{batch, hidden}, std::vector<int64_t>{hidden, 1}, ig.dtype));
    TensorPtr ws(new_tensor_on(kCuda, device, std::vector<int64_t>{batch, 4 * hidden},
                               std::vector<int64_t>{4 * hidden, 1}, ig.dtype));
    if (batch * hidden > 0) {
      const int threads = 256;
      const unsigned blocks = unsigned(ceil_div(batch * hidden, threads));
      auto launch = [&](auto tag) {
        using T = decltype(tag);
        auto p = [](const TensorPtr& t) { return t ? reinterpret_cast<const T*>(t->data()) : nullptr; };
        lstm_cell_kernel<T><<<blocks, threads, 0, current_stream()>>>(
            p(igc), p(hgc), p(cxc), p(ibc), p(hbc), reinterpret_cast<T*>(hy->data()), reinterpret_cast<T*>(cy->data()),
            reinterpret_cast<T*>(ws->data()), batch, hidden);
      };
      switch (static_cast<DType>(ig.dtype)) {
        case DType::f32: launch(float{}); break;
        case DType::f64: launch(double{}); break;
        case DType::f16: launch(__half{}); break;
        case DType::bf16: launch(__nv_bfloat16{}); break;
        default: fail(op + ": dtype " + dtype_name(ig.dtype) + " is not supported");
      }
      check(cudaGetLastError(), "_thnn_fused_lstm_cell kernel launch");
    }
    hand_out(ret0, std::move(hy));
    hand_out(ret1, std::move(cy));
    hand_out(ret2, std::move(ws));
  });
}
