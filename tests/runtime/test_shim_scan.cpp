// aten::cumsum and cumprod on the CPU shim against a plain loop in double: every dim, strided inputs, size-1
// and size-0 dims, torch's result dtypes, and its accumulator types (which decide results on long float lines).
#include "op_test_util.hpp"

#include <cmath>
#include <limits>

using namespace mpspack::test;

namespace {

const int32_t kI32 = aoti_torch_dtype_int32(), kI64 = aoti_torch_dtype_int64(), kF32 = aoti_torch_dtype_float32(),
              kF64 = aoti_torch_dtype_float64(), kBF16 = aoti_torch_dtype_bfloat16(), kBool = aoti_torch_dtype_bool(),
              kU8 = aoti_torch_dtype_uint8();

// The running sum (or product) of `values` (logical order of `sizes`) along `dim` (already wrapped), in double.
std::vector<double> reference_scan(const std::vector<double>& values, const std::vector<int64_t>& sizes, int64_t dim,
                                   bool product = false) {
  const auto st = contiguous(sizes);
  std::vector<double> out(values.size());
  for_each_index(sizes, [&](std::span<const int64_t> idx) {
    std::vector<int64_t> walk(idx.begin(), idx.end());
    double acc = product ? 1 : 0;
    for (walk[dim] = 0; walk[dim] <= idx[dim]; ++walk[dim]) {
      const double v = values[size_t(offset_of(walk, st))];
      acc = product ? acc * v : acc + v;
    }
    out[size_t(offset_of(idx, st))] = acc;
  });
  return out;
}
std::vector<double> reference_cumsum(const std::vector<double>& values, const std::vector<int64_t>& sizes,
                                     int64_t dim) {
  return reference_scan(values, sizes, dim);
}

Handle cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype = nullptr) {
  Handle out;
  REQUIRE(aoti_torch_cpu_cumsum(self, dim, dtype, out.out()) == 0);
  return out;
}

void require_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}

}  // namespace

TEST_CASE("cumsum float32 along every dim, negative dims too, into a contiguous result", "[shim][ops][scan]") {
  const std::vector<int64_t> sizes{3, 4, 5};
  const auto values = small_integers(60, 1);  // plus fractions below, so order of rounding shows
  std::vector<double> v(values.size());
  const auto frac = random_floats(60, 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(float(values[i] + frac[i]));
  TypedTensor x(sizes, kF32, v);
  for (int64_t dim : {0, 1, 2, -1, -2, -3}) {
    INFO("dim " << dim);
    Handle y = cumsum(x.h.get(), dim);
    REQUIRE(dtype_of(y.get()) == kF32);
    REQUIRE(sizes_of(y.get()) == sizes);
    REQUIRE(strides_of(y.get()) == contiguous(sizes));
    require_near(read_values(y.get()), reference_cumsum(v, sizes, dim < 0 ? dim + 3 : dim), 1e-6);
  }
}

TEST_CASE("cumsum reads non-contiguous inputs through their strides", "[shim][ops][scan]") {
  const std::vector<int64_t> sizes{4, 3, 5};
  const auto v = small_integers(60, 3);
  // Transposed (dims 0 and 2 swapped in memory), and every other element with an offset-free padded stride.
  for (const auto& strides : {std::vector<int64_t>{1, 20, 4}, std::vector<int64_t>{30, 10, 2}}) {
    TypedTensor x(sizes, strides, kF64, v);
    for (int64_t dim : {0, 1, 2}) {
      INFO("strides " << strides[0] << "," << strides[1] << "," << strides[2] << " dim " << dim);
      Handle y = cumsum(x.h.get(), dim);
      REQUIRE(strides_of(y.get()) == contiguous(sizes));
      REQUIRE(read_values(y.get()) == reference_cumsum(v, sizes, dim));  // small integers: exact
    }
  }
}

TEST_CASE("cumsum over size-1, size-0 and 0-d shapes", "[shim][ops][scan]") {
  SECTION("size-1 dims, scanned and not") {
    const std::vector<int64_t> sizes{1, 6, 1};
    const auto v = small_integers(6, 4);
    TypedTensor x(sizes, kF32, v);
    for (int64_t dim : {0, 1, 2}) REQUIRE(read_values(cumsum(x.h.get(), dim).get()) == reference_cumsum(v, sizes, dim));
  }
  SECTION("a size-0 dim gives an empty result of the same shape") {
    TypedTensor x({2, 0, 3}, kF32, {});
    for (int64_t dim : {0, 1, 2}) {
      Handle y = cumsum(x.h.get(), dim);
      REQUIRE(sizes_of(y.get()) == std::vector<int64_t>{2, 0, 3});
    }
  }
  SECTION("a 0-d tensor is its own sum; dim 0 and -1 are its only dims") {
    TypedTensor x({}, kI32, {7});
    Handle y = cumsum(x.h.get(), -1);
    REQUIRE(sizes_of(y.get()).empty());
    REQUIRE(dtype_of(y.get()) == kI64);
    REQUIRE(read_values(y.get()) == std::vector<double>{7});
    Handle bad;
    CHECK(aoti_torch_cpu_cumsum(x.h.get(), 1, nullptr, bad.out()) != 0);
  }
}

TEST_CASE("cumsum result dtypes follow torch: integers and bool to int64, an explicit dtype wins",
          "[shim][ops][scan]") {
  SECTION("int32 sums past int32's range in int64") {
    const std::vector<double> v{2147483647.0, 2147483647.0, -5.0};
    TypedTensor x({3}, kI32, v);
    Handle y = cumsum(x.h.get(), 0);
    REQUIRE(dtype_of(y.get()) == kI64);
    REQUIRE(read_values(y.get()) == std::vector<double>{2147483647.0, 4294967294.0, 4294967289.0});
  }
  SECTION("uint8 and bool count in int64") {
    TypedTensor u({4}, kU8, {200, 200, 1, 0});
    Handle yu = cumsum(u.h.get(), 0);
    REQUIRE(dtype_of(yu.get()) == kI64);
    REQUIRE(read_values(yu.get()) == std::vector<double>{200, 400, 401, 401});
    TypedTensor b({2, 3}, kBool, {1, 0, 1, 1, 1, 0});
    Handle yb = cumsum(b.h.get(), 1);
    REQUIRE(dtype_of(yb.get()) == kI64);
    REQUIRE(read_values(yb.get()) == std::vector<double>{1, 1, 2, 1, 2, 2});
  }
  SECTION("an explicit dtype: the input is cast first, then summed") {
    TypedTensor x({4}, kF32, {0.5, 1.5, 2.5, -1.25});
    int32_t i32 = kI32;
    Handle yi = cumsum(x.h.get(), 0, &i32);  // cast truncates toward zero: 0, 1, 2, -1
    REQUIRE(dtype_of(yi.get()) == kI32);
    REQUIRE(read_values(yi.get()) == std::vector<double>{0, 1, 3, 2});
    int32_t f64 = kF64;
    Handle yd = cumsum(x.h.get(), 0, &f64);
    REQUIRE(dtype_of(yd.get()) == kF64);
    REQUIRE(read_values(yd.get()) == std::vector<double>{0.5, 2.0, 4.5, 3.25});
  }
  SECTION("a dtype code the shim does not know is refused") {
    TypedTensor x({2}, kF32, {1, 2});
    int32_t complex64 = 9;
    Handle y;
    CHECK(aoti_torch_cpu_cumsum(x.h.get(), 0, &complex64, y.out()) != 0);
  }
}

TEST_CASE("cumsum accumulates as torch's CPU kernel: bfloat16 in float, float32 in double", "[shim][ops][scan]") {
  SECTION("512 bfloat16 ones reach 512 (a bfloat16 accumulator stops at 256)") {
    TypedTensor x({512}, kBF16, std::vector<double>(512, 1.0));
    const auto y = read_values(cumsum(x.h.get(), 0).get());
    REQUIRE(y[255] == 256.0);
    REQUIRE(y[511] == 512.0);
  }
  SECTION("bfloat16 rows along dim 0 against the double sum, within bfloat16's rounding") {
    const std::vector<int64_t> sizes{37, 3};
    std::vector<double> v;
    for (float f : random_floats(111, 5)) v.push_back(mpspack::shim::bf16_to_float(mpspack::shim::float_to_bf16(f)));
    TypedTensor x(sizes, kBF16, v);
    Handle y = cumsum(x.h.get(), 0);
    REQUIRE(dtype_of(y.get()) == kBF16);
    require_near(read_values(y.get()), reference_cumsum(v, sizes, 0), 1.0 / 128);
  }
  SECTION("float32: 2^24 then ones gains 1 each step in a double accumulator (a float one would not)") {
    TypedTensor x({3}, kF32, {16777216.0, 1.0, 1.0});
    // 2^24 + 1 rounds to 2^24 in float32 when stored, but the running value keeps it: the third is 2^24 + 2.
    REQUIRE(read_values(cumsum(x.h.get(), 0).get()) == std::vector<double>{16777216.0, 16777216.0, 16777218.0});
  }
}

TEST_CASE("cumsum refuses a bad dim, a missing result pointer and a non-CPU tensor", "[shim][ops][scan]") {
  TypedTensor x({2, 3}, kF32, {1, 2, 3, 4, 5, 6});
  Handle y;
  CHECK(aoti_torch_cpu_cumsum(x.h.get(), 2, nullptr, y.out()) != 0);
  CHECK(aoti_torch_cpu_cumsum(x.h.get(), -3, nullptr, y.out()) != 0);
  CHECK(aoti_torch_cpu_cumsum(x.h.get(), 0, nullptr, nullptr) != 0);
  CHECK(aoti_torch_cpu_cumsum(nullptr, 0, nullptr, y.out()) != 0);
  float data[2] = {1, 2};
  Handle on_gpu;
  const int64_t s[1] = {2}, st[1] = {1};
  REQUIRE(aoti_torch_create_tensor_from_blob(data, 1, s, st, 0, kF32, aoti_torch_device_type_cuda(), 0, on_gpu.out()) ==
          0);
  CHECK(aoti_torch_cpu_cumsum(on_gpu.get(), 0, nullptr, y.out()) != 0);
  CHECK(y.get() == nullptr);
}

TEST_CASE("cumprod along every dim of a strided input, integers to int64, bool", "[shim][ops][scan]") {
  const std::vector<int64_t> sizes{3, 4, 2};
  std::vector<double> v;
  for (float f : random_floats(24, 7, 0.5f, 1.5f)) v.push_back(double(f));
  TypedTensor x(sizes, {1, 6, 3}, aoti_torch_dtype_float64(), v);  // dim 0 innermost in memory
  for (int64_t dim : {0, 1, 2, -1}) {
    INFO("dim " << dim);
    Handle y;
    REQUIRE(aoti_torch_cpu_cumprod(x.h.get(), dim, nullptr, y.out()) == 0);
    REQUIRE(strides_of(y.get()) == contiguous(sizes));
    require_near(read_values(y.get()), reference_scan(v, sizes, dim < 0 ? dim + 3 : dim, true), 1e-12);
  }
  SECTION("int32 products past int32's range are int64") {
    TypedTensor i({3}, kI32, {65536, 65536, -2});
    Handle y;
    REQUIRE(aoti_torch_cpu_cumprod(i.h.get(), 0, nullptr, y.out()) == 0);
    REQUIRE(dtype_of(y.get()) == kI64);
    REQUIRE(read_values(y.get()) == std::vector<double>{65536.0, 4294967296.0, -8589934592.0});
  }
  SECTION("bool: stays 1 until the first 0") {
    TypedTensor b({4}, kBool, {1, 1, 0, 1});
    Handle y;
    REQUIRE(aoti_torch_cpu_cumprod(b.h.get(), 0, nullptr, y.out()) == 0);
    REQUIRE(read_values(y.get()) == std::vector<double>{1, 1, 0, 0});
  }
  SECTION("float32 runs in double: a running float32 product would round twice") {
    // a^3 rounded once to float32 is 1 + 2^-11 + 2^-12 + 2^-22; rounded through float32(a * a), 1 + ... + 2^-23.
    const double a = 1.0 + std::ldexp(1.0, -12);
    TypedTensor f({3}, kF32, {a, a, a});
    Handle y;
    REQUIRE(aoti_torch_cpu_cumprod(f.h.get(), 0, nullptr, y.out()) == 0);
    REQUIRE(read_values(y.get()) == std::vector<double>{a, double(float(a * a)), double(float(a * a * a))});
    REQUIRE(double(float(a * a * a)) != double(float(double(float(a * a)) * a)));  // the case tells them apart
  }
}
