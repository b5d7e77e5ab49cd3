// Mann-Whitney U's interval for a ratio, and the verdict of `mpspack report --baseline` (report_gate.hpp).
#include "report_gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mpspack::cli {
namespace {

// Past this many figures on a side U's exact distribution is replaced by its normal approximation (the exact
// count costs n * m * n * m additions, and the approximation is within one rank there).
constexpr uint64_t kExactLimit = 50;

// How often each value of U occurs among the C(n+m, n) orderings of n and m figures: the coefficients of the
// Gaussian binomial [n+m choose n]_q, built by [j+k choose k] = [j+k-1 choose k-1] + q^k [j+k-1 choose k] so that
// only positive numbers are added (subtracting would lose the small tail counts to rounding).
std::vector<double> u_counts(uint64_t n, uint64_t m) {
  std::vector<std::vector<double>> g(n + 1, std::vector<double>{1.0});  // j = 0: [k choose k] = 1
  for (uint64_t j = 1; j <= m; ++j) {
    for (uint64_t k = 1; k <= n; ++k) {
      std::vector<double> next(j * k + 1, 0.0);
      for (size_t u = 0; u < g[k - 1].size(); ++u) next[u] += g[k - 1][u];  // already for this j
      for (size_t u = 0; u < g[k].size(); ++u) next[u + k] += g[k][u];      // still for j - 1
      g[k] = std::move(next);
    }
  }
  return g[n];
}

double median_of(std::vector<double> v) {
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  if (v.size() % 2) return v[mid];
  const double upper = v[mid];
  return (*std::max_element(v.begin(), v.begin() + long(mid)) + upper) / 2;
}

// The k-th smallest (1-based) of v, which it reorders.
double kth(std::vector<double>& v, uint64_t k) {
  std::nth_element(v.begin(), v.begin() + long(k - 1), v.end());
  return v[k - 1];
}

std::string percent(double fraction) { return fmt::format("{:g}%", 100 * fraction); }

}  // namespace

uint64_t rank_interval_rank(uint64_t n, uint64_t m) {
  if (n == 0 || m == 0) return 0;
  const double tail = (1 - kGateConfidence) / 2;
  if (n > kExactLimit || m > kExactLimit) {
    const double z = 1.959963984540054;  // the normal quantile of 1 - tail
    const double c = std::floor(double(n) * double(m) / 2 - z * std::sqrt(double(n * m * (n + m + 1)) / 12));
    return c < 1 ? 0 : uint64_t(c);
  }
  const std::vector<double> counts = u_counts(n, m);
  double total = 0;
  for (double c : counts) total += c;
  uint64_t c = 0;
  for (double below = 0; c < counts.size() && (below + counts[c]) / total <= tail; ++c) below += counts[c];
  return c;  // P(U <= c - 1) <= tail < P(U <= c)
}

std::optional<RatioInterval> rank_interval(const std::vector<double>& run, const std::vector<double>& baseline) {
  if (run.size() < 2 || baseline.size() < 2) return std::nullopt;
  const uint64_t c = rank_interval_rank(run.size(), baseline.size());
  if (c == 0) return std::nullopt;
  std::vector<double> d;
  d.reserve(run.size() * baseline.size());
  for (double x : run)
    for (double y : baseline) d.push_back(std::log(x) - std::log(y));
  RatioInterval r;
  r.ratio = std::exp(median_of(d));
  r.low = std::exp(kth(d, c));
  r.high = std::exp(kth(d, d.size() + 1 - c));
  return r;
}

GateVerdict gate(const std::vector<double>& run, const std::vector<double>& baseline, double max_slowdown) {
  GateVerdict v;
  v.interval = rank_interval(run, baseline);
  const std::string limit = percent(max_slowdown);
  if (!v.interval) {
    v.plain_reason = run.size() < 2 ? "one figure in the run"
                     : baseline.size() < 2
                         ? "one figure in the baseline"
                         : fmt::format("{} and {} figures, too few for the rank test", run.size(), baseline.size());
    v.ratio = median_of(run) / median_of(baseline);
    v.fails = v.ratio > 1 + max_slowdown;
    v.verdict =
        fmt::format("{} {} (plain threshold: {})", v.fails ? "SLOWER by more than" : "within", limit, v.plain_reason);
    return v;
  }
  const RatioInterval& i = *v.interval;
  v.ratio = i.ratio;
  v.fails = i.low > 1 && i.ratio > 1 + max_slowdown;
  v.verdict = v.fails      ? "SLOWER by more than " + limit
              : i.low > 1  ? "slower, within " + limit
              : i.high < 1 ? "faster"
                           : "same within noise";
  return v;
}

}  // namespace mpspack::cli
