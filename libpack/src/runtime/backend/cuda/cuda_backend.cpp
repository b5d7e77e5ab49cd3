// The CUDA backend: tensors in device memory (the shim's cuda tensors), one non-blocking stream per model,
// and the external weights uploaded by mpspack itself (cuda_upload.hpp) into one device allocation. Built with the
// CUDA part of the shim into the plugin lib/mpspack/backend_cuda.so (backend/plugin.hpp), which `run` opens for CUDA
// libraries.
#include "runtime/backend/backend.hpp"
#include "runtime/backend/plugin.hpp"

#include "runtime/shim_cuda/cuda_common.hpp"
#include "cuda_upload.hpp"
#include "cuda_weight_copies.hpp"
#include "runtime/shim_cuda/cudnn_library.hpp"
#include "runtime/shim/provided.hpp"
#include "runtime/tuning/tuning.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace mpspack::runtime {
namespace {

using Kind = Error::Kind;
using Clock = std::chrono::steady_clock;

Error cuda_error(std::string_view what, cudaError_t e) {
  return make_error(Kind::Runtime, "{}: {}", what, cudaGetErrorString(e));
}

Error shim_error(std::string_view call) {
  std::string_view why = shim::last_error();
  return make_error(Kind::Runtime, "{} failed{}{}", call, why.empty() ? "" : ": ", why);
}

// The libraries the shim opens for a library's imports at its first call (cuBLAS for products, cuDNN for
// convolutions): tens to hundreds of milliseconds each, the largest part of a first run.
struct ImportLibraries {
  bool blas = false, cudnn = false;
  bool any() const { return blas || cudnn; }
};

ImportLibraries libraries_for(const std::vector<std::string>& imports) {
  ImportLibraries l;
  for (const std::string& name : imports) {
    l.blas |= name == "aoti_torch_cuda_addmm_out" || name == "aoti_torch_cuda_mm_out" ||
              name == "aoti_torch_cuda_bmm_out" || name == "aoti_torch_cuda_baddbmm_out";
    l.cudnn |= name == "aoti_torch_cuda_convolution";
  }
  // MPSPACK_OPEN_LIBRARIES_EARLY=0 leaves them to the first run, for measuring (docs/PERFORMANCE.md, "GPU").
  if (!tuning().open_libraries_early) return {};
  return l;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(int index, cudaStream_t stream) : index_(index), stream_(stream), uploads_(index) {
    previous_stream_ = shim::cuda::current_stream();
    // This thread's shim work outside Run (input copies, frees) goes to the model's stream too.
    shim::cuda::set_current_stream(stream_);
  }
  ~CudaBackend() override {
    cudaStreamSynchronize(stream_);
    if (graph_) cudaGraphExecDestroy(graph_);
    shim::cuda::set_current_stream(previous_stream_);
    cudaStreamDestroy(stream_);
  }

  std::string_view device() const override { return "cuda"; }
  std::string create_device() const override { return fmt::format("cuda:{}", index_); }
  void* stream() const override { return stream_; }

  int32_t shim_device_type() const override { return aoti_torch_device_type_cuda(); }
  int32_t device_index() const override { return index_; }

  Status copy_from_host(AtenTensorHandle dst, const HostTensor& t) override {
    if (t.data.empty()) return {};
    void* p = nullptr;
    if (aoti_torch_get_data_ptr(dst, &p) != AOTI_TORCH_SUCCESS) return shim_error("aoti_torch_get_data_ptr");
    if (auto e = cudaMemcpyAsync(p, t.data.data(), t.data.size(), cudaMemcpyHostToDevice, stream_); e != cudaSuccess)
      return cuda_error("copying an input to the GPU", e);
    if (auto e = cudaStreamSynchronize(stream_); e != cudaSuccess) return cuda_error("copying an input to the GPU", e);
    return {};
  }

  Result<HostTensor> to_host(AtenTensorHandle t) override {
    int32_t device = -1;
    int64_t ndim = 0, storage_offset = 0;
    int64_t *sizes = nullptr, *strides = nullptr;
    void* data = nullptr;
    HostTensor out;
    if (aoti_torch_get_device_type(t, &device) != 0 || aoti_torch_get_dtype(t, &out.dtype) != 0 ||
        aoti_torch_get_dim(t, &ndim) != 0 || aoti_torch_get_sizes(t, &sizes) != 0 ||
        aoti_torch_get_strides(t, &strides) != 0 || aoti_torch_get_data_ptr(t, &data) != 0 ||
        aoti_torch_get_storage_offset(t, &storage_offset) != 0)
      return shim_error("reading an output tensor");
    const uint32_t es = dtype_size(out.dtype);
    if (es == 0) return make_error(Kind::Unsupported, "output tensor has dtype code {}, unknown to mpspack", out.dtype);
    out.shape.assign(sizes, sizes + ndim);
    // The extent the strides reach, copied back in one piece, then gathered densely on the host.
    uint64_t extent = 1;
    for (int64_t d = 0; d < ndim; ++d) {
      if (sizes[d] == 0) extent = 0;
      if (extent && sizes[d] > 1) extent += uint64_t(sizes[d] - 1) * uint64_t(std::max<int64_t>(strides[d], 0));
    }
    std::vector<uint8_t> raw(extent * es);
    if (!raw.empty()) {
      const cudaMemcpyKind kind =
          device == aoti_torch_device_type_cuda() ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
      if (auto e = cudaMemcpyAsync(raw.data(), data, raw.size(), kind, stream_); e != cudaSuccess)
        return cuda_error("copying an output from the GPU", e);
    }
    if (auto e = cudaStreamSynchronize(stream_); e != cudaSuccess) return cuda_error("the model's GPU work", e);
    gather_dense(raw.data(), sizes, strides, ndim, es, out.data);
    return out;
  }

  // The upload's time (StagedWeights::ms) counts the copies alone, as in the other layouts, whose device memory
  // Create allocated: the device block's allocation is logged on its own.
  Result<StagedWeights> stage_weights(ByteView blob, int fd, uint64_t file_offset) override {
    const auto t_alloc = Clock::now();
    void* dev = nullptr;
    if (auto e = cudaMalloc(&dev, std::max<uint64_t>(blob.size(), 1)); e != cudaSuccess)
      return cuda_error(fmt::format("allocating {} bytes of GPU memory for the weights", blob.size()), e);
    std::shared_ptr<void> owner(dev, [](void* p) { cudaFree(p); });
    spdlog::info("weights' device block: {} bytes allocated in {:.1f} ms", blob.size(),
                 std::chrono::duration<double, std::milli>(Clock::now() - t_alloc).count());
    open_import_libraries();
    const auto t0 = Clock::now();
    const cuda_copies::Piece whole{static_cast<uint8_t*>(dev), 0, blob.size()};
    MPK_CHECK(uploads_.upload({&whole, 1}, blob.data(), fd, file_offset));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return StagedWeights{static_cast<uint8_t*>(dev), std::move(owner), blob.size(), ms};
  }

  std::vector<ImportRoute> weight_copy_routes() const override { return cuda_copies::routes(); }

  // Which libraries the imports need is known before the library loads; they are opened when the upload starts.
  void expect_imports(const std::vector<std::string>& imports) override { libraries_ = libraries_for(imports); }

  // The upload's readers start now, while the library loads: each pins its staging (milliseconds for twelve
  // readers: docs/PERFORMANCE.md, "CUDA weight upload") and reads its first two chunks of the
  // segment into it; with libraries to open before the upload they have longer, and up to 64 MiB they read all of
  // it.
  void expect_upload(uint64_t bytes, int fd, uint64_t file_offset) override {
    uploads_.expect(bytes, fd, file_offset, libraries_.any() ? cuda_upload::Window::Long : cuda_upload::Window::Short);
  }

  void defer_weight_copies(const void* mirror, uint64_t size, int fd, uint64_t file_offset) override {
    deferred_ = {static_cast<const uint8_t*>(mirror), fd, file_offset};
    cuda_copies::begin(mirror, size);
  }

  Result<StagedWeights> finish_weight_copies() override {
    const cuda_copies::Gathered gathered = cuda_copies::end();
    if (gathered.failed) return make_error(Kind::Runtime, "copying the weights to the GPU failed");
    StagedWeights moved;
    for (const cuda_copies::Piece& p : gathered.pieces) moved.bytes += p.len;
    if (moved.bytes == 0) return moved;
    open_import_libraries();
    const auto t0 = Clock::now();
    MPK_CHECK(uploads_.upload(gathered.pieces, deferred_.mirror, deferred_.fd, deferred_.file_offset));
    moved.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return moved;
  }

  // Relaxed capture: AOTInductor's Run waits on its previous run's event (host-side) before it queues work.
  // The graph frees its own allocations, so replaying it needs nothing from outside.
  Status capture(const std::function<Status()>& body) override {
    if (graph_) cudaGraphExecDestroy(graph_), graph_ = nullptr;
    if (auto e = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed); e != cudaSuccess)
      return cuda_error("cudaStreamBeginCapture", e);
    Status s = body();
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
    if (!s.ok()) {
      if (graph) cudaGraphDestroy(graph);
      return s;
    }
    if (end != cudaSuccess) return cuda_error("capturing the model's run in a CUDA graph", end);
    const cudaError_t inst = cudaGraphInstantiateWithFlags(&graph_, graph, 0);
    cudaGraphDestroy(graph);
    if (inst != cudaSuccess) {
      graph_ = nullptr;
      return cuda_error("cudaGraphInstantiate", inst);
    }
    return {};
  }

  Status replay() override {
    if (!graph_) return make_error(Kind::Invalid, "replay() before capture()");
    if (auto e = cudaGraphLaunch(graph_, stream_); e != cudaSuccess) return cuda_error("cudaGraphLaunch", e);
    return synchronize();
  }

  Status synchronize() override {
    if (auto e = cudaStreamSynchronize(stream_); e != cudaSuccess) return cuda_error("the model's GPU work", e);
    return {};
  }

  Result<DeviceFigures> figures(uint64_t copy_bytes) override {
    DeviceFigures f;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, index_) == cudaSuccess) f.name = prop.name;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
      f.memory_total = total_b;
      f.memory_used = total_b - free_b;
    }
    cudaMemPool_t pool;
    uint64_t high = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, index_) == cudaSuccess &&
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high) == cudaSuccess)
      f.pool_peak = high;
    if (copy_bytes == 0) return f;
    MPK_TRY(f.h2d_pinned_gbps, copy_bandwidth(copy_bytes, true));
    MPK_TRY(f.h2d_pageable_gbps, copy_bandwidth(copy_bytes, false));
    return f;
  }

 private:
  int index_;
  cudaStream_t stream_;
  cudaStream_t previous_stream_ = nullptr;
  cudaGraphExec_t graph_ = nullptr;
  struct {
    const uint8_t* mirror = nullptr;
    int fd = -1;
    uint64_t file_offset = 0;
  } deferred_;  // the open window of defer_weight_copies()

  cuda_upload::Pipeline uploads_;
  ImportLibraries libraries_;  // still to open

  // The libraries the imports need, opened on this thread before the upload rather than by the first run: the
  // upload's readers go on pinning and reading ahead meanwhile (the dynamic loader's lock rules out opening them on
  // another thread while the library loads). A library that does not open is left to the first run, which reports it.
  void open_import_libraries() {
    if (!libraries_.any()) return;
    const auto t0 = Clock::now();
    const std::string names = libraries_.blas && libraries_.cudnn ? "cuBLAS and cuDNN"
                              : libraries_.blas                   ? "cuBLAS"
                                                                  : "cuDNN";
    std::string why;
    try {
      if (libraries_.blas) shim::cuda::open_blas(index_);
      if (libraries_.cudnn) shim::cuda::open_cudnn(index_);
    } catch (const std::exception& e) { why = e.what(); }
    if (why.empty())
      spdlog::info("{} opened before the weight upload in {:.1f} ms", names,
                   std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    else spdlog::info("{} not opened before the weight upload (left to the first run): {}", names, why);
    libraries_ = {};
  }

  // One host-to-device copy of `bytes` from pinned or pageable (pre-touched) memory, timed by events.
  Result<double> copy_bandwidth(uint64_t bytes, bool pinned) {
    void* host = nullptr;
    void* dev = nullptr;
    std::vector<uint8_t> pageable;
    if (pinned) {
      if (auto e = cudaHostAlloc(&host, bytes, cudaHostAllocDefault); e != cudaSuccess)
        return cuda_error("pinned buffer for the bandwidth check", e);
    } else {
      pageable.assign(bytes, 1);
      host = pageable.data();
    }
    std::shared_ptr<void> host_owner(pinned ? host : nullptr, [](void* p) {
      if (p) cudaFreeHost(p);
    });
    std::memset(host, 1, bytes);
    if (auto e = cudaMalloc(&dev, bytes); e != cudaSuccess)
      return cuda_error("device buffer for the bandwidth check", e);
    std::shared_ptr<void> dev_owner(dev, [](void* p) { cudaFree(p); });
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream_);  // warm-up (and first-touch costs)
    cudaEventRecord(a, stream_);
    cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream_);
    cudaEventRecord(b, stream_);
    const cudaError_t e = cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (e != cudaSuccess) return cuda_error("bandwidth check", e);
    return double(bytes) / (double(ms) * 1e6);
  }
};

// Why no CUDA device can be used, and what to do, from cudaGetDeviceCount's error: CUDA's own text ("CUDA driver
// version is insufficient for CUDA runtime version") is also what a machine with no driver at all gets.
Error no_device_error(cudaError_t e) {
  int driver = 0;  // the CUDA version the installed driver supports; 0 when there is no driver
  const bool has_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0;
  int runtime = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  const auto cuda_version = [](int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); };
  if (e == cudaErrorInsufficientDriver && !has_driver)
    return make_error(Kind::Runtime,
                      "no usable CUDA device here: no NVIDIA driver was found ({}): run it on a machine with an "
                      "NVIDIA GPU and its driver; a CPU export of the model runs here",
                      cudaGetErrorString(e));
  if (e == cudaErrorInsufficientDriver)
    return make_error(Kind::Runtime,
                      "no usable CUDA device here: the NVIDIA driver supports CUDA {}, this mpspack's CUDA runtime "
                      "needs {}: update the NVIDIA driver",
                      cuda_version(driver), cuda_version(runtime));
  if (e == cudaErrorNoDevice)
    return make_error(Kind::Runtime,
                      "no usable CUDA device here: no NVIDIA GPU was found ({}): run it on a machine with an "
                      "NVIDIA GPU, or check that CUDA_VISIBLE_DEVICES names one",
                      cudaGetErrorString(e));
  return make_error(Kind::Runtime, "no usable CUDA device here: {}", cudaGetErrorString(e));
}

Result<std::unique_ptr<Backend>> make_cuda_backend(int32_t index) {
  int count = 0;
  if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess) return no_device_error(e);
  if (count == 0) return no_device_error(cudaErrorNoDevice);
  if (index < 0 || index >= count)
    return make_error(Kind::Invalid,
                      "cuda:{} does not exist: this machine has {} CUDA device{} ({}): choose one "
                      "with --device cuda:N",
                      index, count, count == 1 ? "" : "s",
                      count == 1 ? std::string("cuda:0") : fmt::format("cuda:0 to cuda:{}", count - 1));
  if (auto e = cudaSetDevice(index); e != cudaSuccess) return cuda_error(fmt::format("cudaSetDevice({})", index), e);
  cudaStream_t stream = nullptr;
  if (auto e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess)
    return cuda_error("creating a CUDA stream", e);
  return std::unique_ptr<Backend>(std::make_unique<CudaBackend>(index, stream));
}

}  // namespace
}  // namespace mpspack::runtime

MPSPACK_BACKEND_PLUGIN_ENTRY(int32_t index, mpspack::Result<std::unique_ptr<mpspack::runtime::Backend>>* out) {
  *out = mpspack::runtime::make_cuda_backend(index);
}
