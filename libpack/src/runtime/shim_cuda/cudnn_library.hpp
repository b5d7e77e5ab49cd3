// cuDNN for the CUDA shim: opened at first use (dlopen), its functions, one handle per device.
//
// Not linked: mpspack then starts on machines without cuDNN (CI, CPU-only hosts), and the GPU host's own copy is
// the one used (the one torch's wheel installed, through LD_LIBRARY_PATH, or the toolkit's). libcudnn.so.9 opens
// its sub-libraries (libcudnn_graph, _ops, _cnn, _engines_*) itself from its own folder (RUNPATH $ORIGIN), so
// opening it by full path is enough.
#pragma once

#include "runtime/shim/tensor.hpp"

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <mutex>
#include <string>

namespace mpspack::shim::cuda {

struct Cudnn {
  decltype(&cudnnGetVersion) get_version = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnGetLastErrorString) last_error_string = nullptr;  // optional: the detail of the last failure
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnSetTensorNdDescriptor) set_tensor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnSetFilterNdDescriptor) set_filter = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_conv = nullptr;
  decltype(&cudnnSetConvolutionNdDescriptor) set_conv = nullptr;
  decltype(&cudnnSetConvolutionGroupCount) set_conv_groups = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_conv_math = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithmMaxCount) forward_algo_count = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) forward_algos = nullptr;
  decltype(&cudnnFindConvolutionForwardAlgorithm) find_forward_algos = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithmMaxCount) backward_data_algo_count = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) backward_data_algos = nullptr;
  decltype(&cudnnFindConvolutionBackwardDataAlgorithm) find_backward_data_algos = nullptr;
  decltype(&cudnnConvolutionBackwardData) backward_data = nullptr;
  // The graph (backend) API: descriptors made of attributes, finalized, and execution plans.
  decltype(&cudnnBackendCreateDescriptor) backend_create = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) backend_destroy = nullptr;
  decltype(&cudnnBackendSetAttribute) backend_set = nullptr;
  decltype(&cudnnBackendGetAttribute) backend_get = nullptr;
  decltype(&cudnnBackendFinalize) backend_finalize = nullptr;
  decltype(&cudnnBackendExecute) backend_execute = nullptr;
};

// The library, opened on the first call: MPSPACK_CUDNN, then libcudnn.so.9 by name (LD_LIBRARY_PATH, the system's
// library path), then the CUDA toolkit's copy. Throws ShimError, one line naming where it looked, when none opens
// or one lacks a function.
const Cudnn& cudnn();

// Opens cuDNN and makes `device`'s handle now, as the first convolution would. Throws ShimError.
void open_cudnn(int device);

// cuDNN's name for a convolution dtype (f32, f16, bf16, f64); throws ShimError for any other.
cudnnDataType_t cudnn_data_type(int32_t dtype);

// Throws ShimError "<what>: <cuDNN's message>" unless s is CUDNN_STATUS_SUCCESS.
void check_cudnn(cudnnStatus_t s, const std::string& what);

// The device's handle, bound to `stream`, held for one call sequence: cuDNN handles are not safe to share between
// threads, so each lease holds the device's lock.
class CudnnLease {
 public:
  CudnnLease(int device, cudaStream_t stream);
  cudnnHandle_t handle() const { return handle_; }

 private:
  std::unique_lock<std::mutex> lock_;
  cudnnHandle_t handle_ = nullptr;
};

}  // namespace mpspack::shim::cuda
