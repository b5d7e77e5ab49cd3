// aoti_torch_cuda_convolution on cuDNN (cudnn_conv_plan.hpp): 1-, 2- and 3-D, plain and transposed, any groups,
// f32/f16/bf16/f64; contiguous depthwise 3-D ones on a kernel of its own (cuda_depthwise3d.hpp), as torch does. As
// torch's cuDNN path does it: the input and the weight are made dense in one layout (channels-last when either is, else
// contiguous; conv_shape.hpp), the output is made in that layout, and the bias is added afterwards (so a bf16/f16
// result is rounded after the convolution and again after the bias).
#include "aoti_shim_cuda.h"
#include "runtime/shim/conv_shape.hpp"
#include "cuda_common.hpp"
#include "cuda_depthwise3d.hpp"
#include "cudnn_conv_plan.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <string>

namespace mpspack::shim::cuda {
namespace {

// `t` itself when it is dense in the layout, else a copy that is (torch's contiguous(memory_format)). Strides of
// size-1 dims do not matter: they are never stepped.
TensorPtr dense_in_layout(const Tensor& t, bool channels_last) {
  const std::vector<int64_t> want = layout_strides(t.sizes, channels_last);
  bool dense = true;
  for (std::size_t d = 0; d < want.size(); ++d) dense = dense && (t.sizes[d] == 1 || t.strides[d] == want[d]);
  if (dense) return std::make_unique<Tensor>(t);
  TensorPtr out(new_tensor_on(kCuda, t.storage->device_index, t.sizes, want, t.dtype));
  copy_any(*out, t);
  return out;
}

// y[i] += bias[channel of i] over a dense y with `inner` elements per channel and image (1 when channels-last).
template <class T, class Acc>
__global__ void add_bias_kernel(T* y, const T* bias, int64_t n, int64_t channels, int64_t inner) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = T(Acc(y[i]) + Acc(bias[(i / inner) % channels]));
}

template <class T, class Acc>
void launch_add_bias(Tensor& y, const Tensor& bias, int64_t inner) {
  const int64_t n = y.numel();
  const int threads = 256;
  const int blocks = int(std::min<int64_t>(ceil_div(n, threads), 65535));
  add_bias_kernel<T, Acc><<<blocks, threads, 0, current_stream()>>>(
      reinterpret_cast<T*>(y.data()), reinterpret_cast<const T*>(bias.data()), n, bias.sizes[0], inner);
  check(cudaGetLastError(), "convolution: bias kernel launch");
}

void add_bias(Tensor& y, const Tensor& bias, const ConvShape& s) {
  TensorPtr b = contiguous(bias);
  int64_t inner = 1;
  if (!s.channels_last)
    for (int d = 0; d < s.spatial; ++d) inner *= s.out[std::size_t(d)];
  switch (static_cast<DType>(y.dtype)) {
    case DType::f32: return launch_add_bias<float, float>(y, *b, inner);
    case DType::f64: return launch_add_bias<double, double>(y, *b, inner);
    case DType::f16: return launch_add_bias<__half, float>(y, *b, inner);
    case DType::bf16: return launch_add_bias<__nv_bfloat16, float>(y, *b, inner);
    default: fail(std::string("convolution: bias of dtype ") + dtype_name(y.dtype) + " on cuda");
  }
}

// cuDNN's legacy API counts in 32-bit ints.
void require_int_sized(const ConvShape& s, const Tensor& x, const Tensor& w, const Tensor& y) {
  for (const Tensor* t : {&x, &w, &y})
    if (t->numel() > INT_MAX)
      fail("convolution: a tensor of more than 2^31-1 elements is beyond cuDNN's 32-bit sizes: " + s.describe());
}

// y <- conv(x, w) + b with x, w and y in s's layout (y already is).
void convolve_in_layout(const Tensor& x, const Tensor& w, const Tensor* b, const ConvShape& s, Tensor& y) {
  if (x.numel() == 0 || w.numel() == 0) {  // no input channels: every output is the bias, or zero
    check(cudaMemsetAsync(y.data(), 0, std::size_t(y.numel()) * y.itemsize(), current_stream()), "convolution");
  } else {
    require_int_sized(s, x, w, y);
    const TensorPtr xd = dense_in_layout(x, s.channels_last), wd = dense_in_layout(w, s.channels_last);
    if (depthwise3d_applies(s)) run_depthwise3d(s, *xd, *wd, y);
    else run_cudnn_convolution(s, x.dtype, x.storage->device_index, xd->data(), wd->data(), y.data());
  }
  if (b) add_bias(y, *b, s);
}

void convolve(const Tensor& x, const Tensor& w, const Tensor* b, const ConvShape& s, Tensor& y) {
  if (y.numel() == 0) return;
  // float64 is convolved contiguous, as torch does (cuDNN's channels-last kernels are for the other dtypes); the
  // result then goes into the channels-last output.
  if (!s.channels_last || x.dtype != static_cast<int32_t>(DType::f64)) return convolve_in_layout(x, w, b, s, y);
  ConvShape contiguous_shape = s;
  contiguous_shape.channels_last = false;
  contiguous_shape.out_strides = contiguous_strides(s.out_sizes);
  TensorPtr dense(new_tensor_on(kCuda, x.storage->device_index, s.out_sizes, contiguous_shape.out_strides, y.dtype));
  convolve_in_layout(x, w, b, contiguous_shape, *dense);
  copy_any(y, *dense);
}

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" AOTITorchError aoti_torch_cuda_convolution(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    const Tensor& x = deref(input, "input");
    const Tensor& w = deref(weight, "weight");
    const Tensor* b = (bias != nullptr && *bias != nullptr) ? *bias : nullptr;
    if (ret0 == nullptr) fail("ret0 is null");
    require_cuda(x, "convolution");
    require_cuda(w, "convolution");
    if (b) require_cuda(*b, "convolution");
    const int device = x.storage->device_index;
    if (w.storage->device_index != device || (b && b->storage->device_index != device))
      fail("convolution: input, weight and bias are on different cuda devices");
    const ConvShape s = convolution_shape(x, w, b, stride, stride_len_, padding, padding_len_, dilation, dilation_len_,
                                          transposed, output_padding, output_padding_len_, groups);
    TensorPtr y(new_tensor_on(kCuda, device, s.out_sizes, s.out_strides, x.dtype));
    convolve(x, w, b, s, *y);
    *ret0 = y.release();
  });
}
