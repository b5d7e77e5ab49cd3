#include "measurements.hpp"

#include "mpspack/file.hpp"

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
#include <numeric>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace mpspack::runtime {
namespace {

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
  for (int i = 3; i <= 22 && rest >> field; ++i) {}
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

// The population mean and standard deviation.
std::pair<double, double> mean_and_stddev(const std::vector<double>& v) {
  if (v.empty()) return {0, 0};
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return {mean, std::sqrt(var / double(v.size()))};
}

// A LatencyStats as a list of numbers (the seven, then the extra percentiles) and back: what over_repetitions()
// takes the mean and spread of, one statistic at a time.
std::vector<double> statistics_of(const LatencyStats& l) {
  std::vector<double> v = {l.min, l.mean, l.p50, l.p90, l.p99, l.max, l.stddev};
  v.insert(v.end(), l.percentiles.begin(), l.percentiles.end());
  return v;
}
LatencyStats from_statistics(const std::vector<double>& v) {
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], std::vector<double>(v.begin() + 7, v.end())};
}

std::string read_first_line_with(const char* path, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return line;
  return {};
}

std::string os_name(const utsname& u) {
  std::string os = read_first_line_with("/etc/os-release", "PRETTY_NAME=");
  if (os.empty()) return u.sysname;
  os = os.substr(12);
  if (os.size() >= 2 && os.front() == '"') os = os.substr(1, os.size() - 2);
  return os;
}

// The fraction of `fd`'s pages resident now, by mincore() of a fresh mapping; none when that fails.
std::optional<double> resident_fraction(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) return std::nullopt;
  void* p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return std::nullopt;
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((size_t(st.st_size) + page - 1) / page);
  std::optional<double> fraction;
  if (::mincore(p, size_t(st.st_size), vec.data()) == 0) {
    size_t resident = 0;
    for (unsigned char c : vec) resident += c & 1;
    fraction = double(resident) / double(vec.size());
  }
  ::munmap(p, size_t(st.st_size));
  return fraction;
}

}  // namespace

LatencyStats latency_stats(std::vector<double> ms, const std::vector<double>& extra_percentiles) {
  if (ms.empty()) return {0, 0, 0, 0, 0, 0, 0, std::vector<double>(extra_percentiles.size(), 0.0)};
  std::sort(ms.begin(), ms.end());
  const auto [mean, stddev] = mean_and_stddev(ms);
  LatencyStats l{ms.front(), mean, percentile(ms, 50), percentile(ms, 90), percentile(ms, 99), ms.back(), stddev, {}};
  for (double p : extra_percentiles) l.percentiles.push_back(percentile(ms, p));
  return l;
}

LatencyOverRepetitions over_repetitions(const std::vector<LatencyStats>& repetitions) {
  LatencyOverRepetitions out;
  if (repetitions.empty()) return out;
  std::vector<std::vector<double>> columns;  // one per statistic, one value per repetition
  for (const LatencyStats& l : repetitions) {
    const std::vector<double> row = statistics_of(l);
    columns.resize(row.size());
    for (size_t i = 0; i < row.size(); ++i) columns[i].push_back(row[i]);
  }
  std::vector<double> means, stddevs;
  for (const auto& c : columns) {
    const auto [mean, stddev] = mean_and_stddev(c);
    means.push_back(mean);
    stddevs.push_back(stddev);
  }
  out.mean = from_statistics(means);
  out.stddev = from_statistics(stddevs);
  return out;
}

double ms_since_process_start() {
  return g_process_clock.exec_to_init_ms +
         std::chrono::duration<double, std::milli>(Clock::now() - g_process_clock.init).count();
}

namespace pipeline {

MachineInfo machine_info() {
  std::string cpu = read_first_line_with("/proc/cpuinfo", "model name");
  if (auto p = cpu.find(':'); p != std::string::npos) cpu = cpu.substr(p + 1);
  cpu.erase(0, cpu.find_first_not_of(" \t"));
  utsname u{};
  ::uname(&u);
  return {cpu.empty() ? std::string(u.machine) : cpu,
          std::max(1u, std::thread::hardware_concurrency()),
          os_name(u),
          fmt::format("{} {}", u.sysname, u.release),
          u.machine,
          std::string(cpu_blas_kernels())};
}

uint64_t peak_rss_bytes() {
  std::string line = read_first_line_with("/proc/self/status", "VmHWM:");
  if (!line.empty()) {
    try {
      return uint64_t(std::stoull(line.substr(6))) * 1024;  // kB
    } catch (...) {}
  }
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return uint64_t(ru.ru_maxrss) * 1024;  // Linux: kilobytes
}

ColdCache drop_from_page_cache(const std::string& path) {
  ColdCache c;
  auto opened = open_input_file(path);  // a FIFO is refused here, then by the open that reports it
  if (!opened.ok()) return c;
  const int fd = *opened;
  // Dirty pages are not dropped: write them back first (a no-op for a container already on disk).
  ::fdatasync(fd);
  c.ok = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  c.resident_fraction_after = resident_fraction(fd);
  ::close(fd);
  return c;
}

}  // namespace pipeline
}  // namespace mpspack::runtime
