// bench(): verify()'s first steps, then warm-up, timed runs and the measurements around them (bench.hpp).
#include "mpspack/runtime/bench.hpp"

#include "runtime/shim/call_profile.hpp"
#include "measurements.hpp"
#include "mpspack/version.hpp"
#include "steps.hpp"
#include "threads.hpp"
#include "runtime/tuning/tuning.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace mpspack::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using pipeline::Context;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The first run against the recorded example, at the dtypes' default tolerances.
void check_first_run(Context& ctx, BenchReport& r) {
  r.checked = !ctx.expected.empty();
  if (!r.checked) return;
  r.ok = ctx.expected.size() == ctx.outputs.size();
  if (!r.ok) return;
  pipeline::compare_outputs(ctx, std::nullopt, std::nullopt);
  r.ok = std::all_of(ctx.outputs.begin(), ctx.outputs.end(),
                     [](const OutputCheck& o) { return o.reference->comparison.match; });
}

// One timed run: the model alone on the prepared inputs, or (include_transfers) a full run.
Status run_once(Context& ctx, const BenchOptions& o) {
  if (!o.include_transfers) {
    if (auto s = ctx.model->run_prepared(o.cuda_graph); !s.ok()) return s.error().context(o.model.container);
    return {};
  }
  auto r = ctx.model->run(ctx.inputs);
  if (!r.ok()) return r.error().context(o.model.container);
  return {};
}

// The inputs on the device once, unless each run copies them itself.
Status prepare_runs(Context& ctx, const BenchOptions& o) {
  if (!o.include_transfers) {
    if (auto s = ctx.model->prepare_inputs(ctx.inputs); !s.ok()) return s.error().context(o.model.container);
  }
  if (o.cuda_graph && (o.include_transfers || ctx.model->device() == "cpu"))
    return make_error(Error::Kind::Invalid, "{}: --cuda-graph needs a CUDA library and no --include-transfers",
                      o.model.container);
  return {};
}

Status warm_up(Context& ctx, const BenchOptions& o, BenchReport& r) {
  const shim::call_profile::Paused not_profiled;  // MPSPACK_PROFILE_SHIM's table holds the timed runs only
  const auto t0 = Clock::now();
  for (uint64_t runs = 0; o.warmup_ms ? ms_since(t0) < *o.warmup_ms : runs < o.warmup; ++runs) {
    MPK_CHECK(run_once(ctx, o));
    ++r.warmup_runs;
  }
  return {};
}

// One repetition's timed runs: their times appended to the report's, their statistics one repetition's.
Status time_runs(Context& ctx, const BenchOptions& o, BenchReport& r) {
  std::vector<double> times;
  const auto start = Clock::now();
  while (o.duration_s ? (times.empty() || ms_since(start) < *o.duration_s * 1e3) : times.size() < o.iterations) {
    const auto t0 = Clock::now();
    MPK_CHECK(run_once(ctx, o));
    times.push_back(ms_since(t0));
  }
  r.total_ms += ms_since(start);
  r.repetition_latency.push_back(latency_stats(times, o.percentiles));
  r.times_ms.insert(r.times_ms.end(), times.begin(), times.end());
  return {};
}

// Warm-up and timed runs, options.repetitions times; each statistic summarised over the repetitions.
Status repeat_timed_runs(Context& ctx, const BenchOptions& o, BenchReport& r) {
  shim::call_profile::start_over();
  for (uint64_t i = 0; i < o.repetitions; ++i) {
    MPK_CHECK(warm_up(ctx, o, r));
    MPK_CHECK(time_runs(ctx, o, r));
  }
  const LatencyOverRepetitions summary = over_repetitions(r.repetition_latency);
  r.repetitions = o.repetitions;
  r.percentiles = o.percentiles;
  r.latency = summary.mean;
  r.latency_stddev = summary.stddev;
  r.throughput_per_s = r.total_ms > 0 ? double(r.times_ms.size()) * 1e3 / r.total_ms : 0.0;
  return {};
}

// The options a library caller could get wrong that the command line also checks.
Status check_options(const BenchOptions& o) {
  if (o.repetitions == 0) return make_error(Error::Kind::Invalid, "--repetitions 0: at least one repetition");
  for (double p : o.percentiles) {
    if (!(p > 0 && p < 100))
      return make_error(Error::Kind::Invalid, "--percentile {}: expected a number between 0 and 100 (both excluded)",
                        p);
  }
  return {};
}

// A GPU's memory and, to compare the weight upload with, plain host-to-device copies of the same size (at least
// 64 MiB, at most 1 GiB) measured now, in the same run.
Status measure_device(Context& ctx, BenchReport& r) {
  if (ctx.model->device() == "cpu") return {};
  const PhaseTimings& tm = ctx.model->timings();
  DeviceReport d;
  d.h2d_copy_bytes = std::clamp<uint64_t>(tm.upload_bytes, 64ull << 20, 1ull << 30);
  auto f = ctx.model->device_figures(d.h2d_copy_bytes);
  if (!f.ok()) return f.error().context(ctx.options.container);
  d.figures = std::move(f).value();
  if (tm.upload_bytes > 0) {
    const double gbps = tm.upload_ms > 0 ? double(tm.upload_bytes) / (tm.upload_ms * 1e6) : 0.0;
    const double pinned = d.figures.h2d_pinned_gbps;
    d.weights_upload = WeightsUpload{tm.upload_bytes, tm.upload_ms, gbps, pinned > 0 ? gbps / pinned : 0.0};
  }
  r.device = std::move(d);
  return {};
}

// What the report says of the options and the model, besides the measurements.
void describe(const Context& ctx, const BenchOptions& o, BenchReport& r) {
  r.container = o.model.container;
  r.library = ctx.library_name;
  r.inputs = pipeline::inputs_source(o.model);
  r.seed = o.model.seed;
  r.backend = ctx.model->device();
  r.include_transfers = o.include_transfers;
  r.cuda_graph = o.cuda_graph;
  r.cudnn_tf32 = tf32_convolutions();
  r.weights_mode = ctx.model->weights_mode();
  r.load = o.model.load;
  r.embedded_weights = to_string(tuning().embedded_weights);
  r.large_blocks = tuning().large_blocks ? "prefault" : "libc";
  r.populate_weights = tuning().populate_weights != PopulateWeights::Off;
  r.cold = o.cold;
  r.timings = ctx.model->timings();
  r.mpspack_version = version_string();
}

}  // namespace

Result<BenchReport> bench(const BenchOptions& o) {
  using namespace pipeline;
  BenchReport r;
  MPK_CHECK(check_options(o));
  MPK_TRY(r.threads, use_cpu_threads(o.threads));  // before the model's loader or runs start any thread
  if (o.cold) r.cold_cache = drop_from_page_cache(o.model.container);
  Context ctx(o.model);
  MPK_CHECK(open_container(ctx));
  MPK_CHECK(pick_library(ctx));
  // The user's data: not timed as load. The example's outputs are the references unless --expect names others.
  MPK_CHECK(gather_inputs(ctx, o.model.expects.empty()));
  MPK_CHECK(check_expect_files(ctx));
  MPK_CHECK(load_model(ctx));
  MPK_CHECK(run_model(ctx));
  r.time_to_first_result_ms = ms_since_process_start();
  MPK_CHECK(read_references(ctx));
  check_first_run(ctx, r);
  MPK_CHECK(prepare_runs(ctx, o));
  MPK_CHECK(repeat_timed_runs(ctx, o, r));
  r.peak_rss_bytes = peak_rss_bytes();
  MPK_CHECK(measure_device(ctx, r));
  // Hashing reads the whole container: after everything timed.
  MPK_TRY(r.container_sha256, format::file_sha256(*ctx.container));
  r.machine = machine_info();
  describe(ctx, o, r);
  return r;
}

Status verdict(const BenchReport& r) {
  if (r.ok) return {};
  return make_error(Error::Kind::Invalid,
                    "{}: the first run's outputs do not match their reference (the --expect files, else the "
                    "recorded example)",
                    r.container);
}

}  // namespace mpspack::runtime
