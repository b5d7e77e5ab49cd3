// _weight_int8pack_mm on the CPU shim against a plain loop in double: float32 and bfloat16 activations, a
// transposed int8 weight, and the shapes and dtypes it refuses.
#include "op_test_util.hpp"

#include <cmath>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32(), kBF16 = aoti_torch_dtype_bfloat16(), kI8 = aoti_torch_dtype_int8(),
              kI32 = aoti_torch_dtype_int32();

// The exact result in double, and the size of the terms summed (what float rounding errors scale with).
struct Reference {
  std::vector<double> value, magnitude;
};
Reference reference(const std::vector<double>& a, const std::vector<double>& w, const std::vector<double>& s,
                    int64_t M, int64_t K, int64_t N) {
  Reference r{std::vector<double>(size_t(M * N)), std::vector<double>(size_t(M * N))};
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        acc += a[size_t(m * K + k)] * w[size_t(n * K + k)];
        mag += std::abs(a[size_t(m * K + k)] * w[size_t(n * K + k)]);
      }
      r.value[size_t(m * N + n)] = acc * s[size_t(n)];
      r.magnitude[size_t(m * N + n)] = mag * s[size_t(n)];
    }
  return r;
}

}  // namespace

TEST_CASE("_weight_int8pack_mm: (self @ mat2^T) * scales for float32 and bfloat16", "[shim][ops][int8]") {
  const int64_t M = 3, K = 37, N = 5;
  std::vector<double> a, s;
  for (float f : random_floats(size_t(M * K), 61)) a.push_back(f);
  for (float f : random_floats(size_t(N), 62, 0.001f, 0.02f)) s.push_back(f);
  const auto w = small_integers(size_t(N * K), 63, -128, 127);
  for (int32_t dt : {kF32, kBF16}) {
    INFO("dtype " << dt);
    // Values as the dtype holds them, so the reference sees what the op sees.
    TypedTensor a_t({M, K}, dt, a), s_t({N}, dt, s);
    const auto av = read_values(a_t.h.get()), sv = read_values(s_t.h.get());
    for (bool transposed_weight : {false, true}) {
      INFO("mat2 transposed in memory " << transposed_weight);
      TypedTensor w_t({N, K}, transposed_weight ? std::vector<int64_t>{1, N} : std::vector<int64_t>{K, 1}, kI8, w);
      Handle out;
      REQUIRE(aoti_torch_cpu__weight_int8pack_mm(a_t.h.get(), w_t.h.get(), s_t.h.get(), out.out()) == 0);
      REQUIRE(dtype_of(out.get()) == dt);
      REQUIRE(sizes_of(out.get()) == std::vector<int64_t>{M, N});
      REQUIRE(strides_of(out.get()) == std::vector<int64_t>{N, 1});
      const auto got = read_values(out.get());
      const Reference want = reference(av, w, sv, M, K, N);
      // float sums of K terms, then one rounding to the output dtype.
      const double output_rounding = dt == kF32 ? 0x1p-24 : 0x1p-8;
      for (size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i << ": got " << got[i] << ", want " << want.value[i]);
        REQUIRE(std::abs(got[i] - want.value[i]) <=
                double(K) * 0x1p-24 * want.magnitude[i] + output_rounding * std::abs(want.value[i]));
      }
    }
  }
}

TEST_CASE("_weight_int8pack_mm refuses other dtypes and shapes that do not chain", "[shim][ops][int8]") {
  TypedTensor a({2, 4}, kF32, std::vector<double>(8, 1)), s({3}, kF32, {1, 1, 1});
  TypedTensor w({3, 4}, kI8, std::vector<double>(12, 1)), w_f32({3, 4}, kF32, std::vector<double>(12, 1));
  TypedTensor w_short({3, 5}, kI8, std::vector<double>(15, 1)), a_i32({2, 4}, kI32, std::vector<double>(8, 1));
  TypedTensor s_bf16({3}, kBF16, {1, 1, 1}), s_short({2}, kF32, {1, 1});
  Handle out;
  CHECK(aoti_torch_cpu__weight_int8pack_mm(a.h.get(), w_f32.h.get(), s.h.get(), out.out()) != 0);
  CHECK(aoti_torch_cpu__weight_int8pack_mm(a.h.get(), w_short.h.get(), s.h.get(), out.out()) != 0);
  CHECK(aoti_torch_cpu__weight_int8pack_mm(a_i32.h.get(), w.h.get(), s.h.get(), out.out()) != 0);
  CHECK(aoti_torch_cpu__weight_int8pack_mm(a.h.get(), w.h.get(), s_bf16.h.get(), out.out()) != 0);
  CHECK(aoti_torch_cpu__weight_int8pack_mm(a.h.get(), w.h.get(), s_short.h.get(), out.out()) != 0);
  CHECK(out.get() == nullptr);
  REQUIRE(aoti_torch_cpu__weight_int8pack_mm(a.h.get(), w.h.get(), s.h.get(), out.out()) == 0);
  REQUIRE(read_values(out.get()) == std::vector<double>(6, 4.0));
}
