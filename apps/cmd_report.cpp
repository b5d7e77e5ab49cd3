// `mpspack report RUN...`: saved `run --bench` reports (--format json, or jsonl with one run per line, appended
// from several runs) side by side in one Markdown table, each run's latency against the first's.
#include "cli.hpp"
#include "commands.hpp"

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
  if (!j.is_object() || j.value("schema_version", 0) != 1 || !j.contains("container") || !j["container"].is_string() ||
      !number_at("latency_ms", "p50") || !number_at("latency_ms", "p90") ||
      !number_at("load_ms", "load_to_first_result_ms"))
    return make_error(Error::Kind::Invalid, "{}: not a run --bench report (schema_version 1, container, latency_ms, "
                                            "load_ms)", r.source);
  return {};
}

Result<std::vector<Run>> read_runs(const std::string& file) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec) return make_error(Error::Kind::Io, "{}: {}", file, ec.message());
  if (size > kMaxReportBytes) return make_error(Error::Kind::Invalid, "{}: {} bytes, more than a report holds", file, size);
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
  std::string s =
      "| run | container | backend | weights | load to first result ms | p50 ms | p90 ms | p50 / run 1 |\n"
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

int run_report(const ReportArgs& a) {
  std::vector<Run> runs;
  for (const std::string& file : a.files) {
    auto read = read_runs(file);
    if (!read.ok()) return fail(read.error());
    for (Run& r : *read) runs.push_back(std::move(r));
  }
  std::fputs(table(runs).c_str(), stdout);
  return kOk;
}

}  // namespace

Action add_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  app.add_option("runs", a->files, "Saved run --bench reports: --format json files, or jsonl (one run per line)")
      ->required();
  return [a] { return run_report(*a); };
}

}  // namespace mpspack::cli
