#include "latency_histogram.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mpspack::cli {

std::string latency_histogram(const std::vector<double>& ms, size_t rows, size_t width) {
  if (ms.empty() || rows == 0) return {};
  const auto [lo_it, hi_it] = std::minmax_element(ms.begin(), ms.end());
  const double lo = *lo_it, span = *hi_it - *lo_it;
  rows = span > 0 ? std::min(rows, ms.size()) : 1;
  std::vector<size_t> counts(rows, 0);
  for (double v : ms) {
    const double at = span > 0 ? (v - lo) / span * double(rows) : 0.0;
    ++counts[std::min(rows - 1, size_t(std::max(0.0, at)))];
  }
  const size_t fullest = *std::max_element(counts.begin(), counts.end());
  std::string s = fmt::format("histogram (ms, {} runs):\n", ms.size());
  for (size_t i = 0; i < rows; ++i) {
    const double from = lo + span * double(i) / double(rows), to = lo + span * double(i + 1) / double(rows);
    const size_t bar = size_t(std::lround(double(width) * double(counts[i]) / double(fullest)));
    s += fmt::format("  {:>10.4f} - {:<10.4f} |{:<{}}| {}\n", from, to, std::string(bar, '#'), width, counts[i]);
  }
  return s;
}

}  // namespace mpspack::cli
