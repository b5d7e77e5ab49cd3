// cuDNN opened at first use, and its per-device handles (cudnn_library.hpp).
#include "cudnn_library.hpp"

#include "cuda_common.hpp"
#include "runtime/tuning/tuning.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <vector>

namespace mpspack::shim::cuda {
namespace {

constexpr const char* kToolkitCopy = "/usr/local/cuda/lib64/libcudnn.so.9";

// Where the library is looked for, in order.
std::vector<std::string> candidates() {
  std::vector<std::string> names;
  if (!tuning().cudnn.empty()) names.push_back(tuning().cudnn);
  names.insert(names.end(), {"libcudnn.so.9", kToolkitCopy});
  return names;
}

std::string not_found_message() {
  const std::string& named = tuning().cudnn;
  return std::string("cuDNN 9 could not be opened (looked at MPSPACK_CUDNN=") + (named.empty() ? "(unset)" : named) +
         ", libcudnn.so.9 on the library path, " + kToolkitCopy +
         "); put its folder on LD_LIBRARY_PATH or name the file in MPSPACK_CUDNN";
}

template <class F>
void bind(void* lib, F& fn, const char* name, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (fn == nullptr && missing.empty()) missing = name;
}

// Every function the shim calls, or the name of the first one missing.
std::string bind_all(void* h, Cudnn& c) {
  std::string missing;
  bind(h, c.get_version, "cudnnGetVersion", missing);
  bind(h, c.create, "cudnnCreate", missing);
  bind(h, c.set_stream, "cudnnSetStream", missing);
  bind(h, c.error_string, "cudnnGetErrorString", missing);
  bind(h, c.create_tensor, "cudnnCreateTensorDescriptor", missing);
  bind(h, c.set_tensor, "cudnnSetTensorNdDescriptor", missing);
  bind(h, c.destroy_tensor, "cudnnDestroyTensorDescriptor", missing);
  bind(h, c.create_filter, "cudnnCreateFilterDescriptor", missing);
  bind(h, c.set_filter, "cudnnSetFilterNdDescriptor", missing);
  bind(h, c.destroy_filter, "cudnnDestroyFilterDescriptor", missing);
  bind(h, c.create_conv, "cudnnCreateConvolutionDescriptor", missing);
  bind(h, c.set_conv, "cudnnSetConvolutionNdDescriptor", missing);
  bind(h, c.set_conv_groups, "cudnnSetConvolutionGroupCount", missing);
  bind(h, c.set_conv_math, "cudnnSetConvolutionMathType", missing);
  bind(h, c.destroy_conv, "cudnnDestroyConvolutionDescriptor", missing);
  bind(h, c.forward_algo_count, "cudnnGetConvolutionForwardAlgorithmMaxCount", missing);
  bind(h, c.forward_algos, "cudnnGetConvolutionForwardAlgorithm_v7", missing);
  bind(h, c.find_forward_algos, "cudnnFindConvolutionForwardAlgorithm", missing);
  bind(h, c.forward, "cudnnConvolutionForward", missing);
  bind(h, c.backward_data_algo_count, "cudnnGetConvolutionBackwardDataAlgorithmMaxCount", missing);
  bind(h, c.backward_data_algos, "cudnnGetConvolutionBackwardDataAlgorithm_v7", missing);
  bind(h, c.find_backward_data_algos, "cudnnFindConvolutionBackwardDataAlgorithm", missing);
  bind(h, c.backward_data, "cudnnConvolutionBackwardData", missing);
  bind(h, c.backend_create, "cudnnBackendCreateDescriptor", missing);
  bind(h, c.backend_destroy, "cudnnBackendDestroyDescriptor", missing);
  bind(h, c.backend_set, "cudnnBackendSetAttribute", missing);
  bind(h, c.backend_get, "cudnnBackendGetAttribute", missing);
  bind(h, c.backend_finalize, "cudnnBackendFinalize", missing);
  bind(h, c.backend_execute, "cudnnBackendExecute", missing);
  std::string optional;
  bind(h, c.last_error_string, "cudnnGetLastErrorString", optional);
  return missing;
}

struct Opened {
  Cudnn fns;
  std::string error;  // why it cannot be used
};

const Opened& opened() {
  static const Opened lib = [] {
    Opened o;
    void* h = nullptr;
    std::string path;
    for (const auto& n : candidates())
      if ((h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) {
        path = n;
        break;
      }
    if (h == nullptr) {
      o.error = not_found_message();
      return o;
    }
    if (const std::string missing = bind_all(h, o.fns); !missing.empty())
      o.error = "the cuDNN opened as " + path + " lacks " + missing + " (cuDNN 9 is needed)";
    else if (o.fns.get_version() < 90000)
      o.error =
          "the cuDNN opened as " + path + " is version " + std::to_string(o.fns.get_version()) + "; cuDNN 9 is needed";
    return o;
  }();
  return lib;
}

}  // namespace

const Cudnn& cudnn() {
  const Opened& o = opened();
  if (!o.error.empty()) fail(o.error);
  return o.fns;
}

cudnnDataType_t cudnn_data_type(int32_t dtype) {
  switch (static_cast<DType>(dtype)) {
    case DType::f32: return CUDNN_DATA_FLOAT;
    case DType::f16: return CUDNN_DATA_HALF;
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    case DType::f64: return CUDNN_DATA_DOUBLE;
    default: fail(std::string("convolution: dtype ") + dtype_name(dtype) + " is not supported on cuda");
  }
}

void check_cudnn(cudnnStatus_t s, const std::string& what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  const Cudnn& c = cudnn();
  std::string why = c.error_string(s);
  if (c.last_error_string) {
    char detail[512] = {};
    c.last_error_string(detail, sizeof detail);
    if (detail[0] != '\0') why += " (" + std::string(detail) + ")";
  }
  fail(what + ": " + why);
}

namespace {

struct DeviceHandle {
  std::mutex mutex;  // held while the handle is in use
  cudnnHandle_t handle = nullptr;
};

// One per device, made on first use (cudnnCreate binds a handle to the current device).
DeviceHandle& device_handle(int device) {
  static std::mutex table_mutex;
  static std::map<int, DeviceHandle> table;  // nodes never move
  std::lock_guard lock(table_mutex);
  DeviceHandle& d = table[device];
  if (d.handle == nullptr) {
    int previous = 0;
    check(cudaGetDevice(&previous), "cudaGetDevice");
    check(cudaSetDevice(device), "cudaSetDevice");
    const cudnnStatus_t s = cudnn().create(&d.handle);
    check(cudaSetDevice(previous), "cudaSetDevice");
    check_cudnn(s, "cudnnCreate on cuda:" + std::to_string(device));
  }
  return d;
}

}  // namespace

void open_cudnn(int device) { (void)device_handle(device); }

CudnnLease::CudnnLease(int device, cudaStream_t stream) {
  DeviceHandle& d = device_handle(device);
  lock_ = std::unique_lock(d.mutex);
  handle_ = d.handle;
  check_cudnn(cudnn().set_stream(handle_, stream), "cudnnSetStream");
}

}  // namespace mpspack::shim::cuda
