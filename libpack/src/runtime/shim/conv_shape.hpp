// The shape arithmetic of aten::convolution (1-D and 2-D, not transposed), shared by the CPU and GPU shims:
// arguments checked, output size and layout as torch computes them.
#pragma once

#include "tensor.hpp"

#include <vector>

namespace mpspack::shim {

// 1-D convolutions are 2-D ones with H = KH = 1.
struct ConvShape {
  int64_t N, C, H, W, O, KH, KW, OH, OW, groups;
  int64_t sh, sw, ph, pw, dh, dw;
  std::vector<int64_t> out_sizes;    // [N, O, (OH,) OW]
  std::vector<int64_t> out_strides;  // torch's: channels-last when the input or the weight is, else contiguous
};

// Throws ShimError naming what does not fit.
ConvShape convolution_shape(const Tensor& x, const Tensor& w, const Tensor* b, const int64_t* stride,
                            int64_t stride_len, const int64_t* padding, int64_t padding_len, const int64_t* dilation,
                            int64_t dilation_len, int32_t transposed, int64_t groups);

}  // namespace mpspack::shim
