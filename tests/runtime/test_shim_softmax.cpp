// The softmax row kernels of the CPU attention (shim/softmax_row.hpp) against std::exp and plain loops.
#include "softmax_row.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using mpspack::shim::exp_nonpositive;
using mpspack::shim::exp_shifted_sum;
using mpspack::shim::row_max;

namespace {

// Distance in units in the last place between two finite, non-negative floats.
int64_t ulps_apart(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::abs(int64_t(ia) - int64_t(ib));
}

}  // namespace

TEST_CASE("exp_nonpositive: within 2 ulp of std::exp on [-87.3, 0], 0 below, NaN kept", "[shim][softmax]") {
  int64_t worst = 0;
  float worst_x = 0;
  // Every 997th float from -87.3 up to 0 (about 1.1 million), and the ends.
  const float lo = -87.33f;
  for (float x = lo; x < 0; x = std::nextafter(x, 1.0f)) {
    const int64_t d = ulps_apart(exp_nonpositive(x), std::exp(x));
    if (d > worst) worst = d, worst_x = x;
    for (int skip = 0; skip < 996 && x < 0; ++skip) x = std::nextafter(x, 1.0f);
  }
  INFO("worst at x = " << worst_x);
  CHECK(worst <= 2);
  CHECK(exp_nonpositive(0.0f) == 1.0f);
  CHECK(exp_nonpositive(-0.0f) == 1.0f);
  CHECK(ulps_apart(exp_nonpositive(-1.0f), std::exp(-1.0f)) <= 1);
  CHECK(exp_nonpositive(-88.0f) == 0.0f);  // below FLT_MIN's logarithm: flushed to 0
  CHECK(exp_nonpositive(-1e30f) == 0.0f);
  CHECK(exp_nonpositive(-std::numeric_limits<float>::infinity()) == 0.0f);  // a masked score
  CHECK(std::isnan(exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("row_max and exp_shifted_sum: every length around the 16 lanes, masked entries", "[shim][softmax]") {
  const float ninf = -std::numeric_limits<float>::infinity();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-30.f, 30.f);
  for (int64_t n : {0, 1, 7, 15, 16, 17, 31, 32, 33, 600, 1501}) {
    INFO("n " << n);
    std::vector<float> s(static_cast<size_t>(n));
    for (auto& x : s) x = d(rng);
    for (int64_t j = 3; j < n; j += 5) s[size_t(j)] = ninf;  // masked keys
    float want_max = ninf;
    for (float x : s) want_max = std::max(want_max, x);
    REQUIRE(row_max(s.data(), n) == want_max);
    if (n == 0) continue;
    double want_sum = 0;
    std::vector<double> want(s.size());
    for (size_t j = 0; j < s.size(); ++j) want_sum += (want[j] = std::exp(double(s[j] - want_max)));  // the shift in float, as the kernel takes it
    const float sum = exp_shifted_sum(s.data(), n, want_max);
    CHECK(std::abs(sum - want_sum) <= 1e-6 * want_sum);
    for (size_t j = 0; j < s.size(); ++j) {
      INFO("j " << j);
      REQUIRE(std::abs(s[j] - want[j]) <= 3e-7 * want[j] + 1e-37);
    }
  }
  // The largest entry anywhere in the row, including the scalar tail after the last whole 16.
  std::vector<float> s(35, -1.0f);
  for (int64_t at : {0, 15, 16, 31, 32, 34}) {
    s.assign(35, -1.0f);
    s[size_t(at)] = 5.0f;
    CHECK(row_max(s.data(), 35) == 5.0f);
  }
}
