// `mpspack run`: the options, then runtime::verify() (or runtime::bench() with --bench) does the work, and the
// report is shown (run_report.hpp). docs/CLI.md, ## run.
#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/runtime/bench.hpp"
#include "mpspack/runtime/report_json.hpp"
#include "mpspack/runtime/verify.hpp"
#include "mpspack/sign/signature.hpp"
#include "run_report.hpp"

#include <spdlog/spdlog.h>

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>

namespace mpspack::cli {
namespace {

struct RunArgs {
  runtime::BenchOptions bench;  // bench.model: what plain `run` verifies
  bool benchmark = false;       // --bench
  bool json = false;
  std::string format = "text";
  std::string export_times;
  std::string junit;  // --junit FILE
  bool no_tf32 = false;
  bool no_verify = false;
  std::string key, signature;  // --key, --signature: the container must carry a valid signature to be loaded
};

// run --key: the signature and every signed byte checked on the opened container, before anything of it is
// loaded, so that a container that fails runs nothing (docs/SECURITY.md says what this does and does not cover).
void check_signature_when_opened(RunArgs& a) {
  std::optional<std::filesystem::path> sig;
  if (!a.signature.empty()) sig = a.signature;
  a.bench.model.check_opened = [key = a.key, sig](const format::Container& c) -> Status {
    auto v = sign::verify_files(c, key, sig, 0, progress_bar("verify signature"));
    if (!v.ok()) return v.error();
    spdlog::info("{}: signed by key {}", printable(c.name()), v->key_id);
    return {};
  };
}

// The options given by name into the pipeline's.
void apply_named_options(RunArgs& a) {
  runtime::VerifyOptions& v = a.bench.model;
  v.tf32_convolutions = !a.no_tf32;
  v.load.verify_weights = !a.no_verify;
  if (a.no_verify)
    spdlog::warn("{}: the weights are not checked against their hashes (--no-verify)", printable(v.container));
}

Status write_times(const std::string& path, const std::vector<double>& times_ms) {
  if (path.empty()) return {};
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << nlohmann::json(times_ms).dump() << "\n";
  if (!f.flush()) return make_error(Error::Kind::Io, "{}: cannot write the iteration times (--export-times)", path);
  return {};
}

int run_verify(const RunArgs& a) {
  auto report = runtime::verify(a.bench.model);
  if (!report.ok())
    return finish_with_junit(a.junit,
                             error_suite("mpspack run", "mpspack.run", a.bench.model.container, report.error()),
                             fail(report.error()));
  if (a.json) {
    print_json(runtime::run_json(*report));
  } else if (!globals().quiet) {
    std::fputs(run_text(*report).c_str(), stdout);
  }
  const int code = runtime::verdict(*report).ok() ? kOk : fail(runtime::verdict(*report).error(), kCheckFailed);
  return finish_with_junit(a.junit, run_junit(*report), code);
}

// Whether `f` is a regular file that already holds something (`>> runs.csv`): a CSV report then leaves its
// header out, so that runs append into one table.
bool appending_to_file(std::FILE* f) {
  struct stat st {};
  const int fd = ::fileno(f);
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

int run_bench(const RunArgs& a) {
  const std::string format = a.json ? "json" : a.format;
  auto report = runtime::bench(a.bench);
  if (!report.ok())
    return finish_with_junit(
        a.junit, error_suite("mpspack run --bench", "mpspack.bench", a.bench.model.container, report.error()),
        fail(report.error()));
  if (auto s = write_times(a.export_times, report->times_ms); !s.ok()) return fail(s.error());
  std::fputs(bench_rendered(*report, a.export_times, format, !appending_to_file(stdout)).c_str(), stdout);
  std::fflush(stdout);
  const int code = runtime::verdict(*report).ok() ? kOk : fail(runtime::verdict(*report).error(), kCheckFailed);
  return finish_with_junit(a.junit, bench_junit(*report), code);
}

// Where the result goes besides the text report.
void add_report_options(CLI::App& app, RunArgs& a) {
  app.add_flag("--json", a.json, "Print a JSON report on stdout (with --bench: --format json)");
  app.add_option("--junit", a.junit,
                 "Also write the result as JUnit XML to FILE: a test case per output compared (with --bench, one "
                 "for the container and library, its latency figures attached)")
      ->check(non_empty());
}

// The --bench options. Each changes only how --bench measures or reports, so it needs --bench: without it the
// option would be silently ignored. The ranges are docs/CLI.md's "Option ranges" table.
void add_bench_options(CLI::App& app, RunArgs& a) {
  runtime::BenchOptions& b = a.bench;
  CLI::Option* bench =
      app.add_flag("--bench", a.benchmark,
                   "Benchmark: time each load phase and the first run, warm up, then time --iterations runs; report "
                   "latency statistics, throughput and peak RSS");
  auto bench_only = [&](CLI::Option* o) { return o->needs(bench); };
  CLI::Option* warmup =
      bench_only(app.add_option("--warmup", b.warmup, "--bench: warm-up runs before timing (default 3)")
                     ->check(whole_number(0, 1'000'000)));
  bench_only(
      app.add_option("--warmup-ms", b.warmup_ms, "--bench: warm up for this many milliseconds instead of --warmup runs")
          ->check(real_number(0, 3'600'000))
          ->excludes(warmup));
  CLI::Option* iterations = bench_only(app.add_option("--iterations", b.iterations, "--bench: timed runs (default 20)")
                                           ->check(whole_number(1, 1'000'000)));
  bench_only(
      app.add_option("--duration", b.duration_s, "--bench: time runs for this many seconds instead of --iterations")
          ->check(real_number(0, 86'400, Excluded::low))
          ->excludes(iterations));
  bench_only(app.add_flag("--cold", b.cold,
                          "--bench: drop the container from the page cache first (posix_fadvise DONTNEED; clean pages "
                          "only)"));
  bench_only(
      app.add_option("--format", a.format,
                     "--bench: report format: text (default), json, jsonl (one line per run), csv (fixed columns; "
                     "no header when appending to a file that holds one), md")
          ->check(CLI::IsMember({"text", "json", "jsonl", "csv", "md"})));
  bench_only(app.add_option("--repetitions", b.repetitions,
                            "--bench: do the warm-up and the timed runs this many times; each latency statistic is "
                            "reported as its mean and standard deviation over them (default 1)")
                 ->check(whole_number(1, 1000)));
  bench_only(app.add_option("--percentile", b.percentiles,
                            "--bench: report this latency percentile too (e.g. 99.9); repeatable")
                 ->allow_extra_args(false)  // one value each time, so that a file named after it stays the file
                 ->check(real_number(0, 100, Excluded::both)));
  bench_only(
      app.add_option("--threads", b.threads,
                     "--bench: the CPU team's size: run on the first N CPUs this process may use, with "
                     "OMP_NUM_THREADS and OpenBLAS's own threads (when OPENBLAS_NUM_THREADS gave it some) set to N "
                     "(default: as they are)")
          ->check(whole_number(1, CPU_SETSIZE)));  // the affinity mask's size
  bench_only(app.add_option("--export-times", a.export_times,
                            "--bench: write every timed iteration (JSON array of ms) to FILE")
                 ->check(non_empty()));
  CLI::Option* transfers = bench_only(
      app.add_flag("--include-transfers", b.include_transfers,
                   "--bench: time each run with its input and output copies (default: the model alone, inputs "
                   "already on the device, outputs left there)"));
  bench_only(app.add_flag("--cuda-graph", b.cuda_graph,
                          "--bench on a GPU: after the first warm-up run, capture one run in a CUDA graph and time its "
                          "replays (the model's own runs, so not with --include-transfers)")
                 ->excludes(transfers));
}

void add_signature_options(CLI::App& app, RunArgs& a) {
  CLI::Option* key = app.add_option("--key", a.key,
                                    "Run only if the container's signature verifies with this public key (PEM); "
                                    "checked before anything is loaded")
                         ->check(non_empty());
  app.add_option("--signature", a.signature, "--key: the signature file (default: FILE.sig beside the container)")
      ->check(non_empty())
      ->needs(key);
}

// What `run` does once its options are parsed: verify, or benchmark with --bench.
int run_command(RunArgs& a) {
  if (auto unknown = unknown_input(a.bench.model.container, "run", kContainerInput)) {
    const JunitSuite suite =
        a.benchmark ? error_suite("mpspack run --bench", "mpspack.bench", a.bench.model.container, *unknown)
                    : error_suite("mpspack run", "mpspack.run", a.bench.model.container, *unknown);
    return finish_with_junit(a.junit, suite, fail(*unknown));
  }
  if (!a.key.empty()) check_signature_when_opened(a);
  apply_named_options(a);
  return a.benchmark ? run_bench(a) : run_verify(a);
}

}  // namespace

Action add_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  runtime::VerifyOptions& v = a->bench.model;
  app.add_option("file", v.container, "Container (.mpk) to run")->required();
  app.add_option("--library", v.library, "Which library to run, by NAME or INDEX (default: the only one)")
      ->check(non_empty());
  CLI::Option* input =
      app.add_option("-i,--input", v.inputs,
                     "Input tensor FILE[:DTYPE:SHAPE] (e.g. x.bin:f32:4x96, or x.npy), once per model input in order "
                     "(default: the recorded example's inputs)")
          ->check(non_empty());
  app.add_option("--seed", v.seed,
                 "Generate the inputs from this seed instead: the recorded example's dtypes and shapes, values drawn "
                 "within each input's recorded range; the outputs are then compared only with --expect files")
      ->check(whole_number(0, UINT64_MAX))
      ->excludes(input);
  app.add_option("-e,--expect", v.expects,
                 "Expected output FILE[:DTYPE:SHAPE], once per model output in order (default with no --input: the "
                 "recorded example's outputs)")
      ->check(non_empty());
  app.add_option("--rtol", v.rtol,
                 "Relative tolerance (default by dtype: f32 1e-4, f16/bf16 1e-2, f64 1e-7, "
                 "integers exact)")
      ->check(real_number(0, 1));
  app.add_option("--atol", v.atol, "Absolute tolerance (default by dtype: f32 1e-5, f16/bf16 1e-3, f64 1e-9)")
      ->check(real_number(0, 1e9));
  app.add_option("-o,--output", v.output_dir, "Folder to write the outputs to (output<i>.npy; bf16 as raw .bin)")
      ->check(non_empty());
  app.add_flag("--no-verify", a->no_verify,
               "Do not check the weights against their recorded hashes before reporting outputs (the library and "
               "the recorded examples are checked always)");
  app.add_flag("--copy-weights", v.load.copy_weights,
               "External-blob libraries: copy the weights into the model instead of using them in place");
  app.add_option("--device", v.device,
                 "Device to run on: cpu, cuda or cuda:N (default: the kind the library was compiled for, index 0)")
      ->check(non_empty());
  add_report_options(app, *a);
  add_signature_options(app, *a);
  add_bench_options(app, *a);
  app.add_flag("--no-tf32", a->no_tf32,
               "On a GPU: float32 convolutions without TF32 (torch's default allows it for convolutions, as "
               "torch.backends.cudnn.allow_tf32; same as MPSPACK_CUDNN_TF32=0)");
  // --json is --format json; with another --format given, the two ask for two reports. (Runs at the end of
  // parsing, so it is a usage error like CLI11's own excludes().)
  const CLI::Option* format = app.get_option("--format");
  app.final_callback([a, format] {
    if (a->json && format->count() > 0 && a->format != "json")
      throw CLI::ExcludesError("--json", "--format " + a->format);
  });
  return [a] { return run_command(*a); };
}

}  // namespace mpspack::cli
