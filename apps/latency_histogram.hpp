// The text report's latency histogram (`run --bench`, docs/CLI.md): equal-width buckets from the fastest run to
// the slowest, each a row with its range, a bar and its count.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mpspack::cli {

// At most `rows` rows (fewer for fewer runs; one when every run took the same time); the fullest bucket's bar is
// `width` characters wide and the others are in proportion. "" for no runs.
std::string latency_histogram(const std::vector<double>& ms, size_t rows = 8, size_t width = 40);

}  // namespace mpspack::cli
