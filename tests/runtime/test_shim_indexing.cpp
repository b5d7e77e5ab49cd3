// scatter (src, value, reduce), index_put and nonzero on the CPU shim against plain loops written per case.
#include "op_test_util.hpp"

#include <cmath>
#include <limits>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32(), kI64 = aoti_torch_dtype_int64(), kI32 = aoti_torch_dtype_int32(),
              kBool = aoti_torch_dtype_bool(), kBF16 = aoti_torch_dtype_bfloat16();

std::vector<double> random_indices(size_t n, uint32_t seed, int64_t size) {
  return small_integers(n, seed, 0, int(size - 1));
}

// Reference scatter on logical (row-major) values: out[idx with dim = index[idx]] op= src[idx].
std::vector<double> reference_scatter(std::vector<double> out, const std::vector<int64_t>& out_sizes,
                                      const std::vector<double>& index, const std::vector<int64_t>& index_sizes,
                                      const std::vector<double>& src, const std::vector<int64_t>& src_sizes,
                                      int64_t dim, const std::string& reduce, bool include_self) {
  const auto ost = contiguous(out_sizes), ist = contiguous(index_sizes), sst = contiguous(src_sizes);
  auto target = [&](std::span<const int64_t> idx) {
    std::vector<int64_t> pos(idx.begin(), idx.end());
    pos[size_t(dim)] = int64_t(index[size_t(offset_of(idx, ist))]);
    return size_t(offset_of(pos, ost));
  };
  std::vector<int> count(out.size(), include_self ? 1 : 0);
  std::vector<bool> touched(out.size(), false);
  for_each_index(index_sizes, [&](std::span<const int64_t> idx) {
    const size_t t = target(idx);
    const double s = src[size_t(offset_of(idx, sst))];
    double& o = out[t];
    if (reduce.empty()) {
      o = s;
      return;
    }
    if (!include_self && !touched[t]) {
      o = s;
    } else if (reduce == "sum" || reduce == "mean") {
      o += s;
    } else if (reduce == "prod") {
      o *= s;
    } else if (reduce == "amax") {
      o = std::max(o, s);
    } else {
      o = std::min(o, s);
    }
    touched[t] = true;
    ++count[t];
  });
  if (reduce == "mean")
    for (size_t i = 0; i < out.size(); ++i)
      if (touched[i] && count[i] > 0) out[i] /= count[i];
  return out;
}

}  // namespace

TEST_CASE("scatter src and value: along each dim, repeated indices keep the last, index smaller than src",
          "[shim][ops][scatter]") {
  const std::vector<int64_t> self_sizes{4, 5}, index_sizes{3, 4}, src_sizes{4, 5};
  const auto self_v = small_integers(20, 41), src_v = small_integers(20, 42);
  for (int64_t dim : {0, 1, -1}) {
    const int64_t d = dim < 0 ? dim + 2 : dim;
    INFO("dim " << dim);
    const auto index_v = random_indices(12, 43 + uint32_t(d), self_sizes[size_t(d)]);
    TypedTensor self(self_sizes, kF32, self_v), index(index_sizes, kI64, index_v), src(src_sizes, kF32, src_v);
    TypedTensor out(self_sizes, {1, 4}, kF32, std::vector<double>(20, 99));  // column-major out
    REQUIRE(aoti_torch_cpu_scatter_src_out(out.h.get(), self.h.get(), dim, index.h.get(), src.h.get()) == 0);
    REQUIRE(read_values(out.h.get()) ==
            reference_scatter(self_v, self_sizes, index_v, index_sizes, src_v, src_sizes, d, "", true));
    REQUIRE(aoti_torch_cpu_scatter_value_out(out.h.get(), self.h.get(), dim, index.h.get(), 2.5) == 0);
    REQUIRE(read_values(out.h.get()) == reference_scatter(self_v, self_sizes, index_v, index_sizes,
                                                          std::vector<double>(12, 2.5), index_sizes, d, "", true));
  }
}

TEST_CASE("scatter into self in place (out is self)", "[shim][ops][scatter]") {
  const auto self_v = small_integers(6, 44);
  TypedTensor self({2, 3}, kF32, self_v), index({1, 3}, kI64, {1, 0, 1}), src({1, 3}, kF32, {7, 8, 9});
  REQUIRE(aoti_torch_cpu_scatter_src_out(self.h.get(), self.h.get(), 0, index.h.get(), src.h.get()) == 0);
  REQUIRE(read_values(self.h.get()) ==
          reference_scatter(self_v, {2, 3}, {1, 0, 1}, {1, 3}, {7, 8, 9}, {1, 3}, 0, "", true));
}

TEST_CASE("scatter_reduce: sum, prod, mean, amax, amin with and without self", "[shim][ops][scatter]") {
  const std::vector<int64_t> self_sizes{3, 4}, index_sizes{3, 6};
  const auto self_v = small_integers(12, 45, -4, 4), src_v = small_integers(18, 46, -3, 3);
  const auto index_v = random_indices(18, 47, 4);
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
    for (int include_self : {0, 1}) {
      INFO(reduce << " include_self " << include_self);
      TypedTensor self(self_sizes, kF32, self_v), index(index_sizes, kI64, index_v), src(index_sizes, kF32, src_v);
      TypedTensor out(self_sizes, kF32, std::vector<double>(12, 0));
      REQUIRE(aoti_torch_cpu_scatter_reduce_two_out(out.h.get(), self.h.get(), 1, index.h.get(), src.h.get(), reduce,
                                                    include_self) == 0);
      const auto want =
          reference_scatter(self_v, self_sizes, index_v, index_sizes, src_v, index_sizes, 1, reduce, include_self != 0);
      const auto got = read_values(out.h.get());
      for (size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        REQUIRE(std::abs(got[i] - want[i]) <= 1e-6 * (1 + std::abs(want[i])));
      }
    }
}

TEST_CASE("scatter_reduce mean on integers rounds down, as torch's floor division", "[shim][ops][scatter]") {
  TypedTensor self({2}, kI64, {0, 10}), index({3}, kI64, {0, 0, 1}), src({3}, kI64, {-3, -4, 1});
  TypedTensor out({2}, kI64, {0, 0});
  REQUIRE(aoti_torch_cpu_scatter_reduce_two_out(out.h.get(), self.h.get(), 0, index.h.get(), src.h.get(), "mean", 1) ==
          0);
  // (0 - 3 - 4) / 3 = -2.33 -> -3; (10 + 1) / 2 = 5.5 -> 5
  REQUIRE(read_values(out.h.get()) == std::vector<double>{-3, 5});
}

TEST_CASE("scatter refuses int32 indices, indices out of range, an unknown reduce and mixed dtypes",
          "[shim][ops][scatter]") {
  TypedTensor self({2, 3}, kF32, std::vector<double>(6, 0)), out({2, 3}, kF32, std::vector<double>(6, 0));
  TypedTensor i32({1, 2}, kI32, {0, 1}), far({1, 2}, kI64, {0, 3}), negative({1, 2}, kI64, {0, -1}),
      ok({1, 2}, kI64, {0, 1}), src({1, 2}, kF32, {1, 2}), src_bf16({1, 2}, kBF16, {1, 2});
  CHECK(aoti_torch_cpu_scatter_src_out(out.h.get(), self.h.get(), 1, i32.h.get(), src.h.get()) != 0);
  CHECK(aoti_torch_cpu_scatter_src_out(out.h.get(), self.h.get(), 1, far.h.get(), src.h.get()) != 0);
  CHECK(aoti_torch_cpu_scatter_value_out(out.h.get(), self.h.get(), 1, negative.h.get(), 1.0) != 0);
  CHECK(aoti_torch_cpu_scatter_reduce_two_out(out.h.get(), self.h.get(), 1, ok.h.get(), src.h.get(), "max", 1) != 0);
  CHECK(aoti_torch_cpu_scatter_src_out(out.h.get(), self.h.get(), 1, ok.h.get(), src_bf16.h.get()) != 0);
  CHECK(aoti_torch_cpu_scatter_src_out(out.h.get(), self.h.get(), 2, ok.h.get(), src.h.get()) != 0);
}

TEST_CASE("index_put: one index on rows, values broadcast, accumulate sums repeats", "[shim][ops][index_put]") {
  const auto self_v = small_integers(20, 51);
  TypedTensor self({5, 4}, kF32, self_v), rows({3}, kI64, {4, -5, 4}), values({4}, kF32, {1, 2, 3, 4});
  const AtenTensorHandle rows_h = rows.h.get();
  const AtenTensorHandle* indices[1] = {&rows_h};
  for (int accumulate : {0, 1}) {
    INFO("accumulate " << accumulate);
    Handle out;
    REQUIRE(aoti_torch_cpu_index_put(self.h.get(), indices, 1, values.h.get(), accumulate, out.out()) == 0);
    std::vector<double> want = self_v;
    for (int64_t r : {4, 0, 4})
      for (int64_t c = 0; c < 4; ++c)
        want[size_t(r * 4 + c)] = (accumulate ? want[size_t(r * 4 + c)] : 0) + double(c + 1);
    REQUIRE(read_values(out.get()) == want);
    REQUIRE(read_values(self.h.get()) == self_v);  // functional: self unchanged
  }
}

TEST_CASE("index_put: adjacent indices replace their dims in place, separated ones go first",
          "[shim][ops][index_put]") {
  const std::vector<int64_t> sizes{3, 4, 5};
  const auto self_v = small_integers(60, 52);
  TypedTensor self(sizes, kF32, self_v), i({2}, kI64, {3, 0}), j({2}, kI32, {4, -1}), k({2}, kI64, {1, 2});
  const AtenTensorHandle ih = i.h.get(), jh = j.h.get(), kh = k.h.get();
  SECTION("[:, i, j]: values of shape [3, 2]") {
    const std::vector<double> vals = small_integers(6, 53);
    TypedTensor values({3, 2}, kF32, vals);
    const AtenTensorHandle* indices[3] = {nullptr, &ih, &jh};
    Handle out;
    REQUIRE(aoti_torch_cpu_index_put(self.h.get(), indices, 3, values.h.get(), 0, out.out()) == 0);
    std::vector<double> want = self_v;
    const int64_t is[2] = {3, 0}, js[2] = {4, 4};
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t n = 0; n < 2; ++n) want[size_t(a * 20 + is[n] * 5 + js[n])] = vals[size_t(a * 2 + n)];
    REQUIRE(read_values(out.get()) == want);
  }
  SECTION("[k, :, j]: the index dims go first, values of shape [2, 4]") {
    const std::vector<double> vals = small_integers(8, 54);
    TypedTensor values({2, 4}, kF32, vals);
    const AtenTensorHandle* indices[3] = {&kh, nullptr, &jh};
    Handle out;
    REQUIRE(aoti_torch_cpu_index_put(self.h.get(), indices, 3, values.h.get(), 1, out.out()) == 0);
    std::vector<double> want = self_v;
    const int64_t ks[2] = {1, 2}, js[2] = {4, 4};
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t b = 0; b < 4; ++b) want[size_t(ks[n] * 20 + b * 5 + js[n])] += vals[size_t(n * 4 + b)];
    REQUIRE(read_values(out.get()) == want);
  }
}

TEST_CASE("index_put with a bool mask, a strided self, and its refusals", "[shim][ops][index_put]") {
  const auto self_v = small_integers(12, 55);
  TypedTensor self({3, 4}, {1, 3}, kF32, self_v);  // column-major self: the result keeps its strides
  const std::vector<double> mask_v{1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0};
  TypedTensor mask({3, 4}, kBool, mask_v), value({1}, kF32, {-7});
  const AtenTensorHandle mh = mask.h.get();
  const AtenTensorHandle* indices[1] = {&mh};
  Handle out;
  REQUIRE(aoti_torch_cpu_index_put(self.h.get(), indices, 1, value.h.get(), 0, out.out()) == 0);
  REQUIRE(strides_of(out.get()) == std::vector<int64_t>{1, 3});
  std::vector<double> want = self_v;
  for (size_t e = 0; e < want.size(); ++e)
    if (mask_v[e] != 0) want[e] = -7;
  REQUIRE(read_values(out.get()) == want);

  TypedTensor far({1}, kI64, {3}), wrong_dtype({1}, kBF16, {1});
  const AtenTensorHandle fh = far.h.get();
  const AtenTensorHandle* far_idx[1] = {&fh};
  Handle bad;
  CHECK(aoti_torch_cpu_index_put(self.h.get(), far_idx, 1, value.h.get(), 0, bad.out()) != 0);
  CHECK(aoti_torch_cpu_index_put(self.h.get(), indices, 1, wrong_dtype.h.get(), 0, bad.out()) != 0);
  const AtenTensorHandle* too_many[3] = {&fh, &fh, &fh};
  CHECK(aoti_torch_cpu_index_put(self.h.get(), too_many, 3, value.h.get(), 0, bad.out()) != 0);
  CHECK(bad.get() == nullptr);
}

TEST_CASE("nonzero: positions in row-major order, NaN counts and -0.0 does not, strided, 0-d", "[shim][ops][nonzero]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> v{0, 1, -0.0, nan, 0, 0, 2, 0};
  TypedTensor x({2, 4}, {1, 2}, kF32, v);
  Handle y;
  REQUIRE(aoti_torch_cpu_nonzero(x.h.get(), y.out()) == 0);
  REQUIRE(dtype_of(y.get()) == kI64);
  REQUIRE(sizes_of(y.get()) == std::vector<int64_t>{3, 2});
  REQUIRE(read_values(y.get()) == std::vector<double>{0, 1, 0, 3, 1, 2});
  TypedTensor s({}, kBool, {1}), z({}, kBool, {0}), e({0, 3}, kF32, {});
  Handle ys, yz, ye;
  REQUIRE(aoti_torch_cpu_nonzero(s.h.get(), ys.out()) == 0);
  REQUIRE(sizes_of(ys.get()) == std::vector<int64_t>{1, 0});
  REQUIRE(aoti_torch_cpu_nonzero(z.h.get(), yz.out()) == 0);
  REQUIRE(sizes_of(yz.get()) == std::vector<int64_t>{0, 0});
  REQUIRE(aoti_torch_cpu_nonzero(e.h.get(), ye.out()) == 0);
  REQUIRE(sizes_of(ye.get()) == std::vector<int64_t>{0, 2});
}
