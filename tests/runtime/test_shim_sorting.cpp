// sort, sort.stable and topk on the CPU shim against a plain reference: every dim, ties (stable order), NaN
// placement, strided inputs and torch's output strides, int64 values beyond double's precision.
#include "op_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32(), kI64 = aoti_torch_dtype_int64(), kBF16 = aoti_torch_dtype_bfloat16(),
              kI32 = aoti_torch_dtype_int32();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Reference: each line along dim sorted by insertion (stable), NaN above every number; the first `keep`.
struct Sorted {
  std::vector<double> values;
  std::vector<double> indices;
};
Sorted reference_sort(const std::vector<double>& v, const std::vector<int64_t>& sizes, int64_t dim, bool descending,
                      int64_t keep) {
  auto greater = [](double a, double b) { return (std::isnan(a) && !std::isnan(b)) || a > b; };
  auto before = [&](double a, double b) { return descending ? greater(a, b) : greater(b, a); };
  std::vector<int64_t> out_sizes = sizes;
  out_sizes[size_t(dim)] = keep;
  const auto in_st = contiguous(sizes), out_st = contiguous(out_sizes);
  Sorted r{std::vector<double>(size_t(numel(out_sizes))), std::vector<double>(size_t(numel(out_sizes)))};
  std::vector<int64_t> outer = sizes;
  outer[size_t(dim)] = 1;
  for_each_index(outer, [&](std::span<const int64_t> idx) {
    std::vector<int64_t> pos(idx.begin(), idx.end());
    std::vector<int64_t> order;  // insertion sort: each new element goes after every one not ordered after it
    for (int64_t k = 0; k < sizes[size_t(dim)]; ++k) {
      pos[size_t(dim)] = k;
      const double x = v[size_t(offset_of(pos, in_st))];
      auto it = order.end();
      while (it != order.begin()) {
        pos[size_t(dim)] = *(it - 1);
        if (!before(x, v[size_t(offset_of(pos, in_st))])) break;
        --it;
      }
      order.insert(it, k);
    }
    for (int64_t k = 0; k < keep; ++k) {
      pos[size_t(dim)] = order[size_t(k)];
      const double x = v[size_t(offset_of(pos, in_st))];
      pos[size_t(dim)] = k;
      r.values[size_t(offset_of(pos, out_st))] = x;
      r.indices[size_t(offset_of(pos, out_st))] = double(order[size_t(k)]);
    }
  });
  return r;
}

// Equal, NaN matching NaN.
void require_same(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE((got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))));
  }
}

std::vector<double> with_nans(std::vector<double> v) {
  for (size_t i = 3; i < v.size(); i += 7) v[i] = kNaN;
  return v;
}

}  // namespace

TEST_CASE("sort: every dim, both orders, ties stable, NaN last ascending and first descending", "[shim][ops][sort]") {
  const std::vector<int64_t> sizes{3, 5, 4};
  const auto v = with_nans(small_integers(60, 31, -3, 3));
  TypedTensor x(sizes, kF32, v);
  for (int64_t dim : {0, 1, 2, -1})
    for (int desc : {0, 1}) {
      INFO("dim " << dim << " descending " << desc);
      Handle values, indices;
      REQUIRE(aoti_torch_cpu_sort(x.h.get(), dim, desc, values.out(), indices.out()) == 0);
      REQUIRE(dtype_of(values.get()) == kF32);
      REQUIRE(dtype_of(indices.get()) == kI64);
      REQUIRE(strides_of(values.get()) == contiguous(sizes));
      REQUIRE(strides_of(indices.get()) == contiguous(sizes));
      const int64_t d = dim < 0 ? dim + 3 : dim;
      const Sorted want = reference_sort(v, sizes, d, desc != 0, sizes[size_t(d)]);
      require_same(read_values(values.get()), want.values);
      REQUIRE(read_values(indices.get()) == want.indices);
    }
}

TEST_CASE("sort: a transposed input keeps its strides, a gapped one gets dense strides in its order",
          "[shim][ops][sort]") {
  const std::vector<int64_t> sizes{4, 3};
  const auto v = small_integers(12, 32, -9, 9);
  for (const auto& [strides, want_strides] : {std::pair{std::vector<int64_t>{1, 4}, std::vector<int64_t>{1, 4}},
                                              std::pair{std::vector<int64_t>{2, 8}, std::vector<int64_t>{1, 4}}}) {
    TypedTensor x(sizes, strides, kI32, v);
    Handle values, indices;
    REQUIRE(aoti_torch_cpu_sort_stable(x.h.get(), nullptr, 1, 0, values.out(), indices.out()) == 0);
    REQUIRE(strides_of(values.get()) == want_strides);
    REQUIRE(strides_of(indices.get()) == want_strides);
    const Sorted want = reference_sort(v, sizes, 1, false, 3);
    REQUIRE(read_values(values.get()) == want.values);
    REQUIRE(read_values(indices.get()) == want.indices);
  }
}

TEST_CASE("sort: int64 values that double cannot tell apart, bfloat16, 0-d and empty", "[shim][ops][sort]") {
  SECTION("int64 2^53 + 1 sorts above 2^53") {
    const int64_t big = int64_t(1) << 53;
    int64_t data[3] = {big + 1, big, -1};
    Handle x = from_blob(data, {3}, {1}, kI64), values, indices;
    REQUIRE(aoti_torch_cpu_sort(x.get(), 0, 0, values.out(), indices.out()) == 0);
    void* p = nullptr;
    REQUIRE(aoti_torch_get_data_ptr(values.get(), &p) == 0);
    const auto* out = static_cast<const int64_t*>(p);
    CHECK(out[0] == -1);
    CHECK(out[1] == big);
    CHECK(out[2] == big + 1);
  }
  SECTION("bfloat16 descending") {
    const std::vector<double> v{0.5, -2, 3, 0.5, 1};
    TypedTensor x({5}, kBF16, v);
    Handle values, indices;
    REQUIRE(aoti_torch_cpu_sort(x.h.get(), 0, 1, values.out(), indices.out()) == 0);
    REQUIRE(dtype_of(values.get()) == kBF16);
    REQUIRE(read_values(values.get()) == std::vector<double>{3, 1, 0.5, 0.5, -2});
    REQUIRE(read_values(indices.get()) == std::vector<double>{2, 4, 0, 3, 1});
  }
  SECTION("0-d and size-0") {
    TypedTensor s({}, kF32, {4});
    Handle values, indices;
    REQUIRE(aoti_torch_cpu_sort(s.h.get(), -1, 0, values.out(), indices.out()) == 0);
    REQUIRE(read_values(values.get()) == std::vector<double>{4});
    REQUIRE(read_values(indices.get()) == std::vector<double>{0});
    TypedTensor e({2, 0}, kF32, {});
    Handle ev, ei;
    REQUIRE(aoti_torch_cpu_sort(e.h.get(), 1, 0, ev.out(), ei.out()) == 0);
    REQUIRE(sizes_of(ev.get()) == std::vector<int64_t>{2, 0});
  }
}

TEST_CASE("topk: largest and smallest k along every dim, contiguous results, NaN among the largest",
          "[shim][ops][sort]") {
  const std::vector<int64_t> sizes{3, 6, 5};
  const auto v = with_nans(small_integers(90, 33, -4, 4));
  TypedTensor x(sizes, {1, 15, 3}, kF32, v);  // strided: dim 0 innermost
  for (int64_t dim : {0, 1, 2})
    for (int64_t k : {int64_t(0), int64_t(1), int64_t(3)})
      for (int largest : {0, 1}) {
        INFO("dim " << dim << " k " << k << " largest " << largest);
        Handle values, indices;
        REQUIRE(aoti_torch_cpu_topk(x.h.get(), k, dim, largest, 1, values.out(), indices.out()) == 0);
        auto out_sizes = sizes;
        out_sizes[size_t(dim)] = k;
        REQUIRE(sizes_of(values.get()) == out_sizes);
        REQUIRE(strides_of(values.get()) == mpspack::shim::contiguous_strides(out_sizes));  // torch's, for k = 0 too
        const Sorted want = reference_sort(v, sizes, dim, largest != 0, k);
        require_same(read_values(values.get()), want.values);
        REQUIRE(read_values(indices.get()) == want.indices);
      }
}

TEST_CASE("topk and sort refuse k out of range, a bad dim and null outputs", "[shim][ops][sort]") {
  TypedTensor x({2, 3}, kF32, {1, 2, 3, 4, 5, 6});
  Handle a, b;
  CHECK(aoti_torch_cpu_topk(x.h.get(), 4, 1, 1, 1, a.out(), b.out()) != 0);
  CHECK(aoti_torch_cpu_topk(x.h.get(), -1, 1, 1, 1, a.out(), b.out()) != 0);
  CHECK(aoti_torch_cpu_topk(x.h.get(), 1, 2, 1, 1, a.out(), b.out()) != 0);
  CHECK(aoti_torch_cpu_sort(x.h.get(), -3, 0, a.out(), b.out()) != 0);
  CHECK(aoti_torch_cpu_sort(x.h.get(), 0, 0, nullptr, b.out()) != 0);
  CHECK(a.get() == nullptr);
  CHECK(b.get() == nullptr);
}
