// A convolution on cuDNN's (legacy) API: the descriptors of one shape and the algorithm chosen for it, made once
// per shape and kept for the process, and the call that runs it.
#pragma once

#include "conv_shape.hpp"
#include "cudnn_library.hpp"

#include <span>
#include <vector>

namespace mpspack::shim::cuda {

// Whether f32 convolutions may use TF32 tensor cores: yes, as torch's default (torch.backends.cudnn.allow_tf32),
// unless the environment sets MPSPACK_CUDNN_TF32=0 (read once, at the first convolution).
bool conv_tf32_allowed();

// Dense strides for sizes [N, C, spatial...] (or a weight's [O, C/groups, k...]): contiguous, or channels-last
// (C innermost, then the spatial dims, N outermost).
std::vector<int64_t> layout_strides(std::span<const int64_t> sizes, bool channels_last);

// y <- conv(x, w) for a plain shape (cudnnConvolutionForward), or conv_transpose(x, w) for a transposed one
// (cudnnConvolutionBackwardData, x as the gradient of a convolution's output). x, w and y are dense in the layout
// s.channels_last names (channels-last, or contiguous) and of one dtype; no bias. The workspace comes from the
// shim's allocator; everything runs on current_stream(). Throws ShimError
// "convolution: ... <shape>: <cuDNN's message>".
void run_cudnn_convolution(const ConvShape& s, int32_t dtype, int device, const void* x, const void* w, void* y);

}  // namespace mpspack::shim::cuda
