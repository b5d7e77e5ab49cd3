// aten::convolution on the CPU: oneDNN (onednn_conv.cpp) for float32, bfloat16 and float16; the built-in im2col +
// GEMM (conv_im2col.cpp) for float64, which oneDNN has no kernels for, and, with one warning, where the oneDNN
// plugin cannot be opened (docs/BACKENDS.md, "CPU convolutions").
#include "aoti_shim.h"
#include "conv_cpu.hpp"
#include "conv_shape.hpp"
#include "tensor.hpp"

#include <atomic>
#include <cstdio>
#include <string>

using namespace mpspack::shim;

namespace {

// Whether oneDNN runs this call; fails (with where mpspack looked) when it must and cannot.
bool use_onednn(const Tensor& x, const ConvShape& s) {
  if (x.dtype == static_cast<int32_t>(DType::f64) || cpu_conv_mode() == "im2col") return false;
  std::string why;
  if (onednn_plugin_open(&why)) return true;
  if (cpu_conv_mode() == "onednn") fail("convolution: " + why + " (MPSPACK_CPU_CONV=onednn)");
  if (s.spatial > 2 || s.transposed)
    fail("convolution: " + why + "; the built-in path has no kernel for " + s.describe());
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr, "Warning: mpspack: %s; convolutions run on the slower built-in path\n", why.c_str());
  return false;
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu_convolution(AtenTensorHandle input, AtenTensorHandle weight,
                                                     AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
                                                     const int64_t* padding, int64_t padding_len_,
                                                     const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
                                                     const int64_t* output_padding, int64_t output_padding_len_,
                                                     int64_t groups, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    const Tensor& x = deref(input, "input");
    const Tensor& w = deref(weight, "weight");
    const Tensor* b = (bias != nullptr && *bias != nullptr) ? *bias : nullptr;
    if (ret0 == nullptr) fail("ret0 is null");
    require_cpu(x, "convolution");
    require_cpu(w, "convolution");
    if (b) require_cpu(*b, "convolution");
    const ConvShape s = convolution_shape(x, w, b, stride, stride_len_, padding, padding_len_, dilation, dilation_len_,
                                          transposed, output_padding, output_padding_len_, groups);
    TensorPtr out(new_tensor(s.out_sizes, s.out_strides, x.dtype));
    if (out->numel() > 0) {
      if (s.C == 0) fail("convolution: no input channels: " + s.describe());
      if (use_onednn(x, s)) convolution_onednn(s, x, w, b, *out);
      else convolution_im2col(s, x, w, b, *out);
    }
    *ret0 = out.release();
  });
}
