// _weight_int8pack_mm on the CPU shim against a plain loop in double: float32 and bfloat16 activations, a
// transposed int8 weight, each path of the product (register kernels, dequantized panels, split over the threads
// or not), every kernel set this CPU runs, and the shapes and dtypes it refuses.
#include "runtime/shim/int8_rows.hpp"
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
Reference reference(const std::vector<double>& a, const std::vector<double>& w, const std::vector<double>& s, int64_t M,
                    int64_t K, int64_t N) {
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

// Runs the op on random [M, K] activations (dtype dt), [N, K] int8 weights (stored transposed when asked) and
// scales of a quantized layer's size, and checks every element against the exact result.
void check_product(int64_t M, int64_t K, int64_t N, int32_t dt, bool transposed_weight, uint32_t seed) {
  std::vector<double> a, s;
  for (float f : random_floats(size_t(M * K), seed)) a.push_back(f);
  for (float f : random_floats(size_t(N), seed + 1, 0.001f, 0.02f)) s.push_back(f);
  const auto w = small_integers(size_t(N * K), seed + 2, -128, 127);
  INFO("M " << M << ", K " << K << ", N " << N << ", dtype " << dt << ", mat2 transposed " << transposed_weight);
  // Values as the dtype holds them, so the reference sees what the op sees.
  TypedTensor a_t({M, K}, dt, a), s_t({N}, dt, s);
  const auto av = read_values(a_t.h.get()), sv = read_values(s_t.h.get());
  TypedTensor w_t({N, K}, transposed_weight ? std::vector<int64_t>{1, N} : std::vector<int64_t>{K, 1}, kI8, w);
  Handle out;
  REQUIRE(aoti_torch_cpu__weight_int8pack_mm(a_t.h.get(), w_t.h.get(), s_t.h.get(), out.out()) == 0);
  REQUIRE(dtype_of(out.get()) == dt);
  REQUIRE(sizes_of(out.get()) == std::vector<int64_t>{M, N});
  REQUIRE(strides_of(out.get()) == std::vector<int64_t>{N, 1});
  const auto got = read_values(out.get());
  const Reference want = reference(av, w, sv, M, K, N);
  // float products and sums of K terms, the scale's product, then one rounding to the output dtype.
  const double output_rounding = dt == kF32 ? 0x1p-24 : 0x1p-8;
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want.value[i]);
    REQUIRE(std::abs(got[i] - want.value[i]) <=
            double(K + 2) * 0x1p-24 * want.magnitude[i] + output_rounding * std::abs(want.value[i]));
  }
}

}  // namespace

TEST_CASE("_weight_int8pack_mm: (self @ mat2^T) * scales for float32 and bfloat16", "[shim][ops][int8]") {
  for (int32_t dt : {kF32, kBF16})
    for (bool transposed_weight : {false, true}) check_product(3, 37, 5, dt, transposed_weight, 61);
}

TEST_CASE("_weight_int8pack_mm: every path of the product, split over the threads or not", "[shim][ops][int8]") {
  struct Shape {
    const char* path;
    int64_t M, K, N;
  };
  // Sizes that leave a tail everywhere: rows past a block of A, K past the vector lanes and past a panel's depth,
  // N past a block of weight rows and past a panel. The larger ones are split over the threads.
  const Shape shapes[] = {{"register kernels, one row (a decode step)", 1, 4100, 301},
                          {"register kernels, a few rows", 7, 1100, 150},
                          {"register kernels, small", 9, 33, 6},
                          {"register kernels, tall blocks", 40, 300, 90},
                          {"register kernels, M split (more rows than weights)", 70, 1000, 20},
                          {"panels, N split", 90, 1100, 300},
                          {"panels, M split (more rows than weights)", 300, 200, 20},
                          {"panels, small", 81, 9, 3}};
  for (const Shape& sh : shapes) {
    INFO(sh.path);
    for (int32_t dt : {kF32, kBF16}) check_product(sh.M, sh.K, sh.N, dt, false, 71);
  }
  check_product(90, 130, 70, kF32, true, 81);
}

TEST_CASE("_weight_int8pack_mm: K = 0 gives zeros, M = 0 or N = 0 an empty result", "[shim][ops][int8]") {
  TypedTensor a({3, 0}, kF32, {}), w({2, 0}, kI8, {}), s({2}, kF32, {0.5, 2});
  Handle out;
  REQUIRE(aoti_torch_cpu__weight_int8pack_mm(a.h.get(), w.h.get(), s.h.get(), out.out()) == 0);
  CHECK(read_values(out.get()) == std::vector<double>(6, 0.0));
  TypedTensor a0({0, 4}, kF32, {}), w4({2, 4}, kI8, std::vector<double>(8, 1)), w0({0, 4}, kI8, {}), s0({0}, kF32, {});
  TypedTensor a4({3, 4}, kF32, std::vector<double>(12, 1));
  Handle none_m, none_n;
  REQUIRE(aoti_torch_cpu__weight_int8pack_mm(a0.h.get(), w4.h.get(), s.h.get(), none_m.out()) == 0);
  CHECK(sizes_of(none_m.get()) == std::vector<int64_t>{0, 2});
  REQUIRE(aoti_torch_cpu__weight_int8pack_mm(a4.h.get(), w0.h.get(), s0.h.get(), none_n.out()) == 0);
  CHECK(sizes_of(none_n.get()) == std::vector<int64_t>{3, 0});
}

TEST_CASE("int8 weight kernels: every set this CPU runs against the exact sums", "[shim][int8]") {
  using mpspack::shim::int8mm::Kernels;
  // Rows of A, C and B further apart than K and N, so that a kernel reading or writing past a row shows.
  for (const Kernels* set : mpspack::shim::int8mm::runnable_kernels()) {
    INFO("kernel set " << set->name);
    for (int64_t M : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 17})
      for (int64_t K : {0, 1, 7, 8, 15, 16, 17, 33, 100})
        for (int64_t N : {1, 4, 5, 11}) {
          INFO("M " << M << ", K " << K << ", N " << N);
          const int64_t lda = K + 3, ldb = K + 5, ldc = N + 2;
          const auto a = random_floats(size_t(M * lda), uint32_t(M * 1000 + K));
          const auto s = random_floats(size_t(N), uint32_t(N), 0.001f, 0.02f);
          std::vector<int8_t> b(size_t(N * ldb));
          for (size_t i = 0; i < b.size(); ++i) b[i] = int8_t(int(i * 37 + K) % 256 - 128);
          // Columns [1, N) only: column 0 and the padding keep their sentinel.
          std::vector<float> c(size_t(M * ldc), -7.0f);
          set->rows(a.data(), lda, b.data(), ldb, s.data(), c.data(), ldc, M, N > 1 ? 1 : 0, N, K);
          for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < ldc; ++n) {
              const float got = c[size_t(m * ldc + n)];
              if (n >= N || (n == 0 && N > 1)) {
                REQUIRE(got == -7.0f);
                continue;
              }
              double want = 0, mag = 0;
              for (int64_t k = 0; k < K; ++k) {
                want += double(a[size_t(m * lda + k)]) * b[size_t(n * ldb + k)];
                mag += std::abs(double(a[size_t(m * lda + k)]) * b[size_t(n * ldb + k)]);
              }
              INFO("C[" << m << ", " << n << "]");
              REQUIRE(std::abs(double(got) - want * s[size_t(n)]) <= double(K + 2) * 0x1p-24 * mag * s[size_t(n)]);
            }
          // The panel: every weight times its row's scale, exactly as float rounds it.
          std::vector<float> panel(size_t(N * (K + 1)), -7.0f);
          set->widen(b.data(), ldb, s.data(), N, K, panel.data(), K + 1);
          for (int64_t n = 0; n < N; ++n) {
            for (int64_t k = 0; k < K; ++k)
              REQUIRE(panel[size_t(n * (K + 1) + k)] == float(b[size_t(n * ldb + k)]) * s[size_t(n)]);
            REQUIRE(panel[size_t(n * (K + 1) + K)] == -7.0f);
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
