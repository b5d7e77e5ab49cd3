// The shape arithmetic of aten::convolution, shared by the CPU and GPU shims: arguments checked, output size and
// layout as torch computes them, for 1-, 2- and 3-D convolutions, plain and transposed.
#pragma once

#include "tensor.hpp"

#include <array>
#include <vector>

namespace mpspack::shim {

struct ConvShape {
  int spatial = 0;          // 1, 2 or 3 spatial dims; the arrays below hold that many entries, the rest unused
  bool transposed = false;  // weight [C, O/groups, k...] and output size (in-1)*stride - 2*pad + ... (ConvTranspose)
  int64_t N = 0, C = 0, O = 0, groups = 1;
  std::array<int64_t, 3> in{}, kernel{}, out{}, stride{}, pad{}, dilation{}, out_pad{};
  std::vector<int64_t> out_sizes;    // [N, O, out...]
  std::vector<int64_t> out_strides;  // torch's: channels-last when the input or the weight is, else contiguous
  bool channels_last = false;        // whether out_strides are channels-last (2-D and 3-D only)

  // The shape as one line, for error messages: "conv2d N=1 C=3 O=8 in=32x32 k=3x3 stride=1x1 ... groups=1".
  std::string describe() const;
};

// Throws ShimError naming what does not fit.
ConvShape convolution_shape(const Tensor& x, const Tensor& w, const Tensor* b, const int64_t* stride,
                            int64_t stride_len, const int64_t* padding, int64_t padding_len, const int64_t* dilation,
                            int64_t dilation_len, int32_t transposed, const int64_t* output_padding,
                            int64_t output_padding_len, int64_t groups);

}  // namespace mpspack::shim
