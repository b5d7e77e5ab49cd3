// Benchmarking a container's model, as a library call: what `mpspack run --bench` measures, without printing.
//
//   bench(options)
//     cold       -> the container dropped from the page cache (options.cold)
//     open, library, inputs, load, run   -> verify()'s steps; the inputs come with the recorded example's
//                   outputs, which the first run is checked against at the dtypes' default tolerances
//     warm-up    -> options.warmup runs, or options.warmup_ms milliseconds of them
//     timed runs -> options.iterations, or options.duration_s seconds of them; the model alone on inputs already
//                   on the device, waiting for the device each time (include_transfers: copies in and out too)
//     device     -> a GPU's memory and plain host-to-device copies of the weights' size, measured now
//     report     -> BenchReport; the container's SHA-256 is computed last, after everything timed
#pragma once

#include "mpspack/result.hpp"
#include "mpspack/runtime/model.hpp"
#include "mpspack/runtime/verify.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mpspack::runtime {

struct BenchOptions {
  // container, library, inputs, device, load and tf32_convolutions; the rest of it is not used.
  VerifyOptions model;
  uint64_t warmup = 3;
  std::optional<double> warmup_ms;  // instead of `warmup` runs
  uint64_t iterations = 20;
  std::optional<double> duration_s;  // instead of `iterations` (at least one run)
  bool cold = false;
  bool include_transfers = false;
  bool cuda_graph = false;  // GPUs, without include_transfers: replay one captured run
};

// min mean p50 p90 p99 max stddev (population); percentiles by linear interpolation; zeros for no runs.
struct LatencyStats {
  double min = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, stddev = 0;
};
LatencyStats latency_stats(std::vector<double> ms);

struct MachineInfo {
  std::string cpu;  // /proc/cpuinfo's model name, else uname's machine
  unsigned cores = 1;
  std::string os;      // /etc/os-release PRETTY_NAME, else uname's sysname
  std::string kernel;  // "Linux 6.1.0-..."
  std::string arch;
  std::string blas_kernels;
};

// What posix_fadvise(DONTNEED) on the container did.
struct ColdCache {
  bool ok = false;                                // the call succeeded
  std::optional<double> resident_fraction_after;  // by mincore() of a fresh mapping; unknown when it failed
};

struct WeightsUpload {
  uint64_t bytes = 0;
  double ms = 0;
  double gbps = 0;
  double of_pinned_copy = 0;  // gbps / the pinned copy's
};

struct DeviceReport {
  DeviceFigures figures;
  uint64_t h2d_copy_bytes = 0;                 // the size of the plain copies measured
  std::optional<WeightsUpload> weights_upload;  // when mpspack uploaded the weights itself
};

struct BenchReport {
  std::string container;
  std::string library;
  std::string backend;  // cpu, cuda:N
  bool include_transfers = false;
  bool cuda_graph = false;
  bool cudnn_tf32 = true;  // whether float32 convolutions on a GPU may use TF32
  WeightsMode weights_mode = WeightsMode::None;
  LoadOptions load;
  bool cold = false;
  std::optional<ColdCache> cold_cache;  // with `cold`
  PhaseTimings timings;
  double time_to_first_result_ms = 0;  // from process start (ms_since_process_start())
  bool checked = false;                // there was a recorded example to check the first run against
  bool ok = true;                      // ... and the first run matched it
  uint64_t warmup_runs = 0;
  std::vector<double> times_ms;  // each timed run
  double total_ms = 0;
  LatencyStats latency;
  double throughput_per_s = 0;
  uint64_t peak_rss_bytes = 0;
  MachineInfo machine;
  std::optional<DeviceReport> device;  // GPUs only
  std::string container_sha256;
  std::string mpspack_version;
};

Result<BenchReport> bench(const BenchOptions& options);

// "FILE: the first run's outputs do not match the recorded example" when they did not, else ok.
Status verdict(const BenchReport& report);

// Milliseconds since this process started: from a clock read during static initialisation (before main), plus
// the time from exec to that read taken from /proc/self/stat starttime (10 ms ticks).
double ms_since_process_start();

}  // namespace mpspack::runtime
