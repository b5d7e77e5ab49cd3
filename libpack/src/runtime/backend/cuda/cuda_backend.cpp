// The CUDA backend: tensors in device memory (the shim's cuda tensors), one non-blocking stream per model,
// and the external weights uploaded by mpspack itself into one device allocation. Built with the CUDA part of
// the shim into the plugin lib/mpspack/backend_cuda.so (backend/plugin.hpp), which `run` opens for CUDA libraries.
//
// The upload is a pipeline: several threads each read 2 MiB chunks of the container with pread() into their
// own pair of pinned buffers and queue the copy to the device on their own stream, reading the next chunk
// while the previous one is in flight. Reading with pread() avoids the page faults of touching the mapping
// (the slow part of AOTInductor's own path, docs/PERFORMANCE.md); pinned buffers let the copies run at the
// bus's speed; several readers keep up with it; small huge-page buffers keep the cost of pinning low.
#include "backend.hpp"
#include "plugin.hpp"
#include "mpspack/fd_io.hpp"

#include "cuda_common.hpp"
#include "cuda_weight_copies.hpp"
#include "provided.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <span>
#include <thread>

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

// Pipeline shape: 2 MiB chunks, 12 reader threads (at most one per core), pinned huge-page staging. Measured
// with bench/gpu_compare.sh and the MPSPACK_UPLOAD_* overrides (docs/PERFORMANCE.md); the overrides exist for
// such measurements.
uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return (end && *end == 0 && n > 0) ? n : fallback;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(int index, cudaStream_t stream) : index_(index), stream_(stream) {
    previous_stream_ = shim::cuda::current_stream();
    // This thread's shim work outside Run (input copies, frees) goes to the model's stream too.
    shim::cuda::set_current_stream(stream_);
  }
  ~CudaBackend() override {
    cudaStreamSynchronize(stream_);
    if (graph_) cudaGraphExecDestroy(graph_);
    readers_.clear();
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
      const cudaMemcpyKind kind = device == aoti_torch_device_type_cuda() ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
      if (auto e = cudaMemcpyAsync(raw.data(), data, raw.size(), kind, stream_); e != cudaSuccess)
        return cuda_error("copying an output from the GPU", e);
    }
    if (auto e = cudaStreamSynchronize(stream_); e != cudaSuccess) return cuda_error("the model's GPU work", e);
    gather_dense(raw.data(), sizes, strides, ndim, es, out.data);
    return out;
  }

  Result<StagedWeights> stage_weights(ByteView blob, int fd, uint64_t file_offset) override {
    const auto t0 = Clock::now();
    void* dev = nullptr;
    if (auto e = cudaMalloc(&dev, std::max<uint64_t>(blob.size(), 1)); e != cudaSuccess)
      return cuda_error(fmt::format("allocating {} bytes of GPU memory for the weights", blob.size()), e);
    std::shared_ptr<void> owner(dev, [](void* p) { cudaFree(p); });
    spdlog::info("weights' device block: {} bytes allocated in {:.1f} ms", blob.size(),
                 std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    const cuda_copies::Piece whole{static_cast<uint8_t*>(dev), 0, blob.size()};
    MPK_CHECK(upload({&whole, 1}, blob.data(), fd, file_offset));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return StagedWeights{static_cast<uint8_t*>(dev), std::move(owner), blob.size(), ms};
  }

  std::vector<ImportRoute> weight_copy_routes() const override { return cuda_copies::routes(); }

  // Pins the upload's staging buffers and makes the readers' streams, one thread per reader, while the library
  // loads: pinning is most of the upload's fixed cost (about 6.5 ms for twelve readers on the H200 host, the
  // driver taking the registrations one after another). Each reader of upload() waits for its own buffers only,
  // so the pipeline starts with the readers pinned first; a buffer that failed to pin is pinned again, or the
  // failure reported, by its reader.
  void expect_upload(uint64_t bytes) override {
    const UploadShape shape = upload_shape(bytes);
    const char* early = std::getenv("MPSPACK_UPLOAD_PIN_EARLY");  // "0": pinned by the readers (for measuring)
    if (shape.register_pages || (early && std::string_view(early) == "0")) return;
    while (readers_.size() < shape.workers) readers_.push_back(std::make_unique<Reader>());
    for (unsigned w = 0; w < shape.workers; ++w) {
      Reader& reader = *readers_[w];
      if (reader.pinning.valid() || reader.size >= 2 * shape.chunk) continue;
      reader.pinning = std::async(std::launch::async, [this, &reader, shape] {
        cudaSetDevice(index_);
        (void)reader.queue_ready();
        (void)reader.reserve(2 * shape.chunk, shape.huge_pages);
      });
    }
  }

  void defer_weight_copies(const void* mirror, uint64_t size, int fd, uint64_t file_offset) override {
    deferred_ = {static_cast<const uint8_t*>(mirror), fd, file_offset};
    cuda_copies::begin(mirror, size);
  }

  Result<StagedWeights> finish_weight_copies() override {
    const auto t0 = Clock::now();
    const cuda_copies::Gathered gathered = cuda_copies::end();
    if (gathered.failed) return make_error(Kind::Runtime, "copying the weights to the GPU failed");
    StagedWeights moved;
    for (const cuda_copies::Piece& p : gathered.pieces) moved.bytes += p.len;
    if (moved.bytes == 0) return moved;
    MPK_CHECK(upload(gathered.pieces, deferred_.mirror, deferred_.fd, deferred_.file_offset));
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

  // How an upload of `bytes` runs: chunk size, reader threads, staging kind. MPSPACK_UPLOAD_MODE (measured against
  // each other in docs/PERFORMANCE.md): "pread-thp" (default) reads into anonymous memory on transparent huge pages
  // pinned with cudaHostRegister (pinning costs per page, so huge pages pin fastest); "pread" into buffers from
  // cudaHostAlloc; "register" pins the container's own pages chunk by chunk instead of reading them (slowest:
  // 1.5 GB/s on the H200 host).
  struct UploadShape {
    uint64_t chunk = 0;
    unsigned workers = 0;
    std::string mode;
    bool register_pages = false, huge_pages = false;
  };
  static UploadShape upload_shape(uint64_t bytes) {
    UploadShape u;
    u.chunk = env_or("MPSPACK_UPLOAD_CHUNK_MIB", 2) << 20;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    u.workers = unsigned(std::min<uint64_t>({(bytes + u.chunk - 1) / u.chunk, env_or("MPSPACK_UPLOAD_THREADS", 12), hw}));
    const char* mode = std::getenv("MPSPACK_UPLOAD_MODE");
    u.mode = mode && *mode ? mode : "pread-thp";
    u.register_pages = u.mode == "register";
    u.huge_pages = u.mode == "pread-thp";
    return u;
  }

  // One reader's pinned host buffers, its stream and its two buffers' events, kept for the backend's lifetime:
  // pinning is the costly part, and making streams and events at each upload was part of its fixed cost.
  struct Reader {
    void* raw = nullptr;  // the mapping (huge-page aligned inside) or the cudaHostAlloc block
    uint64_t raw_len = 0;
    uint8_t* base = nullptr;
    uint64_t size = 0;
    bool mapped = false;
    cudaStream_t stream = nullptr;
    cudaEvent_t done[2] = {nullptr, nullptr};
    std::future<void> pinning;  // expect_upload()'s pinning of these buffers, making of this stream
    // The stream and events, made once (on the calling thread's current device).
    bool queue_ready() {
      if (!stream && cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) stream = nullptr;
      for (cudaEvent_t& e : done)
        if (!e && cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) e = nullptr;
      return stream && done[0] && done[1];
    }
    Status reserve(uint64_t bytes, bool huge_pages) {
      if (size >= bytes) return {};
      release();
      if (huge_pages) {
        constexpr uint64_t huge = 2ull << 20;
        raw_len = bytes + huge;
        raw = ::mmap(nullptr, raw_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) {
          raw = nullptr;
          return make_error(Kind::Io, "staging memory for the weight upload: {}", std::strerror(errno));
        }
        mapped = true;
        base = reinterpret_cast<uint8_t*>((uint64_t(raw) + huge - 1) / huge * huge);
        ::madvise(base, bytes, MADV_HUGEPAGE);
        std::memset(base, 0, bytes);  // fault the (huge) pages in before pinning them
        if (auto e = cudaHostRegister(base, bytes, cudaHostRegisterDefault); e != cudaSuccess) {
          release();
          return cuda_error("pinning the staging buffers of the weight upload", e);
        }
      } else {
        if (auto e = cudaHostAlloc(&raw, bytes, cudaHostAllocDefault); e != cudaSuccess) {
          raw = nullptr;
          return cuda_error("pinned staging buffers for the weight upload", e);
        }
        base = static_cast<uint8_t*>(raw);
      }
      size = bytes;
      return {};
    }
    void release() {
      if (raw && mapped) {
        if (size) cudaHostUnregister(base);
        ::munmap(raw, raw_len);
      } else if (raw) {
        cudaFreeHost(raw);
      }
      raw = nullptr, base = nullptr, size = 0, mapped = false;
    }
    ~Reader() {
      if (pinning.valid()) pinning.wait();
      release();
      for (cudaEvent_t e : done)
        if (e) cudaEventDestroy(e);
      if (stream) cudaStreamDestroy(stream);
    }
  };
  std::vector<std::unique_ptr<Reader>> readers_;

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
    std::shared_ptr<void> host_owner(pinned ? host : nullptr, [](void* p) { if (p) cudaFreeHost(p); });
    std::memset(host, 1, bytes);
    if (auto e = cudaMalloc(&dev, bytes); e != cudaSuccess) return cuda_error("device buffer for the bandwidth check", e);
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

  // Per reader thread: what it spent its time on (for the info line that explains the upload's speed).
  struct LaneTimes {
    double early_pin_wait_ms = 0, read_ms = 0, wait_ms = 0, pin_ms = 0;
  };

  // Copies each piece [src, src + len) of the weights, which `host` holds and file `fd` holds at `file_offset`
  // (read with pread when fd >= 0), to its device address.
  // Long: one pipeline; its reader lanes share the jobs, the stop flag, the first failure and the timings.
  Status upload(std::span<const cuda_copies::Piece> pieces, const uint8_t* host, int fd, uint64_t file_offset) {
    using Clock = std::chrono::steady_clock;
    auto ms_since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
    uint64_t total = 0;
    for (const cuda_copies::Piece& p : pieces) total += p.len;
    const UploadShape shape = upload_shape(total);
    const uint64_t chunk = shape.chunk;
    std::vector<cuda_copies::Piece> jobs;  // the pieces cut to the staging buffers' size
    for (const cuda_copies::Piece& p : pieces)
      for (uint64_t at = 0; at < p.len; at += chunk) jobs.push_back({p.dst + at, p.src + at, std::min(chunk, p.len - at)});
    if (total == 0) return {};
    const uint64_t chunks = jobs.size();
    const unsigned workers = unsigned(std::min<uint64_t>(chunks, shape.workers));
    const std::string_view mode = shape.mode;
    const bool register_pages = shape.register_pages;
    while (readers_.size() < workers) readers_.push_back(std::make_unique<Reader>());
    std::mutex mutex;
    std::string failure;
    auto fail = [&](std::string why) {
      std::lock_guard lock(mutex);
      if (failure.empty()) failure = std::move(why);
    };
    std::atomic<bool> stop{false};
    // Readers take the next chunk as they become free, not every workers-th one: a reader that the host schedules
    // late then holds up one chunk, not the tail of the upload.
    std::atomic<uint64_t> next_chunk{0};
    std::vector<LaneTimes> times(workers);
    auto lane = [&](unsigned w) {
      LaneTimes& tm = times[w];
      cudaSetDevice(index_);
      Reader& reader = *readers_[w];
      if (reader.pinning.valid()) {
        const auto t_early = Clock::now();
        reader.pinning.get();
        tm.early_pin_wait_ms = ms_since(t_early);
      }
      void* pinned[2] = {nullptr, nullptr};  // register mode: the range pinned for each buffer slot
      bool ok = reader.queue_ready();
      if (!ok) fail("could not create the streams and events of the weight upload");
      cudaStream_t s = reader.stream;
      cudaEvent_t* done = reader.done;
      // Each reader pins its own two buffers (unless expect_upload() had them pinned), in parallel with the others;
      // they stay for later uploads.
      auto t_pin = Clock::now();
      if (ok && !register_pages) {
        Status st = reader.reserve(2 * chunk, shape.huge_pages);
        if (!st.ok()) {
          fail(st.error().message);
          ok = false;
        }
      }
      tm.pin_ms += ms_since(t_pin);
      for (uint64_t c = next_chunk++, i = 0; ok && !stop && c < chunks; c = next_chunk++, ++i) {
        const int k = int(i % 2);
        const uint64_t off = jobs[c].src, len = jobs[c].len;
        // The slot's previous copy must have left it before it is refilled.
        auto t = Clock::now();
        if (cudaEventSynchronize(done[k]) != cudaSuccess) {
          fail("the weight upload to the GPU failed");
          break;
        }
        tm.wait_ms += ms_since(t);
        const uint8_t* src = nullptr;
        if (register_pages) {
          t = Clock::now();
          if (pinned[k]) cudaHostUnregister(pinned[k]);
          pinned[k] = const_cast<uint8_t*>(host + off);
          if (cudaHostRegister(pinned[k], len, cudaHostRegisterReadOnly) != cudaSuccess) {
            pinned[k] = nullptr;
            fail("cudaHostRegister of the container's weights failed");
            break;
          }
          tm.pin_ms += ms_since(t);
          src = host + off;
        } else {
          uint8_t* dst = reader.base + uint64_t(k) * chunk;
          t = Clock::now();
          if (fd >= 0) {
            uint64_t got = 0;
            const bool read = pread_exact(fd, dst, len, file_offset + off, got);
            if (!read || got != len) {
              fail(fmt::format("reading the weights segment: {}", !read ? std::strerror(errno) : "unexpected end"));
              ok = false;
            }
          } else {
            std::memcpy(dst, host + off, len);
          }
          tm.read_ms += ms_since(t);
          src = dst;
        }
        if (!ok) break;
        if (cudaMemcpyAsync(jobs[c].dst, src, len, cudaMemcpyHostToDevice, s) != cudaSuccess ||
            cudaEventRecord(done[k], s) != cudaSuccess) {
          fail("queueing the weight upload to the GPU failed");
          break;
        }
      }
      if (!ok) stop = true;
      auto t = Clock::now();
      if (s && cudaStreamSynchronize(s) != cudaSuccess) fail("the weight upload to the GPU failed");
      tm.wait_ms += ms_since(t);
      for (void* range : pinned)
        if (range) cudaHostUnregister(range);
    };
    const auto t_pipe = Clock::now();
    std::vector<std::thread> threads;
    for (unsigned w = 1; w < workers; ++w) threads.emplace_back(lane, w);
    lane(0);
    for (auto& t : threads) t.join();
    const double pipe_ms = ms_since(t_pipe);
    LaneTimes sum;
    for (const auto& t : times)
      sum.early_pin_wait_ms += t.early_pin_wait_ms, sum.read_ms += t.read_ms, sum.wait_ms += t.wait_ms,
          sum.pin_ms += t.pin_ms;
    spdlog::info("weight upload: {} bytes, {} threads x 2 x {} MiB ({}): pipeline {:.1f} ms (per thread: waiting "
                 "for its early pinning {:.1f} ms, pin {:.1f} ms, read {:.1f} ms, waiting for copies {:.1f} ms)",
                 total, workers, chunk >> 20, mode, pipe_ms, sum.early_pin_wait_ms / workers, sum.pin_ms / workers,
                 sum.read_ms / workers, sum.wait_ms / workers);
    if (!failure.empty()) return make_error(Kind::Io, "{}", failure);
    return {};
  }
};

Result<std::unique_ptr<Backend>> make_cuda_backend(int32_t index) {
  int count = 0;
  if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return make_error(Kind::Runtime, "no usable CUDA device here: {}", cudaGetErrorString(e));
  if (index < 0 || index >= count)
    return make_error(Kind::Invalid, "cuda:{} does not exist: this machine has {} CUDA device{}", index, count,
                      count == 1 ? "" : "s");
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
