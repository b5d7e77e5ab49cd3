// _embedding_bag and _embedding_bag_forward_only on the CPU shim against loops written per case: sum, mean and
// max bags, an empty bag, padding_idx, per_sample_weights, include_last_offset, int32 indices, bfloat16.
#include "op_test_util.hpp"

#include <algorithm>
#include <cmath>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32(), kI64 = aoti_torch_dtype_int64(), kI32 = aoti_torch_dtype_int32(),
              kBF16 = aoti_torch_dtype_bfloat16();
constexpr int64_t kRows = 7, kD = 3;

struct Result {
  Handle out, offset2bag, bag_size, max_indices;
};

Result bag(AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int64_t mode,
           AtenTensorHandle psw, bool include_last, int64_t padding_idx, bool forward_only = false) {
  Result r;
  AtenTensorHandle* psw_ptr = psw ? &psw : nullptr;
  const auto fn = forward_only ? aoti_torch_cpu__embedding_bag_forward_only : aoti_torch_cpu__embedding_bag;
  REQUIRE(fn(weight, indices, offsets, 0, mode, 0, psw_ptr, include_last, padding_idx, r.out.out(), r.offset2bag.out(),
             r.bag_size.out(), r.max_indices.out()) == 0);
  return r;
}

}  // namespace

TEST_CASE("_embedding_bag sum, mean and max over bags with an empty one and a padding row",
          "[shim][ops][embedding_bag]") {
  const auto wv = small_integers(size_t(kRows * kD), 71, -9, 9);
  TypedTensor weight({kRows, kD}, kF32, wv);
  const std::vector<double> idx{0, 2, 6, 2, 5, 1};
  TypedTensor indices({6}, kI64, idx), offsets({3}, kI64, {0, 2, 2});  // bags [0, 2), [2, 2), [2, 6)
  const std::vector<std::pair<int64_t, int64_t>> bags{{0, 2}, {2, 2}, {2, 6}};
  auto w = [&](int64_t row, int64_t d) { return wv[size_t(row * kD + d)]; };
  for (int64_t mode : {0, 1, 2})
    for (int64_t padding : {int64_t(-1), int64_t(2)})
      for (bool forward_only : {false, true}) {
        INFO("mode " << mode << " padding_idx " << padding << " forward_only " << forward_only);
        Result r = bag(weight.h.get(), indices.h.get(), offsets.h.get(), mode, nullptr, false, padding, forward_only);
        REQUIRE(sizes_of(r.out.get()) == std::vector<int64_t>{3, kD});
        std::vector<double> want;
        for (auto [s, e] : bags)
          for (int64_t d = 0; d < kD; ++d) {
            std::vector<double> vals;
            for (int64_t i = s; i < e; ++i)
              if (int64_t(idx[size_t(i)]) != padding) vals.push_back(w(int64_t(idx[size_t(i)]), d));
            double v = 0;
            if (!vals.empty()) {
              if (mode == 2) v = *std::max_element(vals.begin(), vals.end());
              else
                for (double x : vals) v += x;
              if (mode == 1) v /= double(vals.size());
            }
            want.push_back(double(float(v)));
          }
        REQUIRE(read_values(r.out.get()) == want);
        // torch's sum fast path (float weights, no padding_idx) leaves offset2bag empty.
        if (mode == 0 && padding < 0) REQUIRE(read_values(r.offset2bag.get()).empty());
        else REQUIRE(read_values(r.offset2bag.get()) == std::vector<double>{0, 0, 2, 2, 2, 2});
        if (mode != 0) {
          const double third = padding == 2 ? 3 : 4;  // bag [2, 6) holds row 2 once
          REQUIRE(read_values(r.bag_size.get()) == std::vector<double>{padding == 2 ? 1.0 : 2.0, 0, third});
        }
        if (mode == 2) {
          REQUIRE(sizes_of(r.max_indices.get()) == std::vector<int64_t>{3, kD});
          const auto mi = read_values(r.max_indices.get());
          for (int64_t b : {0, 2})
            for (int64_t d = 0; d < kD; ++d) {
              const int64_t row = int64_t(mi[size_t(b * kD + d)]);
              INFO("bag " << b << " feature " << d << " row " << row);
              REQUIRE(w(row, d) == want[size_t(b * kD + d)]);
              REQUIRE(row != padding);
            }
        }
      }
}

TEST_CASE("_embedding_bag per_sample_weights, include_last_offset, int32 indices, bfloat16",
          "[shim][ops][embedding_bag]") {
  SECTION("weighted sum; the last offset ends the last bag") {
    const auto wv = small_integers(size_t(kRows * kD), 72);
    TypedTensor weight({kRows, kD}, kF32, wv);
    TypedTensor indices({5}, kI32, {3, 3, 0, 6, 4}), offsets({3}, kI32, {0, 3, 4});  // bags [0, 3), [3, 4); 4 unused
    TypedTensor psw({5}, kF32, {0.5, 2, -1, 3, 100});
    Result r = bag(weight.h.get(), indices.h.get(), offsets.h.get(), 0, psw.h.get(), true, -1);
    REQUIRE(dtype_of(r.offset2bag.get()) == kI32);
    std::vector<double> want;
    for (int64_t d = 0; d < kD; ++d)
      want.push_back(0.5 * wv[size_t(3 * kD + d)] + 2 * wv[size_t(3 * kD + d)] - wv[size_t(d)]);
    for (int64_t d = 0; d < kD; ++d) want.push_back(3 * wv[size_t(6 * kD + d)]);
    REQUIRE(read_values(r.out.get()) == want);
  }
  SECTION("bfloat16 mean divides the bfloat16 sum") {
    TypedTensor weight({2, 1}, kBF16, {1.0, 1.0 / 128});
    TypedTensor indices({3}, kI64, {0, 1, 1}), offsets({1}, kI64, {0});
    Result r = bag(weight.h.get(), indices.h.get(), offsets.h.get(), 1, nullptr, false, -1);
    // float sum 1 + 2/128 = 1.015625, exact in bfloat16; / 3 = 0.33854 -> bfloat16 0.337890625
    REQUIRE(read_values(r.out.get()) == std::vector<double>{0.337890625});
  }
}

TEST_CASE("_embedding_bag refuses bad offsets, indices out of range and weights with another mode",
          "[shim][ops][embedding_bag]") {
  TypedTensor weight({kRows, kD}, kF32, std::vector<double>(size_t(kRows * kD), 1));
  TypedTensor indices({2}, kI64, {0, 1}), far({2}, kI64, {0, 7}), offsets({1}, kI64, {0}), bad_start({1}, kI64, {1});
  TypedTensor offsets_i32({1}, kI32, {0}), psw({2}, kF32, {1, 1});
  Handle a, b, c, d;
  AtenTensorHandle p = psw.h.get();
  CHECK(aoti_torch_cpu__embedding_bag(weight.h.get(), far.h.get(), offsets.h.get(), 0, 0, 0, nullptr, 0, -1, a.out(),
                                      b.out(), c.out(), d.out()) != 0);
  CHECK(aoti_torch_cpu__embedding_bag(weight.h.get(), indices.h.get(), bad_start.h.get(), 0, 0, 0, nullptr, 0, -1,
                                      a.out(), b.out(), c.out(), d.out()) != 0);
  CHECK(aoti_torch_cpu__embedding_bag(weight.h.get(), indices.h.get(), offsets_i32.h.get(), 0, 0, 0, nullptr, 0, -1,
                                      a.out(), b.out(), c.out(), d.out()) != 0);
  CHECK(aoti_torch_cpu__embedding_bag(weight.h.get(), indices.h.get(), offsets.h.get(), 0, 1, 0, &p, 0, -1, a.out(),
                                      b.out(), c.out(), d.out()) != 0);
  CHECK(aoti_torch_cpu__embedding_bag(weight.h.get(), indices.h.get(), offsets.h.get(), 0, 3, 0, nullptr, 0, -1,
                                      a.out(), b.out(), c.out(), d.out()) != 0);
  CHECK(a.get() == nullptr);
}
