// A convolution on cuDNN: the plan of one shape, made once per shape and kept for the process, and the call that
// runs it. The plan is a graph-API execution plan (cudnn_conv_graph.hpp), or the legacy API's descriptors and
// algorithm where cuDNN builds no graph plan for the shape.
#pragma once

#include "runtime/shim/conv_shape.hpp"
#include "cudnn_library.hpp"

#include <span>
#include <vector>

namespace mpspack::shim::cuda {

// Whether f32 convolutions may use TF32 tensor cores: yes, as torch's default (torch.backends.cudnn.allow_tf32),
// unless MPSPACK_CUDNN_TF32=0 or run --no-tf32 turned it off (tf32_convolutions(), runtime/tuning/tuning.hpp).
bool conv_tf32_allowed();

// Dense strides for sizes [N, C, spatial...] (or a weight's [O, C/groups, k...]): contiguous, or channels-last
// (C innermost, then the spatial dims, N outermost).
std::vector<int64_t> layout_strides(std::span<const int64_t> sizes, bool channels_last);

// Whether `bytes` of workspace can be had now on `device` (a failed allocation leaves no CUDA error behind).
bool workspace_fits(std::size_t bytes, int device);

// y <- conv(x, w) for a plain shape , or conv_transpose(x, w) for a transposed one (cuDNN's backward-data
// operation, x as the gradient of a convolution's output). x, w and y are dense in the layout
// s.channels_last names (channels-last, or contiguous) and of one dtype; no bias. The workspace comes from the
// shim's allocator; everything runs on current_stream(). Throws ShimError
// "convolution: ... <shape>: <cuDNN's message>".
void run_cudnn_convolution(const ConvShape& s, int32_t dtype, int device, const void* x, const void* w, void* y);

}  // namespace mpspack::shim::cuda
