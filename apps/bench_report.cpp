#include "bench_report.hpp"

#include "cli.hpp"
#include "mpspack/file.hpp"
#include "mpspack/runtime/model.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <thread>

namespace mpspack::cli::bench {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double boottime_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// Milliseconds from exec to now by /proc/self/stat's starttime (field 22, clock ticks after boot).
double exec_to_now_ms() {
  std::ifstream f("/proc/self/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto close = s.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return 0;
  std::istringstream rest(s.substr(close + 2));
  std::string field;
  // After ')': field 3 (state) is the first; starttime is field 22.
  for (int i = 3; i <= 22 && rest >> field; ++i) {
  }
  const long tck = ::sysconf(_SC_CLK_TCK);
  if (field.empty() || tck <= 0) return 0;
  const double start_ms = std::stod(field) * 1e3 / double(tck);
  return std::max(0.0, boottime_ms() - start_ms);
}

struct ProcessClock {
  Clock::time_point init = Clock::now();
  double exec_to_init_ms = exec_to_now_ms();
};
const ProcessClock g_process_clock;  // read during static initialisation, before main

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double pos = p / 100.0 * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - double(lo));
}

std::string read_first_line_with(const char* path, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return line;
  return {};
}

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
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

std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

}  // namespace

json latency_stats(std::vector<double> ms) {
  json j = json::object();
  if (ms.empty()) {
    for (const char* k : {"min", "mean", "p50", "p90", "p99", "max", "stddev"}) j[k] = 0.0;
    return j;
  }
  std::sort(ms.begin(), ms.end());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size());
  double var = 0;
  for (double v : ms) var += (v - mean) * (v - mean);
  var /= double(ms.size());
  j["min"] = ms.front();
  j["mean"] = mean;
  j["p50"] = percentile(ms, 50);
  j["p90"] = percentile(ms, 90);
  j["p99"] = percentile(ms, 99);
  j["max"] = ms.back();
  j["stddev"] = std::sqrt(var);
  return j;
}

json machine_info() {
  std::string cpu = read_first_line_with("/proc/cpuinfo", "model name");
  if (auto p = cpu.find(':'); p != std::string::npos) cpu = cpu.substr(p + 1);
  cpu.erase(0, cpu.find_first_not_of(" \t"));
  utsname u{};
  ::uname(&u);
  std::string os = read_first_line_with("/etc/os-release", "PRETTY_NAME=");
  if (!os.empty()) {
    os = os.substr(12);
    if (os.size() >= 2 && os.front() == '"') os = os.substr(1, os.size() - 2);
  } else {
    os = u.sysname;
  }
  return {{"cpu", cpu.empty() ? std::string(u.machine) : cpu},
          {"cores", std::max(1u, std::thread::hardware_concurrency())},
          {"os", os},
          {"kernel", fmt::format("{} {}", u.sysname, u.release)},
          {"arch", u.machine},
          {"blas_kernels", std::string(runtime::cpu_blas_kernels())}};
}

uint64_t peak_rss_bytes() {
  std::string line = read_first_line_with("/proc/self/status", "VmHWM:");
  if (!line.empty()) {
    try {
      return uint64_t(std::stoull(line.substr(6))) * 1024;  // kB
    } catch (...) {
    }
  }
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return uint64_t(ru.ru_maxrss) * 1024;  // Linux: kilobytes
}

json drop_from_page_cache(const std::string& path) {
  json j = {{"attempted", true}, {"ok", false}, {"resident_fraction_after", nullptr}};
  auto opened = open_input_file(path);  // a FIFO is refused here, then by the open that reports it
  if (!opened.ok()) return j;
  const int fd = *opened;
  // Dirty pages are not dropped: write them back first (a no-op for a container already on disk).
  ::fdatasync(fd);
  j["ok"] = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  struct stat st{};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    void* p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
      const size_t page = size_t(::sysconf(_SC_PAGESIZE));
      std::vector<unsigned char> vec((size_t(st.st_size) + page - 1) / page);
      if (::mincore(p, size_t(st.st_size), vec.data()) == 0) {
        size_t resident = 0;
        for (unsigned char c : vec) resident += c & 1;
        j["resident_fraction_after"] = double(resident) / double(vec.size());
      }
      ::munmap(p, size_t(st.st_size));
    }
  }
  ::close(fd);
  return j;
}

double ms_since_process_start() {
  return g_process_clock.exec_to_init_ms +
         std::chrono::duration<double, std::milli>(Clock::now() - g_process_clock.init).count();
}

std::string render(const json& r, const std::string& format) {
  if (format == "json") return r.dump(2) + "\n";
  std::vector<std::pair<std::string, std::string>> rows;
  flatten(r, "", rows);
  if (format == "csv") {
    std::string head, data;
    for (size_t i = 0; i < rows.size(); ++i) {
      head += (i ? "," : "") + csv_field(rows[i].first);
      data += (i ? "," : "") + csv_field(rows[i].second);
    }
    return head + "\n" + data + "\n";
  }
  if (format == "md") {
    std::string s = "| metric | value |\n|---|---|\n";
    for (const auto& [k, v] : rows) s += fmt::format("| {} | {} |\n", md_cell(k), md_cell(v));
    return s;
  }
  // text
  const json& l = r.at("latency_ms");
  const json& load = r.at("load_ms");
  std::string s;
  auto text = [&](const json& v) { return printable(v.get<std::string>()); };
  s += fmt::format("{}: library '{}' on {} ({}), weights {}\n", text(r.at("container")), text(r.at("library")),
                   text(r.at("backend")), text(r.at("machine").at("cpu")), text(r.at("weights_mode")));
  s += fmt::format("cold: {}", r.at("cold").get<bool>() ? "yes" : "no");
  if (r.contains("cold_cache")) {
    const json& c = r.at("cold_cache");
    s += fmt::format(" (posix_fadvise DONTNEED {}; resident after: {})", c.at("ok").get<bool>() ? "ok" : "failed",
                     c.at("resident_fraction_after").is_null()
                         ? std::string("unknown")
                         : fmt::format("{:.1f}%", 100 * c.at("resident_fraction_after").get<double>()));
  }
  s += "\nload (ms):";
  for (const auto& [k, v] : load.items()) s += fmt::format(" {} {:.3f},", k, v.get<double>());
  s.pop_back();
  s += fmt::format("\ntime to first result: {:.3f} ms from process start\n",
                   r.at("time_to_first_result_ms").get<double>());
  s += fmt::format("warm-up: {} runs; {} iterations in {:.3f} ms\n", r.at("warmup_runs").get<uint64_t>(),
                   r.at("iterations").get<uint64_t>(), r.at("total_ms").get<double>());
  s += fmt::format(
      "latency (ms): min {:.4f}  mean {:.4f}  p50 {:.4f}  p90 {:.4f}  p99 {:.4f}  max {:.4f}  stddev {:.4f}\n",
      l.at("min").get<double>(), l.at("mean").get<double>(), l.at("p50").get<double>(), l.at("p90").get<double>(),
      l.at("p99").get<double>(), l.at("max").get<double>(), l.at("stddev").get<double>());
  s += fmt::format("throughput: {:.2f} runs/s; peak RSS {:.1f} MiB\n", r.at("throughput_per_s").get<double>(),
                   double(r.at("peak_rss_bytes").get<uint64_t>()) / (1 << 20));
  if (r.contains("device")) {
    const json& d = r.at("device");
    s += fmt::format("device: {}; memory used {:.1f} of {:.1f} GiB, pool peak {:.1f} MiB\n", text(d.at("name")),
                     double(d.at("memory_used_bytes").get<uint64_t>()) / (1 << 30),
                     double(d.at("memory_total_bytes").get<uint64_t>()) / (1 << 30),
                     double(d.at("pool_peak_bytes").get<uint64_t>()) / (1 << 20));
    s += fmt::format("host to device, plain copy of {:.0f} MiB: pinned {:.1f} GB/s, pageable {:.1f} GB/s\n",
                     double(d.at("h2d_copy_bytes").get<uint64_t>()) / (1 << 20), d.at("h2d_pinned_gbps").get<double>(),
                     d.at("h2d_pageable_gbps").get<double>());
    if (d.contains("weights_upload")) {
      const json& u = d.at("weights_upload");
      s += fmt::format("weight upload: {:.1f} MiB in {:.1f} ms = {:.1f} GB/s ({:.0f}% of the pinned copy)\n",
                       double(u.at("bytes").get<uint64_t>()) / (1 << 20), u.at("ms").get<double>(),
                       u.at("gbps").get<double>(), 100 * u.at("of_pinned_copy").get<double>());
    }
  }
  s += fmt::format("sha256 {}; mpspack {}\n", r.at("container_sha256").get<std::string>(),
                   r.at("mpspack_version").get<std::string>());
  return s;
}

}  // namespace mpspack::cli::bench
