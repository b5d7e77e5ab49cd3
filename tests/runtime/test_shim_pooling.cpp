// The pooling functions on what torch's conformance cases cannot hold: null handles and result pointers, and a
// NaN random sample (whose window starts torch leaves undefined; the shim refuses it). The windows of
// fractional_max_pool2d worked out by hand. Values against torch: tests/ops (opcases/pooling.py).
#include "op_test_util.hpp"
#include "runtime/shim/provided.hpp"

#include <limits>
#include <string>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32();

std::string error_text() { return std::string(mpspack::shim::last_error()); }

}  // namespace

TEST_CASE("pooling refuses null handles and null result pointers, naming the op", "[shim][ops][pooling]") {
  TypedTensor x({1, 2, 4, 4}, kF32, small_integers(32, 1));
  const int64_t k[] = {2, 2}, none[] = {0};
  Handle values, indices;
  CHECK(aoti_torch_cpu_max_pool2d_with_indices(nullptr, k, 2, k, 2, none, 1, k, 0, 0, values.out(), indices.out()) !=
        0);
  CHECK(aoti_torch_cpu_max_pool2d_with_indices(x.h.get(), k, 2, k, 0, none, 1, k, 1, 0, values.out(), nullptr) != 0);
  CHECK(error_text().find("max_pool2d") != std::string::npos);
  CHECK(aoti_torch_cpu__adaptive_avg_pool2d(x.h.get(), k, 2, nullptr) != 0);
  CHECK(error_text().find("adaptive_avg_pool2d") != std::string::npos);
  CHECK(aoti_torch_cpu_max_unpool2d(x.h.get(), nullptr, k, 2, values.out()) != 0);
  CHECK(aoti_torch_cpu_fractional_max_pool2d(x.h.get(), k, 2, k, 2, nullptr, values.out(), indices.out()) != 0);
  CHECK(values.get() == nullptr);
  CHECK(indices.get() == nullptr);
}

TEST_CASE("fractional_max_pool2d takes samples as torch does and refuses a NaN one", "[shim][ops][pooling]") {
  TypedTensor x({1, 1, 9, 9}, kF32, small_integers(81, 2));
  const int64_t k[] = {2, 2}, out[] = {3, 3};
  Handle values, indices;
  // Window starts 0, int((1 + s) * 3.5) - int(s * 3.5), 7 along each dim: W from sample 0, H from sample 1.
  TypedTensor samples({1, 1, 2}, kF32, {0.0, 0.2});
  REQUIRE(aoti_torch_cpu_fractional_max_pool2d(x.h.get(), k, 2, out, 2, samples.h.get(), values.out(), indices.out()) ==
          0);
  const auto idx = read_values(indices.get());
  const auto vals = read_values(x.h.get());
  const int64_t starts_w[] = {0, 3, 7}, starts_h[] = {0, 4, 7};  // int(4.2) - int(0.7) = 4
  for (int oh = 0; oh < 3; ++oh)
    for (int ow = 0; ow < 3; ++ow) {
      double best = -1e300;
      int64_t at = 0;
      for (int64_t h = starts_h[oh]; h < starts_h[oh] + 2; ++h)
        for (int64_t w = starts_w[ow]; w < starts_w[ow] + 2; ++w)
          if (vals[size_t(h * 9 + w)] > best) best = vals[size_t(h * 9 + w)], at = h * 9 + w;
      CHECK(idx[size_t(oh * 3 + ow)] == double(at));
    }
  TypedTensor nan({1, 1, 2}, kF32, {0.5, std::numeric_limits<double>::quiet_NaN()});
  Handle v2, i2;
  CHECK(aoti_torch_cpu_fractional_max_pool2d(x.h.get(), k, 2, out, 2, nan.h.get(), v2.out(), i2.out()) != 0);
  CHECK(error_text().find("fractional_max_pool2d") != std::string::npos);
  CHECK(v2.get() == nullptr);
}
