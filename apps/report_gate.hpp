// The statistics of `mpspack report --baseline` (docs/CLI.md, ## report; docs/CI.md says why these): a run's
// figures against the baseline's, as a ratio with a rank-based confidence interval, and the gate's verdict.
//
// The test is Mann-Whitney's U on the logarithms of the figures, and the interval is the one that belongs to it:
// the Hodges-Lehmann estimate of the ratio (the median of every run/baseline ratio of one figure from each side)
// between two order statistics of those ratios, chosen from U's exact distribution under "no difference" (a
// normal approximation past 50 figures a side). It is deterministic, distribution-free, and one stray slow
// repetition moves it by one rank, not by its size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mpspack::cli {

// The two-sided confidence of the interval (and so the one-sided level of the "beyond noise" decision, 2.5%).
inline constexpr double kGateConfidence = 0.95;

// How many of the smallest pairwise ratios the interval leaves out at each end (its lower end is the c-th
// smallest, 1-based), for n and m figures: the largest c with P(U <= c - 1) <= (1 - kGateConfidence) / 2. Zero when
// even the most extreme outcome is that likely: too few figures for the test to ever call a difference.
uint64_t rank_interval_rank(uint64_t n, uint64_t m);

struct RatioInterval {
  double ratio = 1;  // the Hodges-Lehmann estimate of run / baseline
  double low = 1, high = 1;
};

// The estimate and interval for figures of a run against a baseline's (all > 0); nullopt when the test cannot
// run (fewer than two figures on a side, or too few for rank_interval_rank).
std::optional<RatioInterval> rank_interval(const std::vector<double>& run, const std::vector<double>& baseline);

// One row's verdict.
struct GateVerdict {
  double ratio = 1;                       // run / baseline: the estimate, or medians' ratio with a plain threshold
  std::optional<RatioInterval> interval;  // absent with a plain threshold
  std::string plain_reason;               // why a plain threshold was used ("one figure in the run"), else ""
  std::string verdict;                    // faster, same within noise, slower, or the plain threshold's
  bool fails = false;                     // slower than the baseline by more than max_slowdown, beyond noise
};

// max_slowdown: a fraction (0.1 for --max-slowdown 10%).
GateVerdict gate(const std::vector<double>& run, const std::vector<double>& baseline, double max_slowdown);

}  // namespace mpspack::cli
