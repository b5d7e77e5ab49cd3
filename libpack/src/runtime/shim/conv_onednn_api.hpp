// What crosses between the CPU shim and its oneDNN plugin (lib/mpspack/conv_onednn.so, conv_onednn.cpp): one
// convolution, described by its ConvShape and plain views of its tensors. Both sides are built from this tree by
// one compiler, so the C++ types cross as they are. The plugin uses nothing of the shim's code, only these headers,
// so it opens in any process.
#pragma once

#include "conv_shape.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mpspack::shim {

// A tensor as oneDNN needs it: element 0's address, c10 dtype code, sizes and strides in elements.
struct ConvTensorView {
  void* data = nullptr;  // nullptr: absent (no bias)
  int32_t dtype = 0;
  std::vector<int64_t> sizes, strides;
};

struct OnednnConvCall {
  const ConvShape* shape = nullptr;
  ConvTensorView input, weight, bias, output;  // output allocated by the caller with shape->out_strides
  std::string* implementation = nullptr;       // when set, gets the kernel oneDNN chose ("jit:avx512_core", ...)
};

// Runs the convolution; returns an empty string, or one line saying why it could not (without the shape, which
// the caller adds). Thread-safe.
using OnednnConvolution = std::string (*)(const OnednnConvCall& call);
inline constexpr const char* kOnednnConvolutionEntry = "mpspack_onednn_convolution_v1";

// oneDNN's version and the instruction set its kernels use ("oneDNN 2.6.3, avx512_core_bf16").
using OnednnDescribe = std::string (*)();
inline constexpr const char* kOnednnDescribeEntry = "mpspack_onednn_describe_v1";

}  // namespace mpspack::shim
