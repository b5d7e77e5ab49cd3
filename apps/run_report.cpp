#include "run_report.hpp"

#include "cli.hpp"
#include "latency_histogram.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/runtime/report_json.hpp"
#include "mpspack/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <utility>
#include <vector>

namespace mpspack::cli {
namespace {

using nlohmann::json;
using runtime::BenchReport;
using runtime::VerifyReport;

// --- run

// printf's conversions (%g, %.3g) into a string: the run report's numbers have those forms.
[[gnu::format(printf, 1, 2)]] std::string cformat(const char* f, ...) {
  va_list args, again;
  va_start(args, f);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, f, args);
  va_end(args);
  std::string s(size_t(std::max(n, 0)), '\0');
  std::vsnprintf(s.data(), s.size() + 1, f, again);
  va_end(again);
  return s;
}

std::string index_string(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

std::string comparison_text(const runtime::OutputCheck& o) {
  const runtime::OutputReference& ref = *o.reference;
  const Comparison& c = ref.comparison;
  const std::string where = printable(ref.name);
  if (!c.problem.empty()) return cformat(": DOES NOT MATCH %s: %s", where.c_str(), c.problem.c_str());
  if (c.match)
    return cformat(": matches %s (max abs error %.3g, max rel error %.3g; rtol %g, atol %g)", where.c_str(),
                   c.max_abs_error, c.max_rel_error, ref.tolerance.rtol, ref.tolerance.atol);
  return cformat(": DOES NOT MATCH %s: %llu of %llu elements out of tolerance (rtol %g, atol %g); max abs error %.6g, "
                 "max rel error %.6g; first at %s: got %.9g, expected %.9g",
                 where.c_str(), static_cast<unsigned long long>(c.mismatches),
                 static_cast<unsigned long long>(o.tensor.numel()), ref.tolerance.rtol, ref.tolerance.atol,
                 c.max_abs_error, c.max_rel_error, index_string(c.first_mismatch_index).c_str(), c.first_got,
                 c.first_want);
}

// --- run --bench

// A name as the text report shows it: what the JSON report holds (valid UTF-8), made safe for a terminal.
std::string shown(const std::string& s) { return printable(text::utf8_with_replacements(s)); }

// The load phases in the order they happen, then the two sums: how the text and CSV reports list them.
constexpr const char* kLoadPhases[] = {"open_ms",      "checks_ms",     "library_ms",
                                       "weights_ms",   "create_ms",     "constants_ms",
                                       "first_run_ms", "load_total_ms", "load_to_first_result_ms"};

std::string cold_text(const BenchReport& r) {
  std::string s = fmt::format("cold: {}", r.cold ? "yes" : "no");
  if (const auto& c = r.cold_cache) {
    s += fmt::format(" (posix_fadvise DONTNEED {}; resident after: {})", c->ok ? "ok" : "failed",
                     c->resident_fraction_after ? fmt::format("{:.1f}%", 100 * *c->resident_fraction_after)
                                                : std::string("unknown"));
  }
  return s + "\n";
}

std::string device_text(const runtime::DeviceReport& d) {
  const runtime::DeviceFigures& f = d.figures;
  std::string s = fmt::format("device: {}; memory used {:.1f} of {:.1f} GiB, pool peak {:.1f} MiB\n", shown(f.name),
                              double(f.memory_used) / (1 << 30), double(f.memory_total) / (1 << 30),
                              double(f.pool_peak) / (1 << 20));
  s += fmt::format("host to device, plain copy of {:.0f} MiB: pinned {:.1f} GB/s, pageable {:.1f} GB/s\n",
                   double(d.h2d_copy_bytes) / (1 << 20), f.h2d_pinned_gbps, f.h2d_pageable_gbps);
  if (const auto& u = d.weights_upload) {
    s += fmt::format("weight upload: {:.1f} MiB in {:.1f} ms = {:.1f} GB/s ({:.0f}% of the pinned copy)\n",
                     double(u->bytes) / (1 << 20), u->ms, u->gbps, 100 * u->of_pinned_copy);
  }
  return s;
}

// Where the inputs came from, and what the first run was compared with (nothing, for generated inputs without
// --expect: say so rather than leave it to be assumed).
std::string inputs_text(const std::string& source, const std::optional<uint64_t>& seed, bool checked, bool ok) {
  std::string s = source == "seed"    ? fmt::format("inputs: generated from seed {}", *seed)
                  : source == "files" ? std::string("inputs: the --input files")
                                      : std::string("inputs: the recorded example's");
  if (!checked)
    return s + (source == "seed" ? "; outputs not compared (generated inputs have no reference; --expect gives one)\n"
                                 : "; outputs not compared (no reference)\n");
  return s + fmt::format("; the outputs {}\n", ok ? "match their reference" : "DO NOT MATCH their reference");
}

// "min 1.0000  mean ..." with each statistic's spread over the repetitions when there were several.
std::string latency_text(const BenchReport& r) {
  const bool spread = r.repetitions > 1;
  auto stat = [&](const std::string& name, double mean, double sd) {
    return spread ? fmt::format("  {} {:.4f} ± {:.4f}", name, mean, sd) : fmt::format("  {} {:.4f}", name, mean);
  };
  const runtime::LatencyStats &l = r.latency, &d = r.latency_stddev;
  std::string s = spread ? fmt::format("latency (ms, mean ± stddev over {} repetitions):", r.repetitions)
                         : std::string("latency (ms):");
  s += stat("min", l.min, d.min) + stat("mean", l.mean, d.mean) + stat("p50", l.p50, d.p50) +
       stat("p90", l.p90, d.p90) + stat("p99", l.p99, d.p99);
  for (size_t i = 0; i < r.percentiles.size() && i < l.percentiles.size(); ++i)
    s += stat(runtime::percentile_key(r.percentiles[i]), l.percentiles[i], d.percentiles[i]);
  s += stat("max", l.max, d.max) + stat("stddev", l.stddev, d.stddev);
  s.erase(s.find(':') + 1, 1);  // one space after the colon, as the other lines have
  return s + "\n";
}

std::string bench_text(const BenchReport& r) {
  std::string s = fmt::format("{}: library '{}' on {} ({}), weights {}\n", shown(r.container), shown(r.library),
                              shown(r.backend), shown(r.machine.cpu), runtime::to_string(r.weights_mode));
  s += inputs_text(r.inputs, r.seed, r.checked, r.ok);
  s += fmt::format("CPU threads: {} ({})\n", r.threads.count,
                   r.threads.source == "option" ? "--threads" : r.threads.source);
  s += cold_text(r);
  s += "load (ms):";
  const json load = runtime::load_json(r.timings);
  for (const char* name : kLoadPhases) s += fmt::format(" {} {:.3f},", name, load.at(name).get<double>());
  s.back() = '\n';
  s += fmt::format("time to first result: {:.3f} ms from process start\n", r.time_to_first_result_ms);
  s += fmt::format("warm-up: {} runs; {} iterations in {:.3f} ms", r.warmup_runs, r.times_ms.size(), r.total_ms);
  s += r.repetitions > 1 ? fmt::format(" ({} repetitions)\n", r.repetitions) : std::string("\n");
  s += latency_text(r);
  s += latency_histogram(r.times_ms);
  s += fmt::format("throughput: {:.2f} runs/s; peak RSS {:.1f} MiB\n", r.throughput_per_s,
                   double(r.peak_rss_bytes) / (1 << 20));
  if (r.device) s += device_text(*r.device);
  s += fmt::format("sha256 {}; mpspack {}\n", r.container_sha256, r.mpspack_version);
  return s;
}

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (j.is_array() && !j.empty() && j[0].is_object()) {
    // Each repetition's statistics: one row a statistic, its values in order ("p50[] | 2.1, 2.0, 2.2").
    for (const auto& [k, first] : j[0].items()) {
      if (!first.is_number()) continue;
      std::string values;
      for (const json& e : j)
        values += (values.empty() ? "" : ", ") +
                  (e.contains(k) && e[k].is_number() ? fmt::format("{:.6g}", e[k].get<double>()) : "-");
      out.emplace_back(prefix + "[]." + k, values);
    }
  } else if (j.is_array()) {
    out.emplace_back(prefix, fmt::format("{} values", j.size()));
  } else if (j.is_string()) {
    out.emplace_back(prefix, j.get<std::string>());
  } else {
    out.emplace_back(prefix, j.dump());
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A value in a Markdown cell, as a CI job summary renders it: one line (printable), '|' kept inside the cell,
// and nothing that Markdown or the HTML it allows would take for markup (a path's '*' or '<').
std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : printable(s)) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (std::string_view("|\\`*[]").find(c) != std::string_view::npos) o += std::string("\\") + c;
    else o += c;
  }
  return o;
}

// The CSV report's columns, the same for every run whatever its options (a value a run lacks is empty), so that
// runs append into one table.
std::vector<std::string> csv_columns() {
  std::vector<std::string> c = {"container", "library", "backend",     "weights_mode", "cold",
                                "checked",   "ok",      "warmup_runs", "iterations"};
  for (const char* phase : kLoadPhases) c.push_back(std::string("load_ms.") + phase);
  c.push_back("time_to_first_result_ms");
  for (const char* stat : {"min", "mean", "p50", "p90", "p99", "max", "stddev"})
    c.push_back(std::string("latency_ms.") + stat);
  for (const char* k : {"total_ms", "throughput_per_s", "peak_rss_bytes", "device.name", "device.weights_upload.gbps",
                        "device.weights_upload.of_pinned_copy", "machine.cpu", "machine.cores", "machine.kernel",
                        "container_sha256", "mpspack_version"})
    c.push_back(k);
  // Added later, so at the end: a table begun before them keeps its columns in place.
  for (const char* k : {"inputs", "seed", "threads", "threads_source", "cpus_allowed", "repetitions"}) c.push_back(k);
  for (const char* stat : {"min", "mean", "p50", "p90", "p99", "max", "stddev"})
    c.push_back(std::string("latency_ms_stddev.") + stat);
  c.push_back("percentiles_ms");  // every extra percentile in one field: "p75=1.25;p99.9=2.5"
  c.push_back("percentiles_ms_stddev");
  return c;
}

// j at a dotted path ("latency_ms.p50"), as CSV shows it; "" when absent.
std::string csv_value(const json& j, const std::string& path) {
  const json* at = &j;
  for (size_t start = 0; start <= path.size();) {
    const size_t dot = std::min(path.find('.', start), path.size());
    const std::string key = path.substr(start, dot - start);
    if (!at->is_object() || !at->contains(key)) return {};
    at = &(*at)[key];
    start = dot + 1;
  }
  if (at->is_null()) return {};
  if (at->is_object()) {  // key=value;key=value, so that the column stays one whatever the keys
    std::string joined;
    for (const auto& [k, v] : at->items()) joined += (joined.empty() ? "" : ";") + k + "=" + v.dump();
    return joined;
  }
  return at->is_string() ? at->get<std::string>() : at->dump();
}

std::string csv_of(const json& j, bool header) {
  const std::vector<std::string> columns = csv_columns();
  std::string head, data;
  for (size_t i = 0; i < columns.size(); ++i) {
    head += (i ? "," : "") + csv_field(columns[i]);
    data += (i ? "," : "") + csv_field(csv_value(j, columns[i]));
  }
  return (header ? head + "\n" : "") + data + "\n";
}

// Markdown shows numbers rounded to 6 significant digits; the JSON and CSV reports keep every digit.
// A heading names the run, and blank lines close the table, so that reports appended to one job summary
// ($GITHUB_STEP_SUMMARY) stay separate tables. The keys are mpspack's own names, shown as they are.
std::string md_of(const BenchReport& r, const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string s = fmt::format("### mpspack run --bench: {} (library '{}', {})\n\n| metric | value |\n|---|---|\n",
                              md_cell(shown(r.container)), md_cell(shown(r.library)), md_cell(shown(r.backend)));
  for (const auto& [k, v] : rows) {
    std::string shown_value = v;
    if (v.find_first_of(".eE") != std::string::npos && v.find_first_not_of("0123456789.eE+-") == std::string::npos)
      shown_value = fmt::format("{:.6g}", std::stod(v));
    s += fmt::format("| {} | {} |\n", k, md_cell(shown_value));
  }
  return s + "\n";
}

// The numbers behind a comparison, one per line: what a CI system shows under a failed case.
std::string comparison_numbers(const runtime::OutputCheck& o) {
  const runtime::OutputReference& ref = *o.reference;
  const Comparison& c = ref.comparison;
  std::string s =
      fmt::format("reference: {}\ndtype: {}\nshape: {}\nrtol: {:g}\natol: {:g}\n", ref.name, dtype_name(o.tensor.dtype),
                  shape_string(o.tensor.shape), ref.tolerance.rtol, ref.tolerance.atol);
  if (!c.problem.empty()) return s + "problem: " + c.problem + "\n";
  s += fmt::format("mismatches: {} of {}\nmax_abs_error: {:.9g}\nmax_rel_error: {:.9g}\n", c.mismatches,
                   o.tensor.numel(), c.max_abs_error, c.max_rel_error);
  if (c.first_mismatch)
    s += fmt::format("first_mismatch: {} got {:.9g} expected {:.9g}\n", index_string(c.first_mismatch_index),
                     c.first_got, c.first_want);
  return s;
}

std::string case_name(const std::string& container, const std::string& library) {
  return fmt::format("{} library '{}'", container, library);
}

}  // namespace

JunitSuite run_junit(const VerifyReport& r) {
  JunitSuite suite{"mpspack run", {}, {{"inputs", r.inputs}, {"weights", runtime::to_string(r.weights_mode)}}};
  const double seconds = (runtime::load_total_ms(r.timings) + r.timings.first_run_ms) / 1000;
  for (const auto& o : r.outputs) {
    if (!o.reference) continue;
    JunitCase c{fmt::format("{} output {}", case_name(r.container, r.library), o.index), "mpspack.run", seconds};
    c.details = comparison_numbers(o);
    if (!o.reference->comparison.match) {
      c.outcome = JunitCase::Outcome::failure;
      c.type = "mismatch";
      c.message = comparison_text(o).substr(2);  // less its ": "
    }
    suite.cases.push_back(std::move(c));
  }
  if (suite.cases.empty()) {  // nothing had a reference: say so rather than report nothing
    JunitCase c{case_name(r.container, r.library), "mpspack.run", seconds};
    c.outcome = JunitCase::Outcome::skipped;
    c.message = "outputs not compared: no reference (--expect gives one)";
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

JunitSuite bench_junit(const BenchReport& r) {
  JunitCase c{case_name(r.container, r.library), "mpspack.bench", r.total_ms / 1000};
  c.details =
      fmt::format("backend: {}\nrepetitions: {}\niterations: {}\n", r.backend, r.repetitions, r.times_ms.size());
  c.details += fmt::format("latency_ms: p50 {:.6g}, p90 {:.6g}, p99 {:.6g}, mean {:.6g}, stddev {:.6g}\n",
                           r.latency.p50, r.latency.p90, r.latency.p99, r.latency.mean, r.latency.stddev);
  c.details += fmt::format("load_to_first_result_ms: {:.6g}\npeak_rss_bytes: {}\n",
                           runtime::load_total_ms(r.timings) + r.timings.first_run_ms, r.peak_rss_bytes);
  if (auto v = runtime::verdict(r); !v.ok()) {
    c.outcome = JunitCase::Outcome::failure;
    c.type = "mismatch";
    c.message = v.error().message;
  } else if (!r.checked) {
    c.details += "outputs not compared: no reference\n";
  }
  return {"mpspack run --bench", {c}, {{"backend", r.backend}, {"container_sha256", r.container_sha256}}};
}

JunitSuite error_suite(const std::string& suite, const std::string& classname, const std::string& container,
                       const Error& e) {
  JunitCase c{container, classname, 0};
  c.outcome = JunitCase::Outcome::error;
  c.message = e.message;
  c.type = "error";
  c.details = e.message + "\n";
  return {suite, {c}, {}};
}

std::string run_text(const VerifyReport& r) {
  std::string s;
  for (const auto& o : r.outputs) {
    s += fmt::format("output {}: {} {}", o.index, dtype_name(o.tensor.dtype), shape_string(o.tensor.shape));
    if (!o.written.empty()) s += fmt::format(" -> {}", printable(o.written));
    if (o.reference) s += comparison_text(o);
    s += "\n";
  }
  if (r.inputs == "seed") s += inputs_text(r.inputs, r.seed, r.checked(), r.ok());
  const runtime::PhaseTimings& t = r.timings;
  s += cformat("%s: library '%s' (%s): loaded in %.2f ms, first run %.2f ms\n", printable(r.container).c_str(),
               printable(r.library).c_str(), runtime::to_string(r.weights_mode), runtime::load_total_ms(t),
               t.first_run_ms);
  return s;
}

std::string bench_rendered(const BenchReport& r, const std::string& export_times, const std::string& format,
                           bool csv_header) {
  if (format == "text") return bench_text(r);
  const json j = utf8_json(runtime::bench_json(r, export_times));
  if (format == "json") return j.dump(2) + "\n";
  if (format == "jsonl") return j.dump() + "\n";
  if (format == "csv") return csv_of(j, csv_header);
  std::vector<std::pair<std::string, std::string>> rows;
  flatten(j, "", rows);
  return md_of(r, rows);
}

}  // namespace mpspack::cli
