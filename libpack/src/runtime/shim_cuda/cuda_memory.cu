// Device memory for the shim's cuda tensors: CUDA's stream-ordered pool (cudaMallocAsync) as the caching
// allocator, copies between host and device and within the device, and the device/stream guards.
//
// Why the stream-ordered pool: AOTInductor allocates and frees every intermediate buffer on every run;
// cudaMalloc/cudaFree would synchronise the device each time. The pool (release threshold raised to "keep
// everything") hands freed blocks back to later allocations on the same stream without a synchronisation,
// which is what a caching allocator does, and it stays valid inside CUDA graph capture.
#include "aoti_shim_cuda.h"
#include "cuda_common.hpp"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace mpspack::shim::cuda {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(e));
}

namespace {
thread_local cudaStream_t t_stream = nullptr;
}

cudaStream_t current_stream() { return t_stream; }
void set_current_stream(cudaStream_t stream) { t_stream = stream; }

void require_cuda(const Tensor& t, const char* op) {
  if (t.device_type() != kCuda)
    fail(std::string(op) + ": expects cuda tensors (got device type " + std::to_string(t.device_type()) + ")");
}

std::vector<int32_t> int32_values(const Tensor& t, const std::string& what) {
  if (t.dtype != int32_t(DType::i32)) fail(what + " must have dtype int32, got " + dtype_name(t.dtype));
  if (t.dim() != 1) fail(what + " must be 1-d");
  const int64_t n = t.sizes[0];
  std::vector<int32_t> values(static_cast<std::size_t>(n));
  if (n == 0) return values;
  if (n > 1 && t.strides[0] != 1) fail(what + " must be contiguous");
  const std::size_t bytes = std::size_t(n) * sizeof(int32_t);
  if (t.device_type() == kCpu) {
    std::memcpy(values.data(), t.data(), bytes);
  } else {
    require_cuda(t, what.c_str());
    const cudaStream_t stream = current_stream();
    check(cudaMemcpyAsync(values.data(), t.data(), bytes, cudaMemcpyDeviceToHost, stream), what.c_str());
    check(cudaStreamSynchronize(stream), what.c_str());
  }
  return values;
}

// ---- strided copy kernel ---------------------------------------------------------------------------------

namespace {

constexpr int kMaxDims = 16;
struct CopyShape {
  int nd;
  int64_t sizes[kMaxDims];
  int64_t dst_strides[kMaxDims];
  int64_t src_strides[kMaxDims];
};

template <class T>
__global__ void strided_copy_kernel(T* dst, const T* src, CopyShape s, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = i, d_off = 0, s_off = 0;
    for (int d = s.nd - 1; d >= 0; --d) {
      const int64_t idx = rem % s.sizes[d];
      rem /= s.sizes[d];
      d_off += idx * s.dst_strides[d];
      s_off += idx * s.src_strides[d];
    }
    dst[d_off] = src[s_off];
  }
}

struct Opaque16 {
  uint4 v;
};

}  // namespace

void launch_strided_copy(void* dst, const int64_t* dst_strides, const void* src, const int64_t* src_strides,
                         const int64_t* sizes, int nd, std::size_t itemsize, cudaStream_t stream) {
  if (nd > kMaxDims) fail("copy of a tensor with more than 16 dimensions on cuda");
  CopyShape s{};
  s.nd = nd;
  int64_t n = 1;
  for (int d = 0; d < nd; ++d) {
    s.sizes[d] = sizes[d];
    s.dst_strides[d] = dst_strides[d];
    s.src_strides[d] = src_strides[d];
    n *= sizes[d];
  }
  if (n == 0) return;
  const int threads = 256;
  const int blocks = int(std::min<int64_t>(ceil_div(n, threads), 65535));
  switch (itemsize) {
    case 1: strided_copy_kernel<<<blocks, threads, 0, stream>>>((uint8_t*)dst, (const uint8_t*)src, s, n); break;
    case 2: strided_copy_kernel<<<blocks, threads, 0, stream>>>((uint16_t*)dst, (const uint16_t*)src, s, n); break;
    case 4: strided_copy_kernel<<<blocks, threads, 0, stream>>>((uint32_t*)dst, (const uint32_t*)src, s, n); break;
    case 8: strided_copy_kernel<<<blocks, threads, 0, stream>>>((uint64_t*)dst, (const uint64_t*)src, s, n); break;
    default: fail("copy of elements of " + std::to_string(itemsize) + " bytes on cuda");
  }
  check(cudaGetLastError(), "strided copy kernel launch");
}

TensorPtr empty_contiguous_like(const Tensor& t, int32_t dtype) {
  return TensorPtr(new_tensor_on(kCuda, t.storage->device_index, t.sizes, contiguous_strides(t.sizes), dtype));
}

TensorPtr contiguous(const Tensor& t) {
  if (t.is_contiguous()) return std::make_unique<Tensor>(t);
  TensorPtr out = empty_contiguous_like(t, t.dtype);
  launch_strided_copy(out->data(), out->strides.data(), t.data(), t.strides.data(), t.sizes.data(), int(t.dim()),
                      t.itemsize(), current_stream());
  return out;
}

namespace {

bool same_dense_layout(const Tensor& a, const Tensor& b) {
  return a.sizes == b.sizes && a.is_contiguous() && b.is_contiguous();
}

class CudaMemory final : public DeviceMemory {
 public:
  void* allocate(std::size_t nbytes, int32_t device_index, void** context) override {
    prepare_pool(device_index);
    cudaStream_t stream = current_stream();
    void* p = nullptr;
    check(cudaMallocAsync(&p, nbytes, stream),
          ("allocating " + std::to_string(nbytes) + " bytes on cuda:" + std::to_string(device_index)).c_str());
    *context = stream;
    return p;
  }

  void release(void* data, int32_t, void* context) noexcept override {
    // Back to the pool on the stream it was made on: later work on that stream may reuse it at once.
    cudaFreeAsync(data, static_cast<cudaStream_t>(context));
  }

  void copy(Tensor& dst, const Tensor& src) override {
    if (dst.numel() == 0) return;
    cudaStream_t stream = current_stream();
    if (dst.device_type() == kCuda && src.device_type() == kCuda) return device_to_device(dst, src, stream);
    if (dst.device_type() == kCuda) return host_to_device(dst, src, stream);
    return device_to_host(dst, src, stream);
  }

 private:
  std::mutex mutex_;
  std::vector<bool> pool_ready_;

  // Keep freed memory in the pool instead of returning it to the driver at each synchronisation.
  void prepare_pool(int32_t device) {
    std::lock_guard lock(mutex_);
    if (device < 0) fail("negative cuda device index");
    if (pool_ready_.size() <= std::size_t(device)) pool_ready_.resize(std::size_t(device) + 1, false);
    if (pool_ready_[std::size_t(device)]) return;
    cudaMemPool_t pool;
    check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
    uint64_t keep_all = UINT64_MAX;
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all), "cudaMemPoolSetAttribute");
    pool_ready_[std::size_t(device)] = true;
  }

  static void device_to_device(Tensor& dst, const Tensor& src, cudaStream_t stream) {
    if (dst.dtype != src.dtype)
      fail(std::string("copy_ from ") + dtype_name(src.dtype) + " to " + dtype_name(dst.dtype) +
           " on cuda: dtype conversion on the GPU is not supported by the mpspack shim");
    if (same_dense_layout(dst, src)) {
      check(cudaMemcpyAsync(dst.data(), src.data(), std::size_t(dst.numel()) * dst.itemsize(), cudaMemcpyDeviceToDevice,
                            stream),
            "copy_ (device to device)");
      return;
    }
    const auto sst = broadcast_strides(dst, src);
    launch_strided_copy(dst.data(), dst.strides.data(), src.data(), sst.data(), dst.sizes.data(), int(dst.dim()),
                        dst.itemsize(), stream);
  }

  // The host side is made dense in dst's dtype first (broadcast and conversion on the CPU), then one upload.
  static void host_to_device(Tensor& dst, const Tensor& src, cudaStream_t stream) {
    TensorPtr host(new_contiguous(dst.sizes, dst.dtype));
    copy_into(*host, src);
    const std::size_t n = std::size_t(dst.numel()) * dst.itemsize();
    if (dst.is_contiguous()) {
      check(cudaMemcpyAsync(dst.data(), host->data(), n, cudaMemcpyHostToDevice, stream), "copy_ (host to device)");
      check(cudaStreamSynchronize(stream), "copy_ (host to device)");  // `host` is freed on return
      return;
    }
    TensorPtr staged = empty_contiguous_like(dst, dst.dtype);
    check(cudaMemcpyAsync(staged->data(), host->data(), n, cudaMemcpyHostToDevice, stream), "copy_ (host to device)");
    launch_strided_copy(dst.data(), dst.strides.data(), staged->data(), staged->strides.data(), dst.sizes.data(),
                        int(dst.dim()), dst.itemsize(), stream);
    check(cudaStreamSynchronize(stream), "copy_ (host to device)");
  }

  static void device_to_host(Tensor& dst, const Tensor& src, cudaStream_t stream) {
    TensorPtr dense = contiguous(src);
    TensorPtr host(new_contiguous(src.sizes, src.dtype));
    check(cudaMemcpyAsync(host->data(), dense->data(), std::size_t(src.numel()) * src.itemsize(),
                          cudaMemcpyDeviceToHost, stream),
          "copy_ (device to host)");
    check(cudaStreamSynchronize(stream), "copy_ (device to host)");
    copy_into(dst, *host);
  }
};

CudaMemory g_memory;
const bool g_registered = register_device_memory(kCuda, &g_memory);

}  // namespace
}  // namespace mpspack::shim::cuda

// ---- guards ----------------------------------------------------------------------------------------------

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

struct CUDAGuardOpaque {
  int previous_device = 0;
};
struct CUDAStreamGuardOpaque {
  int previous_device = 0;
  cudaStream_t previous_stream = nullptr;
};

extern "C" {

AOTITorchError aoti_torch_create_cuda_guard(int32_t device_index, CUDAGuardHandle* ret_guard) {
  return guarded(__func__, [&] {
    if (ret_guard == nullptr) fail("ret_guard is null");
    auto g = std::make_unique<CUDAGuardOpaque>();
    check(cudaGetDevice(&g->previous_device), "cudaGetDevice");
    check(cudaSetDevice(device_index), "cudaSetDevice");
    *ret_guard = g.release();
  });
}

AOTITorchError aoti_torch_delete_cuda_guard(CUDAGuardHandle guard) {
  return guarded(__func__, [&] {
    if (guard == nullptr) fail("guard is null");
    std::unique_ptr<CUDAGuardOpaque> g(guard);
    check(cudaSetDevice(g->previous_device), "cudaSetDevice");
  });
}

AOTITorchError aoti_torch_cuda_guard_set_index(CUDAGuardHandle guard, int32_t device_index) {
  return guarded(__func__, [&] {
    if (guard == nullptr) fail("guard is null");
    check(cudaSetDevice(device_index), "cudaSetDevice");
  });
}

AOTITorchError aoti_torch_create_cuda_stream_guard(void* stream, int32_t device_index,
                                                   CUDAStreamGuardHandle* ret_guard) {
  return guarded(__func__, [&] {
    if (ret_guard == nullptr) fail("ret_guard is null");
    auto g = std::make_unique<CUDAStreamGuardOpaque>();
    check(cudaGetDevice(&g->previous_device), "cudaGetDevice");
    g->previous_stream = current_stream();
    check(cudaSetDevice(device_index), "cudaSetDevice");
    set_current_stream(static_cast<cudaStream_t>(stream));
    *ret_guard = g.release();
  });
}

AOTITorchError aoti_torch_delete_cuda_stream_guard(CUDAStreamGuardHandle guard) {
  return guarded(__func__, [&] {
    if (guard == nullptr) fail("guard is null");
    std::unique_ptr<CUDAStreamGuardOpaque> g(guard);
    set_current_stream(g->previous_stream);
    check(cudaSetDevice(g->previous_device), "cudaSetDevice");
  });
}

AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream) {
  return guarded(__func__, [&] {
    if (ret_stream == nullptr) fail("ret_stream is null");
    *ret_stream = current_stream();
  });
}

// Raw device memory for AOTInductor's constants (its RAII_gpuMalloc when built with the caching allocator): the
// tensors' pool, on the current device and stream. The pointer is all the caller keeps, so each block's device
// and stream are remembered here until its delete, which frees it on the stream it was made on, as torch's
// caching allocator does.
namespace {
struct RawBlock {
  int device;
  void* context;
};
std::mutex g_raw_mutex;
std::unordered_map<void*, RawBlock> g_raw_blocks;
}  // namespace

AOTITorchError aoti_torch_cuda_caching_allocator_raw_alloc(uint64_t nbytes, void** ret_ptr) {
  return guarded(__func__, [&] {
    if (ret_ptr == nullptr) fail("ret_ptr is null");
    *ret_ptr = nullptr;
    if (nbytes == 0) return;  // torch hands back null for no bytes
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    DeviceMemory* memory = device_memory(kCuda);
    if (memory == nullptr) fail("the CUDA device memory is not registered");
    RawBlock block{device, nullptr};
    void* p = memory->allocate(std::size_t(nbytes), device, &block.context);
    try {
      std::lock_guard lock(g_raw_mutex);
      g_raw_blocks.emplace(p, block);
    } catch (...) {
      memory->release(p, device, block.context);
      throw;
    }
    *ret_ptr = p;
  });
}

AOTITorchError aoti_torch_cuda_caching_allocator_raw_delete(void* ptr) {
  return guarded(__func__, [&] {
    if (ptr == nullptr) return;  // as torch's allocator, freeing null does nothing
    RawBlock block{};
    {
      std::lock_guard lock(g_raw_mutex);
      const auto it = g_raw_blocks.find(ptr);
      if (it == g_raw_blocks.end()) fail("invalid device pointer: " + std::to_string(reinterpret_cast<uintptr_t>(ptr)));
      block = it->second;
      g_raw_blocks.erase(it);
    }
    device_memory(kCuda)->release(ptr, block.device, block.context);
  });
}

}  // extern "C"
