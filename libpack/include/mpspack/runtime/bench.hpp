// Benchmarking a container's model, as a library call: what `mpspack run --bench` measures, without printing.
//
//   bench(options)
//     cold       -> the container dropped from the page cache (options.cold)
//     threads    -> the CPU team's size (options.threads), before anything starts a thread
//     open, library, inputs, load, run   -> verify()'s steps; the inputs come with the recorded example's
//                   outputs (or the --expect files), which the first run is checked against at the dtypes'
//                   default tolerances; generated inputs (model.seed) are checked only against --expect files
//     options.repetitions times:
//       warm-up    -> options.warmup runs, or options.warmup_ms milliseconds of them
//       timed runs -> options.iterations, or options.duration_s seconds of them; the model alone on inputs
//                     already on the device, waiting for the device each time (include_transfers: copies in and
//                     out too); their latency statistics are one repetition's
//     summary    -> each statistic's mean and standard deviation over the repetitions
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
  // container, library, inputs or seed, expects, device, load and tf32_convolutions; the rest is not used.
  VerifyOptions model;
  uint64_t warmup = 3;
  std::optional<double> warmup_ms;  // instead of `warmup` runs
  uint64_t iterations = 20;
  std::optional<double> duration_s;  // instead of `iterations` (at least one run)
  bool cold = false;
  bool include_transfers = false;
  bool cuda_graph = false;          // GPUs, without include_transfers: replay one captured run
  uint64_t repetitions = 1;         // the warm-up and the timed runs, this many times over (at least 1)
  std::vector<double> percentiles;  // latency percentiles besides p50, p90 and p99, each in (0, 100)
  // The CPU team's size: the process's CPU affinity narrowed to the first `threads` CPUs it may use (which sizes
  // the shim's own pool and OpenMP's default team), OMP_NUM_THREADS set to it for an OpenMP runtime not yet
  // started and omp_set_num_threads() for one that is, and OpenBLAS's own pool resized when the user gave it one.
  // Process-wide and kept after bench() returns. Unset: left as they are.
  std::optional<unsigned> threads;
};

// min mean p50 p90 p99 max stddev (population); percentiles by linear interpolation; zeros for no runs.
// `percentiles` holds the values of the extra percentiles asked for, in their order.
struct LatencyStats {
  double min = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, stddev = 0;
  std::vector<double> percentiles;
};
LatencyStats latency_stats(std::vector<double> ms, const std::vector<double>& extra_percentiles = {});

// Each statistic of several repetitions' LatencyStats (of the same percentiles): its mean, and its population
// standard deviation (zeros for one repetition).
struct LatencyOverRepetitions {
  LatencyStats mean;
  LatencyStats stddev;
};
LatencyOverRepetitions over_repetitions(const std::vector<LatencyStats>& repetitions);

// Where the CPU team's size came from: --threads (BenchOptions::threads), OMP_NUM_THREADS, or the CPUs this
// process may use.
struct CpuThreads {
  unsigned count = 1;
  std::string source;         // "option", "OMP_NUM_THREADS" or "cores"
  unsigned cpus_allowed = 1;  // the CPUs in this thread's affinity mask after that, read back
};

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
  uint64_t h2d_copy_bytes = 0;                  // the size of the plain copies measured
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
  // The loader's measurement switches in force (MPSPACK_EMBEDDED_WEIGHTS, MPSPACK_LARGE_BLOCKS,
  // MPSPACK_POPULATE_WEIGHTS: docs/CLI.md, "Environment"), so that a report says which way it measured.
  std::string embedded_weights = "mmap";
  std::string large_blocks = "prefault";
  bool populate_weights = false;
  bool cold = false;
  std::optional<ColdCache> cold_cache;  // with `cold`
  PhaseTimings timings;
  double time_to_first_result_ms = 0;  // from process start (ms_since_process_start())
  bool checked = false;                // there was a recorded example to check the first run against
  bool ok = true;                      // ... and the first run matched it
  std::string inputs;                  // where the inputs came from: "example", "files" (--input) or "seed" (generated)
  std::optional<uint64_t> seed;        // with generated inputs
  CpuThreads threads;
  uint64_t repetitions = 1;
  uint64_t warmup_runs = 0;                      // in all repetitions
  std::vector<double> times_ms;                  // each timed run, repetition after repetition
  std::vector<LatencyStats> repetition_latency;  // each repetition's
  double total_ms = 0;                           // the timed runs of all repetitions
  std::vector<double> percentiles;  // the extra percentiles asked for (latency.percentiles holds their values)
  LatencyStats latency;             // each statistic's mean over the repetitions
  LatencyStats latency_stddev;      // ... and its standard deviation over them (zeros for one repetition)
  double throughput_per_s = 0;
  uint64_t peak_rss_bytes = 0;
  MachineInfo machine;
  std::optional<DeviceReport> device;  // GPUs only
  std::string container_sha256;
  std::string mpspack_version;
};

Result<BenchReport> bench(const BenchOptions& options);

// "FILE: the first run's outputs do not match their reference ..." when they did not, else ok.
Status verdict(const BenchReport& report);

// Milliseconds since this process started: from a clock read during static initialisation (before main), plus
// the time from exec to that read taken from /proc/self/stat starttime (10 ms ticks).
double ms_since_process_start();

}  // namespace mpspack::runtime
