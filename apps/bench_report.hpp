// `mpspack run --bench`: the pieces that are not the model itself: statistics over per-iteration
// times, the machine, peak memory, dropping a file from the page cache, the container's SHA-256,
// the process clock, and the report in text, JSON, CSV or Markdown (docs/CLI.md, ## run).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mpspack::cli::bench {

// min mean p50 p90 p99 max stddev (population) of `ms`; percentiles by linear interpolation.
nlohmann::json latency_stats(std::vector<double> ms);

// CPU model (/proc/cpuinfo), logical cores, OS (/etc/os-release PRETTY_NAME, else uname), kernel.
nlohmann::json machine_info();

// Peak resident set of this process in bytes (VmHWM, else getrusage ru_maxrss).
uint64_t peak_rss_bytes();

// posix_fadvise(DONTNEED) on the whole file, then mincore() of a fresh mapping to see how much of
// it is still resident. {"attempted", "ok" (the call succeeded), "resident_fraction_after"}.
nlohmann::json drop_from_page_cache(const std::string& path);

// Milliseconds since this process started: from a clock read during static initialisation (before
// main), plus the time from exec to that read taken from /proc/self/stat starttime (10 ms ticks).
double ms_since_process_start();

// Renders the report. format: text, json, csv (a header line and one data line, nested keys joined
// with '.'), md (a two-column table).
std::string render(const nlohmann::json& report, const std::string& format);

}  // namespace mpspack::cli::bench
