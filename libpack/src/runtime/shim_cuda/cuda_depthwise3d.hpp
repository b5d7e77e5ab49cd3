// A direct kernel for depthwise 3-D convolutions on contiguous tensors, as torch has one (conv_depthwise3d):
// cuDNN runs these 10x slower than a plain loop over the taps (bench/cuda_conv_host.cpp: 218 against 18 us for
// 32 channels of 4x28x28 on an H200), and in channels-last torch uses cuDNN too, so only the contiguous case is
// taken here.
#pragma once

#include "runtime/shim/conv_shape.hpp"
#include "runtime/shim/tensor.hpp"

namespace mpspack::shim::cuda {

// Whether the kernel takes the shape: not transposed, 3-D, contiguous, groups == input channels (each output
// channel reads one input channel).
bool depthwise3d_applies(const ConvShape& s);

// y <- conv(x, w) for such a shape; x, w and y dense contiguous, one dtype (f32, f64, f16 or bf16); no bias.
// Queued on current_stream().
void run_depthwise3d(const ConvShape& s, const Tensor& x, const Tensor& w, Tensor& y);

}  // namespace mpspack::shim::cuda
