// `mpspack run`: load one library of a container on this machine's CPU or GPU (--device), run it once on the
// given (or recorded) inputs, and check the outputs against references.
//   open -> pick library -> read inputs (and check the expected files exist) -> load -> run
//   -> write outputs -> compare -> report
#include "bench_report.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/file.hpp"
#include "mpspack/runtime/model.hpp"
#include "mpspack/tensor_io.hpp"
#include "mpspack/version.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>

namespace mpspack::cli {
namespace {

namespace fs = std::filesystem;
using runtime::Model;

struct RunArgs {
  std::string file;
  std::string library;
  std::vector<std::string> inputs;
  std::vector<std::string> expects;
  std::optional<double> rtol;
  std::optional<double> atol;
  std::string output;
  bool copy_weights = false;
  std::string device;  // --device cpu | cuda[:N]; default: the library's own device kind, index 0
  bool json = false;
  // --bench
  bool bench = false;
  uint64_t warmup = 3;
  std::optional<double> warmup_ms;
  uint64_t iterations = 20;
  std::optional<double> duration_s;
  bool cold = false;
  std::string format = "text";
  std::string export_times;
  bool include_transfers = false;
  bool cuda_graph = false;
  bool no_tf32 = false;
  std::string embedded_weights;  // hidden: memcpy (default), memcpy-willneed, pread, mmap, mmap-populate
  std::string large_blocks;      // hidden: prefault (default), libc
  std::string populate_weights;  // hidden: on (default), off
  std::optional<uint64_t> map_weights_min_bytes;  // hidden: LoadOptions::map_weights_min_bytes
};

runtime::EmbeddedWeights embedded_mechanism(const std::string& name) {
  using E = runtime::EmbeddedWeights;
  for (E e : {E::Memcpy, E::MemcpyWillneed, E::Pread, E::Mmap, E::MmapPopulate})
    if (name == runtime::to_string(e)) return e;
  return runtime::LoadOptions{}.embedded;
}

const ExampleInfo* example_for(const Manifest& m, uint32_t library) {
  for (const auto& e : m.examples)
    if (e.library == library) return &e;
  return nullptr;
}

HostTensor from_segment(const format::Container& c, const TensorInfo& info) {
  ByteView b = c.segment(info.segment);
  return HostTensor{info.dtype, info.shape, std::vector<uint8_t>(b.data(), b.data() + b.size())};
}

std::optional<TensorHint> hint_of(const std::vector<TensorInfo>* infos, size_t i) {
  if (!infos || i >= infos->size()) return std::nullopt;
  return TensorHint{(*infos)[i].dtype, (*infos)[i].shape};
}

// Reads `--input` specs (a raw file without DTYPE:SHAPE takes the recorded example's).
Result<std::vector<HostTensor>> read_inputs(const RunArgs& a, const ExampleInfo* ex) {
  std::vector<HostTensor> out;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    MPK_TRY(TensorSpec spec, parse_tensor_spec(a.inputs[i]));
    auto t = read_tensor(spec, hint_of(ex ? &ex->inputs : nullptr, i));
    if (!t.ok()) return t.error().context(fmt::format("--input {}", i));
    out.push_back(std::move(t).value());
  }
  return out;
}

// The inputs: --input files, else the recorded example's. With `want_expected` the example's outputs too
// (when the inputs are the example's). Fails when there is neither.
Status gather_inputs(const RunArgs& a, const format::Container& c, const ExampleInfo* ex, const std::string& lib_name,
                     bool want_expected, std::vector<HostTensor>& inputs, std::vector<HostTensor>& expected) {
  if (!a.inputs.empty()) {
    MPK_TRY(inputs, read_inputs(a, ex));
    return {};
  }
  if (!ex)
    return make_error(Error::Kind::Invalid,
                      "{}: no inputs: the container records no example for library '{}'; pass --input "
                      "FILE[:DTYPE:SHAPE]",
                      a.file, lib_name);
  for (const auto& t : ex->inputs) inputs.push_back(from_segment(c, t));
  if (want_expected)
    for (const auto& t : ex->outputs) expected.push_back(from_segment(c, t));
  return {};
}

// Every --expect names an existing file (checked before the model is loaded).
Result<std::vector<TensorSpec>> parse_expects(const RunArgs& a) {
  std::vector<TensorSpec> specs;
  for (const auto& text : a.expects) {
    MPK_TRY(TensorSpec spec, parse_tensor_spec(text));
    std::error_code ec;
    if (!fs::exists(spec.path, ec))
      return make_error(Error::Kind::Io, "{}: no such file (--expect)", spec.path.string());
    auto fd = open_input_file(spec.path);  // a FIFO or a folder is refused now, before the model runs
    if (!fd.ok()) return fd.error().context("--expect");
    ::close(*fd);
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::string index_string(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json timings_json(const runtime::PhaseTimings& t) {
  return {{"open_ms", t.open_ms},       {"checks_ms", t.checks_ms}, {"library_ms", t.library_ms},
          {"weights_ms", t.weights_ms}, {"create_ms", t.create_ms}, {"constants_ms", t.constants_ms},
          {"first_run_ms", t.first_run_ms}};
}

struct OutputReport {
  size_t index = 0;
  const HostTensor* got = nullptr;
  std::optional<Comparison> cmp;
  Tolerance tol;
  std::string reference;  // where the expected tensor came from
  std::string written;    // --output file
};

void print_text(const std::vector<OutputReport>& reports) {
  for (const auto& r : reports) {
    std::string head = fmt::format("output {}: {} {}", r.index, dtype_name(r.got->dtype), shape_string(r.got->shape));
    if (!r.written.empty()) head += fmt::format(" -> {}", printable(r.written));
    if (!r.cmp) {
      std::printf("%s\n", head.c_str());
      continue;
    }
    const Comparison& c = *r.cmp;
    if (!c.problem.empty()) {
      std::printf("%s: DOES NOT MATCH %s: %s\n", head.c_str(), printable(r.reference).c_str(), c.problem.c_str());
    } else if (c.match) {
      std::printf("%s: matches %s (max abs error %.3g, max rel error %.3g; rtol %g, atol %g)\n", head.c_str(),
                  printable(r.reference).c_str(), c.max_abs_error, c.max_rel_error, r.tol.rtol, r.tol.atol);
    } else {
      std::printf(
          "%s: DOES NOT MATCH %s: %llu of %llu elements out of tolerance (rtol %g, atol %g); max abs error %.6g, "
          "max rel error %.6g; first at %s: got %.9g, expected %.9g\n",
          head.c_str(), printable(r.reference).c_str(), static_cast<unsigned long long>(c.mismatches),
          static_cast<unsigned long long>(r.got->numel()), r.tol.rtol, r.tol.atol, c.max_abs_error, c.max_rel_error,
          index_string(c.first_mismatch_index).c_str(), c.first_got, c.first_want);
    }
  }
}

nlohmann::json report_json(const RunArgs& a, const Model& model, const std::vector<OutputReport>& reports, bool ok) {
  nlohmann::json outs = nlohmann::json::array();
  for (const auto& r : reports) {
    nlohmann::json o = {{"index", r.index}, {"dtype", dtype_name(r.got->dtype)}, {"shape", r.got->shape}};
    if (!r.written.empty()) o["written"] = r.written;
    if (r.cmp) {
      const Comparison& c = *r.cmp;
      o["reference"] = r.reference;
      o["match"] = c.match;
      o["rtol"] = r.tol.rtol;
      o["atol"] = r.tol.atol;
      if (!c.problem.empty()) o["problem"] = c.problem;
      o["mismatches"] = c.mismatches;
      o["max_abs_error"] = finite_or_null(c.max_abs_error);
      o["max_rel_error"] = finite_or_null(c.max_rel_error);
      if (c.first_mismatch) {
        o["first_mismatch"] = {{"index", c.first_mismatch_index},
                               {"flat", *c.first_mismatch},
                               {"got", finite_or_null(c.first_got)},
                               {"expected", finite_or_null(c.first_want)}};
      }
    }
    outs.push_back(std::move(o));
  }
  return {{"container", a.file},
          {"library", model.library().name},
          {"weights", runtime::to_string(model.weights_mode())},
          {"checked", std::any_of(reports.begin(), reports.end(), [](const auto& r) { return r.cmp.has_value(); })},
          {"ok", ok},
          {"outputs", std::move(outs)},
          {"timings", timings_json(model.timings())}};
}

Status write_outputs(const std::string& dir, const std::vector<HostTensor>& outs, std::vector<OutputReport>& reports) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(Error::Kind::Io, "{}: cannot create the output folder: {}", dir, ec.message());
  for (size_t i = 0; i < outs.size(); ++i) {
    // NumPy has no bfloat16: those are written raw (.bin), the rest as .npy.
    const bool raw = outs[i].dtype == dtype::bfloat16;
    fs::path p = fs::path(dir) / fmt::format("output{}.{}", i, raw ? "bin" : "npy");
    MPK_CHECK(write_tensor(p, outs[i], raw));
    reports[i].written = p.string();
  }
  return {};
}

int run_bench(const RunArgs& a);

// Whether float32 convolutions on a GPU may use TF32: the variable the CUDA shim reads (--no-tf32 sets it).
bool cudnn_tf32_allowed() {
  const char* v = std::getenv("MPSPACK_CUDNN_TF32");
  return !(v != nullptr && std::string(v) == "0");
}

// The load options the command line chose.
runtime::LoadOptions load_options(const RunArgs& a) {
  runtime::LoadOptions lo;
  lo.copy_weights = a.copy_weights;
  if (!a.embedded_weights.empty()) lo.embedded = embedded_mechanism(a.embedded_weights);
  if (a.large_blocks == "libc") lo.prefault_large_blocks = false;
  if (a.populate_weights == "off") lo.populate_weights = false;
  if (a.map_weights_min_bytes) lo.map_weights_min_bytes = *a.map_weights_min_bytes;
  return lo;
}

// --device KIND[:N] against the library's device kind: an AOTInductor library is compiled for one kind of device,
// so --device can only pick which device of that kind.
Result<int32_t> device_index(const RunArgs& a, const LibraryInfo& lib) {
  if (a.device.empty()) return 0;
  const auto colon = a.device.find(':');
  const std::string kind = a.device.substr(0, colon);
  int32_t index = 0;
  if (colon != std::string::npos) {
    const std::string n = a.device.substr(colon + 1);
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
    if (n.empty() || ec != std::errc() || p != n.data() + n.size() || index < 0)
      return make_error(Error::Kind::Invalid, "{}: --device {}: expected cpu, cuda or cuda:N", a.file, a.device);
  }
  if (kind != "cpu" && kind != "cuda")
    return make_error(Error::Kind::Invalid, "{}: --device {}: expected cpu, cuda or cuda:N", a.file, a.device);
  if (kind != lib.device)
    return make_error(Error::Kind::Unsupported,
                      "{}: library '{}' was compiled for {}; it cannot run on --device {} (AOTInductor compiles a "
                      "library for one kind of device)",
                      a.file, lib.name, lib.device, a.device);
  if (kind == "cpu" && index != 0)
    return make_error(Error::Kind::Invalid, "{}: --device {}: the CPU has index 0 only", a.file, a.device);
  return index;
}

// Loads library `index` with those options; run and --bench share it.
Result<Model> load_model(const RunArgs& a, const format::Container& c, uint32_t index, double open_ms) {
  runtime::LoadOptions lo = load_options(a);
  MPK_TRY(lo.device_index, device_index(a, c.manifest().libraries[index]));
  auto model = Model::load(c, index, lo);
  if (!model.ok()) return model.error().context(a.file);
  model->mutable_timings().open_ms = open_ms;
  return model;
}

int run_run(const RunArgs& a) {
  // The CUDA shim reads this at its first convolution (the backend is a plugin; the environment reaches it
  // without an API between the two).
  if (a.no_tf32) setenv("MPSPACK_CUDNN_TF32", "0", 1);
  if (a.bench) return run_bench(a);
  using Clock = std::chrono::steady_clock;
  // 1. open and pick the library
  const auto t0 = Clock::now();
  auto container = format::Container::open(a.file);
  if (!container.ok()) return fail(container.error());
  const double open_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  auto index = runtime::find_library(*container, a.library);
  if (!index.ok()) return fail(index.error());
  const ExampleInfo* ex = example_for(container->manifest(), *index);
  const std::string lib_name = container->manifest().libraries[*index].name;

  // 2. inputs and references, before anything of the model runs
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> expected;  // from the recorded example
  if (auto s = gather_inputs(a, *container, ex, lib_name, a.expects.empty(), inputs, expected); !s.ok())
    return fail(s.error());
  auto expect_specs = parse_expects(a);
  if (!expect_specs.ok()) return fail(expect_specs.error());

  // 3. load and run
  auto model = load_model(a, *container, *index, open_ms);
  if (!model.ok()) return fail(model.error());
  auto outputs = model->run(inputs);
  if (!outputs.ok()) return fail(outputs.error().context(a.file));

  // 4. references: --expect files (a raw file takes the output's dtype/shape) or the example's
  std::vector<OutputReport> reports(outputs->size());
  for (size_t i = 0; i < reports.size(); ++i) {
    reports[i].index = i;
    reports[i].got = &(*outputs)[i];
  }
  if (!a.output.empty()) {
    if (auto s = write_outputs(a.output, *outputs, reports); !s.ok()) return fail(s.error());
  }
  std::vector<std::string> reference_names;
  if (!expect_specs->empty()) {
    if (expect_specs->size() != outputs->size())
      return fail(make_error(Error::Kind::Invalid, "{}: {} --expect given, but library '{}' has {} output{}", a.file,
                             expect_specs->size(), lib_name, outputs->size(), outputs->size() == 1 ? "" : "s"));
    for (size_t i = 0; i < expect_specs->size(); ++i) {
      const HostTensor& got = (*outputs)[i];
      auto hint = hint_of(ex && a.inputs.empty() ? &ex->outputs : nullptr, i);
      if (!hint) hint = TensorHint{got.dtype, got.shape};
      auto t = read_tensor((*expect_specs)[i], hint);
      if (!t.ok()) return fail(t.error().context(fmt::format("--expect {}", i)));
      expected.push_back(std::move(t).value());
      reference_names.push_back((*expect_specs)[i].path.string());
    }
  } else {
    for (size_t i = 0; i < expected.size(); ++i) reference_names.push_back(fmt::format("the recorded example output{}", i));
    if (!expected.empty() && expected.size() != outputs->size())
      return fail(make_error(Error::Kind::Corrupt, "{}: the recorded example has {} outputs, the model returned {}",
                             a.file, expected.size(), outputs->size()));
  }

  // 5. compare and report
  bool ok = true;
  std::vector<size_t> bad;
  for (size_t i = 0; i < expected.size(); ++i) {
    Tolerance tol = default_tolerance(expected[i].dtype);
    if (a.rtol) tol.rtol = *a.rtol;
    if (a.atol) tol.atol = *a.atol;
    reports[i].tol = tol;
    reports[i].reference = reference_names[i];
    reports[i].cmp = compare_tensors((*outputs)[i], expected[i], tol);
    if (!reports[i].cmp->match) {
      ok = false;
      bad.push_back(i);
    }
  }
  if (a.json) {
    print_json(report_json(a, *model, reports, ok));
  } else if (!globals().quiet) {
    print_text(reports);
    const auto& t = model->timings();
    std::printf("%s: library '%s' (%s): loaded in %.2f ms, first run %.2f ms\n", printable(a.file).c_str(), printable(lib_name).c_str(),
                runtime::to_string(model->weights_mode()),
                t.open_ms + t.checks_ms + t.library_ms + t.weights_ms + t.create_ms + t.constants_ms, t.first_run_ms);
  }
  spdlog::info("timings (ms): open {:.3f}, checks {:.3f}, library {:.3f}, weights {:.3f}, create {:.3f}, "
               "constants {:.3f}, first run {:.3f}",
               model->timings().open_ms, model->timings().checks_ms, model->timings().library_ms,
               model->timings().weights_ms, model->timings().create_ms, model->timings().constants_ms,
               model->timings().first_run_ms);
  if (!ok) {
    std::string which;
    for (size_t i : bad) which += fmt::format("{}{}", which.empty() ? "" : ", ", i);
    return fail(make_error(Error::Kind::Invalid, "{}: output{} {} do{} not match", a.file, bad.size() == 1 ? "" : "s",
                           which, bad.size() == 1 ? "es" : ""),
                kCheckFailed);
  }
  return kOk;
}

// --bench: load (each phase timed), first run, warm-up, timed iterations; the report
// (docs/CLI.md, ## run). The container's SHA-256 is computed after everything timed.
int run_bench(const RunArgs& a) {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  // 0. --cold: drop the container from the page cache before it is opened
  nlohmann::json cold_cache;
  if (a.cold) cold_cache = bench::drop_from_page_cache(a.file);

  // 1. open and pick the library; the inputs (not timed as load: they are the user's data)
  auto t0 = Clock::now();
  auto container = format::Container::open(a.file);
  if (!container.ok()) return fail(container.error());
  const double open_ms = ms(t0);
  auto index = runtime::find_library(*container, a.library);
  if (!index.ok()) return fail(index.error());
  const ExampleInfo* ex = example_for(container->manifest(), *index);
  const std::string lib_name = container->manifest().libraries[*index].name;
  std::vector<HostTensor> inputs, expected;
  if (auto s = gather_inputs(a, *container, ex, lib_name, true, inputs, expected); !s.ok()) return fail(s.error());

  // 2. load and the first run
  auto model = load_model(a, *container, *index, open_ms);
  if (!model.ok()) return fail(model.error());
  auto first = model->run(inputs);
  if (!first.ok()) return fail(first.error().context(a.file));
  const double first_result_ms = bench::ms_since_process_start();
  bool checked = !expected.empty(), ok = true;
  if (checked) {
    if (expected.size() != first->size()) ok = false;
    for (size_t i = 0; ok && i < expected.size(); ++i)
      ok = compare_tensors((*first)[i], expected[i], default_tolerance(expected[i].dtype)).match;
  }

  // 3. warm-up, then the timed iterations: the model alone on inputs already on the device, waiting for the
  // device each time (--include-transfers: copies in and out included, as in the first run)
  uint64_t warmup_runs = 0;
  if (!a.include_transfers) {
    if (auto s = model->prepare_inputs(inputs); !s.ok()) return fail(s.error().context(a.file));
  }
  if (a.cuda_graph && (a.include_transfers || model->device() == "cpu"))
    return fail(make_error(Error::Kind::Invalid, "{}: --cuda-graph needs a CUDA library and no --include-transfers",
                           a.file));
  auto run_once = [&]() -> Status {
    if (!a.include_transfers) {
      if (auto s = model->run_prepared(a.cuda_graph); !s.ok()) return s.error().context(a.file);
      return {};
    }
    auto r = model->run(inputs);
    if (!r.ok()) return r.error().context(a.file);
    return {};
  };
  t0 = Clock::now();
  for (;;) {
    if (a.warmup_ms ? ms(t0) >= *a.warmup_ms : warmup_runs >= a.warmup) break;
    if (auto s = run_once(); !s.ok()) return fail(s.error());
    ++warmup_runs;
  }
  std::vector<double> times;
  const auto start = Clock::now();
  for (;;) {
    if (a.duration_s ? (!times.empty() && ms(start) >= *a.duration_s * 1e3) : times.size() >= a.iterations) break;
    const auto ti = Clock::now();
    if (auto s = run_once(); !s.ok()) return fail(s.error());
    times.push_back(ms(ti));
  }
  const double total_ms = ms(start);
  const uint64_t peak_rss = bench::peak_rss_bytes();
  // A GPU's memory and, to compare the weight upload with, plain host-to-device copies of the same size
  // (at least 64 MiB, at most 1 GiB) measured now, in the same run.
  nlohmann::json device = nullptr;
  const auto& tm = model->timings();
  if (model->device() != "cpu") {
    const uint64_t copy_bytes = std::clamp<uint64_t>(tm.upload_bytes, 64ull << 20, 1ull << 30);
    auto f = model->device_figures(copy_bytes);
    if (!f.ok()) return fail(f.error().context(a.file));
    device = {{"name", f->name},
              {"memory_total_bytes", f->memory_total},
              {"memory_used_bytes", f->memory_used},
              {"pool_peak_bytes", f->pool_peak},
              {"h2d_copy_bytes", copy_bytes},
              {"h2d_pinned_gbps", f->h2d_pinned_gbps},
              {"h2d_pageable_gbps", f->h2d_pageable_gbps}};
    if (tm.upload_bytes > 0) {
      const double gbps = tm.upload_ms > 0 ? double(tm.upload_bytes) / (tm.upload_ms * 1e6) : 0.0;
      device["weights_upload"] = {{"bytes", tm.upload_bytes},
                                  {"ms", tm.upload_ms},
                                  {"gbps", gbps},
                                  {"of_pinned_copy", f->h2d_pinned_gbps > 0 ? gbps / f->h2d_pinned_gbps : 0.0}};
    }
  }

  // 4. report (hashing reads the whole container: after everything timed)
  auto container_sha256 = format::file_sha256(*container);
  if (!container_sha256.ok()) return fail(container_sha256.error());
  const auto& t = model->timings();
  const double load_total = t.open_ms + t.checks_ms + t.library_ms + t.weights_ms + t.create_ms + t.constants_ms;
  nlohmann::json r = {
      {"schema_version", 1},
      {"container", a.file},
      {"library", lib_name},
      {"backend", model->device()},
      {"include_transfers", a.include_transfers},
      {"cuda_graph", a.cuda_graph},
      {"cudnn_tf32", cudnn_tf32_allowed()},
      {"weights_mode", runtime::to_string(model->weights_mode())},
      {"embedded_weights", runtime::to_string(load_options(a).embedded)},
      {"large_blocks", load_options(a).prefault_large_blocks ? "prefault" : "libc"},
      {"populate_weights", load_options(a).populate_weights},
      {"cold", a.cold},
      {"load_ms",
       {{"open_ms", t.open_ms},
        {"checks_ms", t.checks_ms},
        {"library_ms", t.library_ms},
        {"weights_ms", t.weights_ms},
        {"create_ms", t.create_ms},
        {"constants_ms", t.constants_ms},
        {"first_run_ms", t.first_run_ms},
        {"load_total_ms", load_total},
        {"load_to_first_result_ms", load_total + t.first_run_ms}}},
      {"time_to_first_result_ms", first_result_ms},
      {"checked", checked},
      {"ok", ok},
      {"warmup_runs", warmup_runs},
      {"iterations", times.size()},
      {"total_ms", total_ms},
      {"latency_ms", bench::latency_stats(times)},
      {"throughput_per_s", total_ms > 0 ? double(times.size()) * 1e3 / total_ms : 0.0},
      {"peak_rss_bytes", peak_rss},
      {"machine", bench::machine_info()},
      {"container_sha256", *container_sha256},
      {"mpspack_version", mpspack::version_string()}};
  if (a.cold) r["cold_cache"] = cold_cache;
  if (!device.is_null()) r["device"] = device;
  if (!a.export_times.empty()) {
    std::ofstream f(a.export_times, std::ios::binary | std::ios::trunc);
    f << nlohmann::json(times).dump() << "\n";
    if (!f.flush())
      return fail(make_error(Error::Kind::Io, "{}: cannot write the iteration times (--export-times)", a.export_times));
    r["export_times"] = a.export_times;
  }
  std::fputs(bench::render(utf8_json(r), a.format).c_str(), stdout);
  std::fflush(stdout);
  if (!ok)
    return fail(make_error(Error::Kind::Invalid, "{}: the first run's outputs do not match the recorded example",
                           a.file),
                kCheckFailed);
  return kOk;
}

}  // namespace

Action add_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  app.add_option("file", a->file, "Container (.mpk) to run")->required();
  app.add_option("--library", a->library, "Which library to run, by NAME or INDEX (default: the only one)");
  app.add_option("-i,--input", a->inputs,
                 "Input tensor FILE[:DTYPE:SHAPE] (e.g. x.bin:f32:4x96, or x.npy), once per model input in order "
                 "(default: the recorded example's inputs)");
  app.add_option("-e,--expect", a->expects,
                 "Expected output FILE[:DTYPE:SHAPE], once per model output in order (default with no --input: the "
                 "recorded example's outputs)");
  app.add_option("--rtol", a->rtol, "Relative tolerance (default by dtype: f32 1e-4, f16/bf16 1e-2, f64 1e-7, "
                                    "integers exact)");
  app.add_option("--atol", a->atol, "Absolute tolerance (default by dtype: f32 1e-5, f16/bf16 1e-3, f64 1e-9)");
  app.add_option("-o,--output", a->output, "Folder to write the outputs to (output<i>.npy; bf16 as raw .bin)");
  app.add_flag("--copy-weights", a->copy_weights,
               "External-blob libraries: copy the weights into the model instead of using them in place");
  app.add_option("--device", a->device,
                 "Device to run on: cpu, cuda or cuda:N (default: the kind the library was compiled for, index 0)");
  app.add_flag("--json", a->json, "Print a JSON report on stdout");
  app.add_flag("--bench", a->bench,
               "Benchmark: time each load phase and the first run, warm up, then time --iterations runs; report "
               "latency statistics, throughput and peak RSS");
  app.add_option("--warmup", a->warmup, "--bench: warm-up runs before timing (default 3)");
  app.add_option("--warmup-ms", a->warmup_ms, "--bench: warm up for this many milliseconds instead of --warmup runs");
  app.add_option("--iterations", a->iterations, "--bench: timed runs (default 20)")->check(CLI::PositiveNumber);
  app.add_option("--duration", a->duration_s, "--bench: time runs for this many seconds instead of --iterations")
      ->check(CLI::PositiveNumber);
  app.add_flag("--cold", a->cold,
               "--bench: drop the container from the page cache first (posix_fadvise DONTNEED; clean pages only)");
  app.add_option("--format", a->format, "--bench: report format: text (default), json, csv, md")
      ->check(CLI::IsMember({"text", "json", "csv", "md"}));
  // For benchmarks of the loader (docs/PERFORMANCE.md), not a user choice: hidden from --help.
  app.add_option("--embedded-weights", a->embedded_weights, "How embedded weights reach the constants region")
      ->check(CLI::IsMember({"memcpy", "memcpy-willneed", "pread", "mmap", "mmap-populate"}))
      ->group(kHiddenGroup);
  app.add_option("--large-blocks", a->large_blocks,
                 "The model's mallocs and copies of 32 MiB or more: prefault (default: on several threads) or libc")
      ->check(CLI::IsMember({"prefault", "libc"}))
      ->group(kHiddenGroup);
  app.add_option("--populate-weights", a->populate_weights,
                 "Weights used from the container's pages: map them all at load (on, default) or as the model "
                 "touches them (off)")
      ->check(CLI::IsMember({"on", "off"}))
      ->group(kHiddenGroup);
  app.add_option("--map-weights-min-bytes", a->map_weights_min_bytes,
                 "Weights of this many bytes or more reach the model without the library's own copy (default 1 MiB)")
      ->group(kHiddenGroup);
  app.add_flag("--include-transfers", a->include_transfers,
               "--bench: time each run with its input and output copies (default: the model alone, inputs already "
               "on the device, outputs left there)");
  app.add_flag("--cuda-graph", a->cuda_graph,
               "--bench on a GPU: after the first warm-up run, capture one run in a CUDA graph and time its replays");
  app.add_flag("--no-tf32", a->no_tf32,
               "On a GPU: float32 convolutions without TF32 (torch's default allows it for convolutions, as "
               "torch.backends.cudnn.allow_tf32; same as MPSPACK_CUDNN_TF32=0)");
  app.add_option("--export-times", a->export_times, "--bench: write every timed iteration (JSON array of ms) to FILE");
  return [a] { return run_run(*a); };
}

}  // namespace mpspack::cli
