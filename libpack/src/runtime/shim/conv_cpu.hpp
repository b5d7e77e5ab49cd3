// The CPU convolution's two paths, behind aoti_torch_cpu_convolution (convolution.cpp): oneDNN through its plugin
// (onednn_conv.cpp, opened by onednn_plugin.cpp) for float32, bfloat16 and float16, and the built-in im2col + GEMM
// (conv_im2col.cpp) for float64 and where the plugin cannot be opened.
#pragma once

#include "conv_shape.hpp"
#include "onednn_plugin.hpp"
#include "tensor.hpp"

#include <string>
#include <string_view>

namespace mpspack::shim {

// out <- the convolution of x by w (+ b), out allocated with s.out_sizes and s.out_strides.
// im2col + one GEMM per (image, group): 1-D and 2-D, not transposed; float64 in double, other dtypes in float32.
void convolution_im2col(const ConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& out);
// oneDNN: every shape ConvShape describes, float32, bfloat16 and float16. `implementation`, when set, gets the
// kernel oneDNN chose. Throws ShimError when the plugin cannot be opened or oneDNN refuses the shape.
void convolution_onednn(const ConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& out,
                        std::string* implementation = nullptr);

// MPSPACK_CPU_CONV, read once: "onednn" (oneDNN or fail), "im2col" (the built-in path, for measurements), empty
// by default (oneDNN, else the built-in path with one warning).
std::string_view cpu_conv_mode();

}  // namespace mpspack::shim
