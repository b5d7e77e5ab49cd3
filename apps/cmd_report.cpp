// `mpspack report RUN...`: saved `run --bench` reports (--format json, or jsonl with one run per line, appended
// from several runs) side by side in one Markdown table, each run's latency against the first's; with
// --baseline, each run against the baseline's runs with a verdict that knows the noise, and exit 1 when one is
// slower by more than --max-slowdown (report_gate.hpp has the statistics).
#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/json_fields.hpp"
#include "report_gate.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace mpspack::cli {
namespace {

using nlohmann::json;

// A report file is a few KiB per run; anything this large is not one.
constexpr uintmax_t kMaxReportBytes = uintmax_t(64) << 20;

struct ReportArgs {
  std::vector<std::string> files;
  std::vector<std::string> baseline;  // --baseline, repeatable: its runs form one set
  double max_slowdown_percent = 10;
  std::string metric = "p50";
};

struct Run {
  std::string source;  // FILE or FILE:LINE
  json report;
};

// The fields the table shows, each checked before anything is printed.
Status check_run(const Run& r) {
  const json& j = r.report;
  auto number_at = [&](const char* a, const char* b) {
    return j.contains(a) && j[a].is_object() && j[a].contains(b) && j[a][b].is_number();
  };
  const int64_t version = integer_field(j, "schema_version", 0);
  if ((version != 1 && version != 2) || !j.contains("container") || !j["container"].is_string() ||
      !number_at("latency_ms", "p50") || !number_at("latency_ms", "p90") ||
      !number_at("load_ms", "load_to_first_result_ms"))
    return make_error(Error::Kind::Invalid,
                      "{}: not a run --bench report (schema_version 1 or 2, container, "
                      "latency_ms, load_ms)",
                      r.source);
  return {};
}

Result<std::vector<Run>> read_runs(const std::string& file) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec) return make_error(Error::Kind::Io, "{}: {}", file, ec.message());
  if (size > kMaxReportBytes)
    return make_error(Error::Kind::Invalid, "{}: {} bytes, more than a report holds", file, size);
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return make_error(Error::Kind::Io, "{}: cannot read", file);
  std::vector<Run> runs;
  if (json whole = json::parse(text.str(), nullptr, false); !whole.is_discarded()) {
    runs.push_back({file, std::move(whole)});  // one --format json report
  } else {
    std::string line;
    for (size_t n = 1; std::getline(text, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json j = json::parse(line, nullptr, false);
      runs.push_back({fmt::format("{}:{}", file, n), j.is_discarded() ? json() : std::move(j)});
    }
  }
  for (const Run& r : runs) MPK_CHECK(check_run(r));
  if (runs.empty()) return make_error(Error::Kind::Invalid, "{}: holds no run --bench report", file);
  return runs;
}

// Text for a Markdown cell: escaped for the terminal, '|' kept inside the cell.
std::string md_text(const std::string& s) {
  std::string out;
  for (char c : printable(s)) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string cell(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? md_text(j[key].get<std::string>()) : std::string("-");
}

std::string table(const std::vector<Run>& runs) {
  std::string s = "| run | container | backend | weights | load to first result ms | p50 ms | p90 ms | p50 / run 1 |\n"
                  "|---|---|---|---|---|---|---|---|\n";
  const double first = runs.front().report["latency_ms"]["p50"].get<double>();
  for (size_t i = 0; i < runs.size(); ++i) {
    const json& j = runs[i].report;
    const double p50 = j["latency_ms"]["p50"].get<double>();
    s += fmt::format("| {} | {} | {} | {} | {:.3f} | {:.4f} | {:.4f} | {} |\n", i + 1,
                     md_text(std::filesystem::path(j["container"].get<std::string>()).filename().string()),
                     cell(j, "backend"), cell(j, "weights_mode"), j["load_ms"]["load_to_first_result_ms"].get<double>(),
                     p50, j["latency_ms"]["p90"].get<double>(),
                     first > 0 ? fmt::format("{:.2f}x", p50 / first) : std::string("-"));
  }
  return s;
}

// --- --baseline

// What must be the same for two runs to be compared: one container, on one machine, backend and thread count.
Status check_identity_fields(const Run& r) {
  const json& j = r.report;
  const bool ok = j.contains("container_sha256") && j["container_sha256"].is_string() && j.contains("backend") &&
                  j["backend"].is_string() && j.contains("threads") && j["threads"].is_number_unsigned() &&
                  j.contains("machine") && j["machine"].is_object();
  if (!ok)
    return make_error(Error::Kind::Invalid,
                      "{}: not a run --bench report --baseline can compare (container_sha256, "
                      "machine, backend, threads)",
                      r.source);
  return {};
}

// A field as text for comparing and showing: a string as it is, any other value as JSON, "?" when absent (the
// reports are untrusted input: nothing here assumes a type the check above did not).
std::string field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "?";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// The machine as the report describes it: the CPU, its cores and architecture, and the GPU when there was one.
std::string machine_of(const json& j) {
  const json& m = j["machine"];
  std::string s = fmt::format("{}, {} cores, {}", field(m, "cpu"), field(m, "cores"), field(m, "arch"));
  if (j.contains("device")) s += ", " + field(j["device"], "name");
  return printable(s);
}

// The one line refusing `r` against the baseline's first run `b`, or nullopt when they may be compared.
std::optional<Error> mismatch(const Run& r, const Run& b) {
  const json &x = r.report, &y = b.report;
  auto refuse = [&](const char* what, const std::string& ours, const std::string& theirs) {
    return make_error(Error::Kind::Invalid,
                      "{}: another {} than the baseline's ({} against {} in {}): only runs of "
                      "one container on one machine, backend and thread count are compared",
                      r.source, what, ours, theirs, b.source);
  };
  const std::string sha_x = field(x, "container_sha256"), sha_y = field(y, "container_sha256");
  if (sha_x != sha_y)
    return refuse("container", "sha256 " + printable(sha_x.substr(0, 16)) + "...",
                  printable(sha_y.substr(0, 16)) + "...");
  if (machine_of(x) != machine_of(y)) return refuse("machine", machine_of(x), machine_of(y));
  if (x["backend"] != y["backend"])
    return refuse("backend", printable(field(x, "backend")), printable(field(y, "backend")));
  if (x["threads"] != y["threads"])
    return refuse("thread count", field(x, "threads") + " threads", field(y, "threads"));
  return std::nullopt;
}

// The figures of `metric` a run gives: each repetition's p50 or p90 (a schema_version 1 report has only their
// mean: one figure), or its one load time or peak RSS.
Result<std::vector<double>> figures(const Run& r, const std::string& metric) {
  const json& j = r.report;
  std::vector<double> v;
  if (metric == "load_to_first_result") {
    v.push_back(j["load_ms"]["load_to_first_result_ms"].get<double>());
  } else if (metric == "peak_rss") {
    if (j.contains("peak_rss_bytes") && j["peak_rss_bytes"].is_number()) v.push_back(j["peak_rss_bytes"].get<double>());
  } else if (j.contains("latency_ms_repetitions") && j["latency_ms_repetitions"].is_array()) {
    for (const json& rep : j["latency_ms_repetitions"])
      if (rep.is_object() && rep.contains(metric) && rep[metric].is_number()) v.push_back(rep[metric].get<double>());
      else
        return make_error(Error::Kind::Invalid, "{}: latency_ms_repetitions: an element without {}", r.source, metric);
  } else {
    v.push_back(j["latency_ms"][metric].get<double>());
  }
  if (v.empty()) return make_error(Error::Kind::Invalid, "{}: no {} figure", r.source, metric);
  for (double x : v)
    if (!(x > 0) || !std::isfinite(x))
      return make_error(Error::Kind::Invalid, "{}: a {} figure of {}, not a positive number", r.source, metric, x);
  return v;
}

struct GateRow {
  const Run* run;
  GateVerdict verdict;
};

// The baseline's runs and each run's checked against the first baseline run, then each run's verdict.
Result<std::vector<GateRow>> gate_rows(const std::vector<Run>& base, const std::vector<Run>& runs, const ReportArgs& a,
                                       std::vector<double>& base_figures) {
  for (const auto* side : {&base, &runs})
    for (const Run& r : *side) {
      MPK_CHECK(check_identity_fields(r));
      if (auto e = mismatch(r, base.front())) return *e;
    }
  for (const Run& b : base) {
    auto f = figures(b, a.metric);
    if (!f.ok()) return f.error();
    base_figures.insert(base_figures.end(), f->begin(), f->end());
  }
  std::vector<GateRow> rows;
  for (const Run& r : runs) {
    auto f = figures(r, a.metric);
    if (!f.ok()) return f.error();
    rows.push_back({&r, gate(*f, base_figures, a.max_slowdown_percent / 100)});
  }
  return rows;
}

std::string row_cells(const std::string& label, const json& j) {
  return fmt::format("| {} | {} | {} | {} | {:.4g} | {:.4g} | {:.4g} |", label,
                     md_text(std::filesystem::path(j["container"].get<std::string>()).filename().string()),
                     cell(j, "backend"), cell(j, "weights_mode"), j["load_ms"]["load_to_first_result_ms"].get<double>(),
                     j["latency_ms"]["p50"].get<double>(), j["latency_ms"]["p90"].get<double>());
}

std::string gate_table(const std::vector<Run>& base, const std::vector<GateRow>& rows, const std::string& metric) {
  std::string s =
      fmt::format("| run | container | backend | weights | load to first result ms | p50 ms | p90 ms | {} / baseline | "
                  "{:g}% interval | verdict |\n|---|---|---|---|---|---|---|---|---|---|\n",
                  metric, 100 * kGateConfidence);
  for (size_t i = 0; i < base.size(); ++i)
    s += row_cells(fmt::format("baseline {}", i + 1), base[i].report) + " - | - | baseline |\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const GateVerdict& v = rows[i].verdict;
    const std::string interval =
        v.interval ? fmt::format("{:.3f}x..{:.3f}x", v.interval->low, v.interval->high) : std::string("-");
    s += row_cells(std::to_string(i + 1), rows[i].run->report) +
         fmt::format(" {:.3f}x | {} | {} |\n", v.ratio, interval, v.verdict);
  }
  return s;
}

// Below the table: what was compared and how, then the gate's outcome.
std::string gate_summary(const std::vector<GateRow>& rows, size_t base_figures, const ReportArgs& a) {
  size_t failed = 0;
  for (const GateRow& r : rows) failed += r.verdict.fails;
  std::string s = fmt::format(
      "\n{}: {} baseline figure{}. A run with two or more figures: Mann-Whitney U, the Hodges-Lehmann ratio and its "
      "{:g}% interval; it fails when over {:g}% slower with the interval above 1. One figure on a side: a plain "
      "{:g}% threshold.\n\n",
      a.metric, base_figures, base_figures == 1 ? "" : "s", 100 * kGateConfidence, a.max_slowdown_percent,
      a.max_slowdown_percent);
  s += failed ? fmt::format("gate: FAILED: {} of {} runs slower than the baseline by more than {:g}%\n", failed,
                            rows.size(), a.max_slowdown_percent)
              : fmt::format("gate: passed: {} run{} within {:g}% of the baseline or within noise\n", rows.size(),
                            rows.size() == 1 ? "" : "s", a.max_slowdown_percent);
  return s;
}

Result<std::vector<Run>> read_all(const std::vector<std::string>& files) {
  std::vector<Run> runs;
  for (const std::string& file : files) {
    auto read = read_runs(file);
    if (!read.ok()) return read.error();
    for (Run& r : *read) runs.push_back(std::move(r));
  }
  return runs;
}

int run_gate(const ReportArgs& a, const std::vector<Run>& runs) {
  auto base = read_all(a.baseline);
  if (!base.ok()) return fail(base.error());
  std::vector<double> base_figures;
  auto rows = gate_rows(*base, runs, a, base_figures);
  if (!rows.ok()) return fail(rows.error());
  std::fputs((gate_table(*base, *rows, a.metric) + gate_summary(*rows, base_figures.size(), a)).c_str(), stdout);
  std::fflush(stdout);
  bool failed = false;
  for (const GateRow& r : *rows) {
    if (!r.verdict.fails) continue;
    failed = true;
    const std::string interval =
        r.verdict.interval ? fmt::format("{:.3f}x..{:.3f}x", r.verdict.interval->low, r.verdict.interval->high)
                           : "none: " + r.verdict.plain_reason;
    std::fprintf(stderr, "mpspack: %s: %s %.3fx the baseline's (interval %s), more than --max-slowdown %g%%\n",
                 printable(r.run->source).c_str(), a.metric.c_str(), r.verdict.ratio, interval.c_str(),
                 a.max_slowdown_percent);
  }
  return failed ? kCheckFailed : kOk;
}

int run_report(const ReportArgs& a) {
  auto runs = read_all(a.files);
  if (!runs.ok()) return fail(runs.error());
  if (!a.baseline.empty()) return run_gate(a, *runs);
  std::fputs(table(*runs).c_str(), stdout);
  return kOk;
}

// "10%" or "10": --max-slowdown's percent sign is optional.
CLI::Validator percent_sign() {
  return CLI::Validator(
      [](std::string& s) {
        if (!s.empty() && s.back() == '%') s.pop_back();
        return std::string();
      },
      "");
}

}  // namespace

Action add_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  app.add_option("runs", a->files, "Saved run --bench reports: --format json files, or jsonl (one run per line)")
      ->required();
  CLI::Option* baseline =
      app.add_option("--baseline", a->baseline,
                     "Compare each run with these saved runs (a json or jsonl file; repeatable: one set), and exit 1 "
                     "when one is slower by more than --max-slowdown beyond noise")
          ->allow_extra_args(false)  // one file each time: the runs stay the runs
          ->check(non_empty());
  app.add_option("--max-slowdown", a->max_slowdown_percent,
                 "--baseline: the slowdown in percent a run may have (default 10; '10%' or '10')")
      ->transform(percent_sign())
      ->check(real_number(0, 1000, Excluded::both))
      ->needs(baseline);
  app.add_option("--metric", a->metric,
                 "--baseline: what is compared: p50 (default), p90, load_to_first_result, "
                 "peak_rss")
      ->check(CLI::IsMember({"p50", "p90", "load_to_first_result", "peak_rss"}))
      ->needs(baseline);
  return [a] { return run_report(*a); };
}

}  // namespace mpspack::cli
