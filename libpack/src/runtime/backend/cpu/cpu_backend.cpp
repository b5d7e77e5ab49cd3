// The CPU backend: tensors are mpspack_shim tensors in host memory; external weights are used in place
// from the container's mapping.
#include "runtime/backend/backend.hpp"

#include "runtime/shim/onednn_plugin.hpp"
#include "runtime/shim/provided.hpp"
#include "runtime/tuning/tuning.hpp"

#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

namespace mpspack::runtime {
namespace {

using Kind = Error::Kind;

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels answer EINVAL and the run faults pages in
#endif

// MPSPACK_CPU_PREFAULT=lazy|threads (benchmarks; docs/PERFORMANCE.md has the measurement).
enum class Prefault { Lazy, Threads };
Prefault prefault_mode() { return tuning().cpu_prefault_threads ? Prefault::Threads : Prefault::Lazy; }

// Fills the page tables of the weights' mapping with MADV_POPULATE_READ, one contiguous slice per
// thread: the kernel maps page-cache pages (or reads them in, when cold) without a fault per page.
void prefault_weights(ByteView blob) {
  if (blob.size() == 0) return;
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = uint64_t(blob.data()) & ~(page - 1), end = uint64_t(blob.data()) + blob.size();
  const uint64_t slice_min = 64ull << 20;
  const unsigned threads =
      unsigned(std::clamp<uint64_t>((end - begin) / slice_min, 1, std::max(1u, std::thread::hardware_concurrency())));
  const uint64_t slice = ((end - begin) / threads + page - 1) & ~(page - 1);
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) {
    const uint64_t a = begin + i * slice, b = std::min(end, a + slice);
    if (a >= b) break;
    pool.emplace_back([a, b] {
      if (::madvise(reinterpret_cast<void*>(a), b - a, MADV_POPULATE_READ) != 0)
        spdlog::debug("MADV_POPULATE_READ: {}", std::strerror(errno));
    });
  }
  for (auto& t : pool) t.join();
}

class CpuBackend final : public Backend {
 public:
  std::string_view device() const override { return "cpu"; }
  std::string create_device() const override { return "cpu"; }

  int32_t shim_device_type() const override { return aoti_torch_device_type_cpu(); }

  Status copy_from_host(AtenTensorHandle dst, const HostTensor& t) override {
    if (t.data.empty()) return {};
    void* p = nullptr;
    if (aoti_torch_get_data_ptr(dst, &p) != AOTI_TORCH_SUCCESS) return shim_error("aoti_torch_get_data_ptr");
    std::memcpy(p, t.data.data(), t.data.size());
    return {};
  }

  Result<HostTensor> to_host(AtenTensorHandle t) override {
    int32_t device = -1;
    int64_t ndim = 0;
    int64_t *sizes = nullptr, *strides = nullptr;
    void* data = nullptr;
    HostTensor out;
    if (aoti_torch_get_device_type(t, &device) != 0 || aoti_torch_get_dtype(t, &out.dtype) != 0 ||
        aoti_torch_get_dim(t, &ndim) != 0 || aoti_torch_get_sizes(t, &sizes) != 0 ||
        aoti_torch_get_strides(t, &strides) != 0 || aoti_torch_get_data_ptr(t, &data) != 0)
      return shim_error("reading an output tensor");
    if (device != aoti_torch_device_type_cpu())
      return make_error(Kind::Runtime, "output tensor is on device type {}, not the CPU", device);
    const uint32_t es = dtype_size(out.dtype);
    if (es == 0) return make_error(Kind::Unsupported, "output tensor has dtype code {}, unknown to mpspack", out.dtype);
    out.shape.assign(sizes, sizes + ndim);
    gather_dense(static_cast<const uint8_t*>(data), sizes, strides, ndim, es, out.data);
    return out;
  }

  // Opening the oneDNN plugin (libdnnl: tens of milliseconds) overlaps the library's load instead of its first run.
  void expect_imports(const std::vector<std::string>& imports) override {
    if (std::any_of(imports.begin(), imports.end(), [](const std::string& f) { return shim::needs_onednn(f); }))
      plugin_opening_ = std::async(std::launch::async, [] { shim::onednn_plugin_open(); });
  }

  Result<StagedWeights> stage_weights(ByteView blob, int, uint64_t) override {
    // The CPU reads the mapping itself: nothing moves. Whether its page tables are filled now, by
    // several threads, or by the first run's page faults is chosen by measurement (prefault_weights).
    auto t0 = std::chrono::steady_clock::now();
    if (prefault_mode() == Prefault::Threads) prefault_weights(blob);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return StagedWeights{const_cast<uint8_t*>(blob.data()), nullptr, blob.size(), ms};
  }

 private:
  std::future<void> plugin_opening_;  // expect_imports()'s; its destructor waits for it
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace mpspack::runtime
