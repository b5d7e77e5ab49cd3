// The softmax row kernels of the CPU attention (attention_kernels.hpp's row_max and exp_sum, every set this CPU
// runs) against std::exp and plain loops.
#include "runtime/shim/attention_kernels.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using mpspack::shim::attn::runnable_kernels;

namespace {

// Distance in units in the last place between two finite, non-negative floats.
int64_t ulps_apart(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::abs(int64_t(ia) - int64_t(ib));
}

}  // namespace

TEST_CASE("exp_sum's exp: within 2 ulp of std::exp on [-87.3, 0], 0 below, NaN kept", "[shim][softmax]") {
  // Every 997th float from -87.3 up to 0 (about 1.1 million), and the ends, in one row with shift 0.
  std::vector<float> xs;
  for (float x = -87.33f; x < 0; x = std::nextafter(x, 1.0f)) {
    xs.push_back(x);
    for (int skip = 0; skip < 996 && x < 0; ++skip) x = std::nextafter(x, 1.0f);
  }
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::vector<float> ends{0.0f, -0.0f, -1.0f, -88.0f, -1e30f, ninf, std::numeric_limits<float>::quiet_NaN()};
  for (const auto* k : runnable_kernels()) {
    INFO("kernel set " << k->name);
    std::vector<float> e = xs;
    k->exp_sum(e.data(), int64_t(e.size()), 0.0f);
    int64_t worst = 0;
    float worst_x = 0;
    for (size_t j = 0; j < xs.size(); ++j) {
      const int64_t d = ulps_apart(e[j], std::exp(xs[j]));
      if (d > worst) worst = d, worst_x = xs[j];
    }
    INFO("worst at x = " << worst_x);
    CHECK(worst <= 2);
    // The ends once in the vector lanes (a row of 16 or more) and once in the scalar tail (a row of 7).
    for (const int64_t n : {int64_t(ends.size()), int64_t(32)}) {
      std::vector<float> r(size_t(n), -3.0f);
      std::copy(ends.begin(), ends.end(), r.begin());
      k->exp_sum(r.data(), n, 0.0f);
      CHECK(r[0] == 1.0f);
      CHECK(r[1] == 1.0f);
      CHECK(ulps_apart(r[2], std::exp(-1.0f)) <= 1);
      CHECK(r[3] == 0.0f);  // below FLT_MIN's logarithm: flushed to 0
      CHECK(r[4] == 0.0f);
      CHECK(r[5] == 0.0f);  // a masked score
      CHECK(std::isnan(r[6]));
    }
  }
}

TEST_CASE("row_max and exp_sum: every length around the lanes, masked entries", "[shim][softmax]") {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (const auto* k : runnable_kernels()) {
    INFO("kernel set " << k->name);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-30.f, 30.f);
    for (int64_t n : {0, 1, 7, 15, 16, 17, 31, 32, 33, 600, 1501}) {
      INFO("n " << n);
      std::vector<float> s(static_cast<size_t>(n));
      for (auto& x : s) x = d(rng);
      for (int64_t j = 3; j < n; j += 5) s[size_t(j)] = ninf;  // masked keys
      float want_max = ninf;
      for (float x : s) want_max = std::max(want_max, x);
      REQUIRE(k->row_max(s.data(), n) == want_max);
      if (n == 0) continue;
      double want_sum = 0;
      std::vector<double> want(s.size());
      for (size_t j = 0; j < s.size(); ++j)
        want_sum += (want[j] = std::exp(double(s[j] - want_max)));  // the shift in float, as the kernel takes it
      const float sum = k->exp_sum(s.data(), n, want_max);
      CHECK(std::abs(sum - want_sum) <= 1e-6 * want_sum);
      for (size_t j = 0; j < s.size(); ++j) {
        INFO("j " << j);
        REQUIRE(std::abs(s[j] - want[j]) <= 3e-7 * want[j] + 1e-37);
      }
    }
    // The largest entry anywhere in the row, including the scalar tail after the last whole vector.
    std::vector<float> s(35, -1.0f);
    for (int64_t at : {0, 15, 16, 31, 32, 34}) {
      s.assign(35, -1.0f);
      s[size_t(at)] = 5.0f;
      CHECK(k->row_max(s.data(), 35) == 5.0f);
    }
  }
}
