// mpspack's own float32 matrix-vector kernels (runtime/shim/gemv_rows.hpp), every set this CPU runs, against sums
// in double: both directions, every tail of the vector width, alpha and beta, and nothing written outside y.
#include <catch2/catch.hpp>

#include "runtime/shim/gemv_rows.hpp"
#include "shim_test_util.hpp"

#include <cmath>
#include <limits>

using namespace mpspack::test;

namespace {

// y = alpha * op(A) x + beta * y in double, with the bound of float rounding over `terms` products.
struct Want {
  double value, bound;
};

Want want(const std::vector<float>& a, int64_t lda, const std::vector<float>& x, bool trans, int64_t i, int64_t terms,
          float alpha, float beta, float y0) {
  double sum = 0, mag = 0;
  for (int64_t k = 0; k < terms; ++k) {
    const double p = double(trans ? a[size_t(k * lda + i)] : a[size_t(i * lda + k)]) * x[size_t(k)];
    sum += p;
    mag += std::abs(p);
  }
  const double kept = beta == 0.0f ? 0.0 : double(beta) * y0;  // y0 is NaN where beta is 0
  return {alpha * sum + kept, double(terms + 4) * 0x1p-23 * (std::abs(alpha) * mag + std::abs(kept))};
}

}  // namespace

TEST_CASE("own GEMV kernels: every set this CPU runs against sums in double", "[shim][gemv]") {
  using mpspack::shim::gemv_rows::Kernels;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Kernels* set : mpspack::shim::gemv_rows::runnable_kernels()) {
    INFO("kernel set " << set->name);
    for (bool trans : {false, true})
      for (int64_t rows : {1, 3, 4, 5, 9, 33})
        for (int64_t cols : {1, 7, 8, 15, 16, 17, 31, 32, 33, 64, 65, 100})
          for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {0.5f, 1.0f}, {-2.0f, 0.25f}}) {
            INFO((trans ? "columns" : "rows")
                 << ", " << rows << " x " << cols << ", alpha " << alpha << ", beta " << beta);
            const int64_t lda = cols + 3, out = trans ? cols : rows, in = trans ? rows : cols;
            const auto a = random_floats(size_t(rows * lda), uint32_t(rows * 100 + cols));
            const auto x = random_floats(size_t(in), uint32_t(in + 7));
            // y's elements, then two sentinels past its end; beta 0 must not read y (NaN there would show).
            std::vector<float> y = random_floats(size_t(out), uint32_t(out + 11));
            if (beta == 0.0f) std::fill(y.begin(), y.end(), nan);
            const std::vector<float> y0 = y;
            y.push_back(-7.0f);
            y.push_back(-7.0f);
            (trans ? set->columns : set->rows)(rows, cols, alpha, a.data(), lda, x.data(), beta, y.data());
            for (int64_t i = 0; i < out; ++i) {
              const Want w = want(a, lda, x, trans, i, in, alpha, beta, y0[size_t(i)]);
              INFO("y[" << i << "] = " << y[size_t(i)] << ", want " << w.value);
              REQUIRE(std::abs(double(y[size_t(i)]) - w.value) <= w.bound);
            }
            REQUIRE(y[size_t(out)] == -7.0f);
            REQUIRE(y[size_t(out) + 1] == -7.0f);
          }
  }
}
