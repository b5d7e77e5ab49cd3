// How `run` and `run --bench` show their reports (docs/CLI.md, ## run): text and JSON for run; text, JSON, JSON
// lines (one run per line), CSV (fixed columns, nested keys joined with '.', one line per run) and Markdown (a
// two-column table) for --bench.
// Every key of both JSON reports is written once, in libpack (mpspack/runtime/report_json.hpp).
#pragma once

#include "junit.hpp"
#include "mpspack/runtime/bench.hpp"
#include "mpspack/runtime/verify.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace mpspack::cli {

// One line per output (and how it compared), then the load line. (The JSON reports: runtime/report_json.hpp.)
std::string run_text(const runtime::VerifyReport& r);

// format: text, json, jsonl, csv, md. export_times: the file the iteration times went to, "" for none.
// csv_header: CSV starts with its header line (not when appending to a table).
std::string bench_rendered(const runtime::BenchReport& r, const std::string& export_times, const std::string& format,
                           bool csv_header = true);

// --junit: one test case per output compared (run), or one per container and library with its latency figures
// (run --bench); `error_suite` is the one errored case of a run that could not check (exit 2).
JunitSuite run_junit(const runtime::VerifyReport& r);
JunitSuite bench_junit(const runtime::BenchReport& r);
JunitSuite error_suite(const std::string& suite, const std::string& classname, const std::string& container,
                       const Error& e);

}  // namespace mpspack::cli
