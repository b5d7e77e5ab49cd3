// _weight_int4pack_mm_cpu_tensor on the CPU shim against a plain dequantize-then-multiply loop in double: weights
// packed here in each of the three layouts torch's _convert_weight_to_int4pack_for_cpu writes (as the test reads
// torch's packer: blocks of 64 columns split in halves on AVX-512, of 32 on AVX2, pairs elsewhere and in a last,
// partial block), float32, float16 and bfloat16 activations, every group size, each path of the product (register
// kernels, dequantized panels, split over the threads or not), every kernel set this CPU runs, and the inputs
// torch refuses.
#include "runtime/shim/int4_rows.hpp"
#include "op_test_util.hpp"
#include "runtime/shim/provided.hpp"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32(), kF16 = aoti_torch_dtype_float16(), kBF16 = aoti_torch_dtype_bfloat16(),
              kU8 = aoti_torch_dtype_uint8(), kI64 = aoti_torch_dtype_int64(), kI32 = aoti_torch_dtype_int32();

struct Layout {
  const char* capability;  // what ATEN_CPU_CAPABILITY names it
  int64_t block_n;
  bool split;
};
const Layout kLayouts[] = {{"avx512", 64, true}, {"avx2", 32, true}, {"default", 32, false}};

// Sets ATEN_CPU_CAPABILITY for the scope, and puts back what was there.
struct CapabilityScope {
  std::optional<std::string> before;
  explicit CapabilityScope(const char* value) {
    if (const char* v = std::getenv("ATEN_CPU_CAPABILITY")) before = v;
    REQUIRE(setenv("ATEN_CPU_CAPABILITY", value, 1) == 0);
  }
  ~CapabilityScope() {
    if (before) setenv("ATEN_CPU_CAPABILITY", before->c_str(), 1);
    else unsetenv("ATEN_CPU_CAPABILITY");
  }
};

// The column whose 4-bit value the low (h = 0) or high (h = 1) nibble of byte j of a block's row holds.
int64_t column_in_block(int64_t j, int h, int64_t nb, bool split) { return split ? j + h * nb / 2 : 2 * j + h; }

// q [N, K] (values 0..15) packed as torch packs it for `layout`: [N, K / 2] bytes, block after block, each block
// K rows of nb / 2 bytes.
std::vector<double> pack(const std::vector<int>& q, int64_t N, int64_t K, const Layout& layout) {
  std::vector<double> out(size_t(N * K / 2));
  for (int64_t n0 = 0; n0 < N; n0 += layout.block_n) {
    const int64_t nb = std::min(layout.block_n, N - n0), bb = nb / 2;
    const bool split = layout.split && nb == layout.block_n;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < bb; ++j) {
        const int lo = q[size_t((n0 + column_in_block(j, 0, nb, split)) * K + k)];
        const int hi = q[size_t((n0 + column_in_block(j, 1, nb, split)) * K + k)];
        out[size_t(n0 * K / 2 + k * bb + j)] = double(lo | hi << 4);
      }
  }
  return out;
}

struct Problem {
  int64_t M, K, N, group;
  std::vector<double> x, sz;  // as the dtype holds them
  std::vector<int> q;
};

Problem random_problem(int64_t M, int64_t K, int64_t N, int64_t group, int32_t dt, uint32_t seed) {
  Problem p{M, K, N, group, {}, {}, {}};
  const auto xs = random_floats(size_t(M * K), seed);
  TypedTensor x({M, K}, dt, std::vector<double>(xs.begin(), xs.end()));
  p.x = read_values(x.h.get());
  const auto scales = random_floats(size_t(K / group * N), seed + 1, 0.001f, 0.05f);
  const auto zeros = random_floats(size_t(K / group * N), seed + 2, -0.2f, 0.2f);
  std::vector<double> sz;
  for (size_t i = 0; i < scales.size(); ++i) {
    sz.push_back(scales[i]);
    sz.push_back(zeros[i]);
  }
  TypedTensor s({K / group, N, 2}, dt, sz);
  p.sz = read_values(s.h.get());
  for (double v : small_integers(size_t(N * K), seed + 3, 0, 15)) p.q.push_back(int(v));
  return p;
}

// The exact result in double, and the size of the terms summed (what float rounding errors scale with).
void reference(const Problem& p, std::vector<double>& value, std::vector<double>& magnitude) {
  value.assign(size_t(p.M * p.N), 0.0);
  magnitude.assign(size_t(p.M * p.N), 0.0);
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t k = 0; k < p.K; ++k) {
      const size_t g = size_t((k / p.group * p.N + n) * 2);
      const double w = (p.q[size_t(n * p.K + k)] - 8) * p.sz[g] + p.sz[g + 1];
      for (int64_t m = 0; m < p.M; ++m) {
        value[size_t(m * p.N + n)] += p.x[size_t(m * p.K + k)] * w;
        magnitude[size_t(m * p.N + n)] += std::abs(p.x[size_t(m * p.K + k)] * w);
      }
    }
}

// Runs the op on `p` with its weights packed for `layout` (ATEN_CPU_CAPABILITY telling the shim which) and checks
// every element against the exact result.
// sz_columns_outer: qScaleAndZeros stored column by column ([N, K / group, 2] in memory), which torch's kernel
// would misread; the shim reads it through its strides.
void check_product(const Problem& p, int32_t dt, const Layout& layout, bool sz_columns_outer = false) {
  INFO("M " << p.M << ", K " << p.K << ", N " << p.N << ", group " << p.group << ", dtype " << dt << ", layout "
            << layout.capability << (sz_columns_outer ? ", qScaleAndZeros column by column" : ""));
  CapabilityScope cap(layout.capability);
  TypedTensor x({p.M, p.K}, dt, p.x), w({p.N, p.K / 2}, kU8, pack(p.q, p.N, p.K, layout));
  const int64_t groups = p.K / p.group;
  TypedTensor g({}, kI64, {double(p.group)});
  TypedTensor s({groups, p.N, 2},
                sz_columns_outer ? std::vector<int64_t>{2, 2 * groups, 1} : contiguous({groups, p.N, 2}), dt, p.sz);
  Handle out;
  REQUIRE(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x.h.get(), w.h.get(), g.h.get(), s.h.get(), out.out()) == 0);
  REQUIRE(dtype_of(out.get()) == dt);
  REQUIRE(sizes_of(out.get()) == std::vector<int64_t>{p.M, p.N});
  REQUIRE(strides_of(out.get()) == std::vector<int64_t>{p.N, 1});
  const auto got = read_values(out.get());
  std::vector<double> want, magnitude;
  reference(p, want, magnitude);
  // float dequantization and products, a sum of K terms, then one rounding to the output dtype.
  const double output_rounding = dt == kF32 ? 0x1p-24 : dt == kF16 ? 0x1p-11 : 0x1p-8;
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << " (row " << i / size_t(p.N) << ", column " << i % size_t(p.N) << "): got " << got[i]
                    << ", want " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <=
            double(p.K + 4) * 0x1p-24 * magnitude[i] + output_rounding * std::abs(want[i]));
  }
}

// The op's result code and message for the given inputs.
std::string refusal(AtenTensorHandle x, AtenTensorHandle w, AtenTensorHandle g, AtenTensorHandle s) {
  Handle out;
  if (aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x, w, g, s, out.out()) == 0) return "accepted";
  return std::string(mpspack::shim::last_error());
}

}  // namespace

TEST_CASE("_weight_int4pack_mm_cpu_tensor: every packed layout, dtype and group size", "[shim][ops][int4]") {
  for (const Layout& layout : kLayouts)
    for (int32_t dt : {kF32, kBF16, kF16})
      for (int64_t group : {32, 64, 128, 256}) {
        // N = 112: one or three full blocks and a partial one of 48 or 16 columns.
        check_product(random_problem(3, 256, 112, group, dt, uint32_t(group)), dt, layout);
      }
}

TEST_CASE("_weight_int4pack_mm_cpu_tensor: every path of the product, split over the threads or not",
          "[shim][ops][int4]") {
  struct Shape {
    const char* path;
    int64_t M, K, N, group;
  };
  // Rows past a tile of the register kernels (4), the two-unit tiles of one or two rows, K past a panel's depth,
  // N as one partial block, whole blocks, and blocks with a partial one after them. The larger ones (N * K * (M + 2)
  // of 4 Mi and more: no libgomp here, so mpspack's pool) are split.
  const Shape shapes[] = {{"register kernels, one row (a decode step)", 1, 2048, 256, 128},
                          {"register kernels, two rows", 2, 512, 96, 64},
                          {"register kernels, a few rows, split", 8, 4096, 160, 32},
                          {"register kernels, small", 5, 64, 16, 32},
                          {"register kernels, rows split (fewer blocks than threads)", 40, 4096, 32, 64},
                          {"panels", 50, 1280, 208, 256},
                          {"panels, rows split", 100, 1024, 48, 128},
                          {"panels, K past a panel's depth", 60, 2304, 64, 256}};
  for (const Shape& sh : shapes) {
    INFO(sh.path);
    for (const Layout& layout : kLayouts)
      for (int32_t dt : {kF32, kBF16})
        check_product(random_problem(sh.M, sh.K, sh.N, sh.group, dt, uint32_t(sh.M * 7 + sh.N)), dt, layout);
  }
}

TEST_CASE("_weight_int4pack_mm_cpu_tensor: qScaleAndZeros read through its strides", "[shim][ops][int4]") {
  for (const Layout& layout : kLayouts)
    for (int32_t dt : {kF32, kBF16}) check_product(random_problem(5, 256, 112, 64, dt, 91), dt, layout, true);
}

TEST_CASE("_weight_int4pack_mm_cpu_tensor: a bfloat16 result is rounded once, to nearest even, and NaN stays NaN",
          "[shim][ops][int4]") {
  // Every weight (9 - 8) * 1 + 0 = 1 (byte 0x99, in any layout), so out[m, n] is the sum of row m: 1 + 2^-8 lies
  // halfway between bfloat16's 1 and 1 + 2^-7 (to the even 1), 1 + 3 * 2^-8 halfway between 1 + 2^-7 and 1 + 2^-6
  // (to the even 1 + 2^-6); rounding the float sum by truncation or upwards would give other values.
  const int64_t K = 64, N = 16;
  std::vector<double> x(size_t(3 * K), 0.0);
  x[0] = 1.0;
  x[1] = 0x1p-8;
  x[size_t(K)] = 1.0;
  x[size_t(K) + 1] = 3 * 0x1p-8;
  x[size_t(2 * K)] = std::nan("");
  TypedTensor xt({3, K}, kBF16, x), w({N, K / 2}, kU8, std::vector<double>(size_t(N * K / 2), 0x99));
  std::vector<double> sz;
  for (int64_t i = 0; i < K / 32 * N; ++i) sz.insert(sz.end(), {1.0, 0.0});
  TypedTensor g({}, kI64, {32}), s({K / 32, N, 2}, kBF16, sz);
  Handle out;
  REQUIRE(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(xt.h.get(), w.h.get(), g.h.get(), s.h.get(), out.out()) == 0);
  REQUIRE(dtype_of(out.get()) == kBF16);
  const auto got = read_values(out.get());
  for (int64_t n = 0; n < N; ++n) {
    INFO("column " << n);
    CHECK(got[size_t(n)] == 1.0);
    CHECK(got[size_t(N + n)] == 1.0 + 0x1p-6);
    CHECK(std::isnan(got[size_t(2 * N + n)]));
  }
}

TEST_CASE("_weight_int4pack_mm_cpu_tensor: K = 0 gives zeros, M = 0 or N = 0 an empty result", "[shim][ops][int4]") {
  TypedTensor g({}, kI64, {32});
  TypedTensor x({3, 0}, kF32, {}), w({16, 0}, kU8, {}), s({0, 16, 2}, kF32, {});
  Handle out;
  REQUIRE(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x.h.get(), w.h.get(), g.h.get(), s.h.get(), out.out()) == 0);
  CHECK(read_values(out.get()) == std::vector<double>(48, 0.0));
  TypedTensor x0({0, 64}, kF32, {}), w32({16, 32}, kU8, std::vector<double>(512, 0x88)),
      s2({2, 16, 2}, kF32, std::vector<double>(64, 1.0));
  Handle none_m;
  REQUIRE(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x0.h.get(), w32.h.get(), g.h.get(), s2.h.get(), none_m.out()) ==
          0);
  CHECK(sizes_of(none_m.get()) == std::vector<int64_t>{0, 16});
  TypedTensor x2({2, 64}, kF32, std::vector<double>(128, 1.0)), w0({0, 32}, kU8, {}), s0({2, 0, 2}, kF32, {});
  Handle none_n;
  REQUIRE(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x2.h.get(), w0.h.get(), g.h.get(), s0.h.get(), none_n.out()) ==
          0);
  CHECK(sizes_of(none_n.get()) == std::vector<int64_t>{2, 0});
}

TEST_CASE("_weight_int4pack_mm_cpu_tensor: refuses what torch refuses, in one line naming the op",
          "[shim][ops][int4]") {
  const int64_t M = 2, K = 64, N = 32;
  TypedTensor x({M, K}, kF32, std::vector<double>(size_t(M * K), 0.5)),
      w({N, K / 2}, kU8, std::vector<double>(size_t(N * K / 2), 0x88));
  TypedTensor g32({}, kI64, {32}), s({K / 32, N, 2}, kF32, std::vector<double>(size_t(K / 32 * N * 2), 1.0));
  auto refuses = [](const std::string& message, const std::string& why) {
    INFO(message);
    CHECK(message.find("_weight_int4pack_mm_cpu") != std::string::npos);
    CHECK(message.find(why) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  };
  REQUIRE(refusal(x.h.get(), w.h.get(), g32.h.get(), s.h.get()) == "accepted");

  TypedTensor g_two({2}, kI64, {32, 32}), g_i32({}, kI32, {32}), g_48({}, kI64, {48}), g_128({}, kI64, {128});
  refuses(refusal(x.h.get(), w.h.get(), g_two.h.get(), s.h.get()), "group size must be a scalar");
  refuses(refusal(x.h.get(), w.h.get(), g_i32.h.get(), s.h.get()), "group size must be int64");
  refuses(refusal(x.h.get(), w.h.get(), g_48.h.get(), s.h.get()), "expect qGroupSize to be 32, 64, 128 or 256, got 48");
  refuses(refusal(x.h.get(), w.h.get(), g_128.h.get(), s.h.get()), "expect K to be divisible by qGroupSize");

  TypedTensor x_i32({M, K}, kI32, std::vector<double>(size_t(M * K), 1.0));
  refuses(refusal(x_i32.h.get(), w.h.get(), g32.h.get(), s.h.get()), "expect A to be either 32-bit or 16-bit float");
  TypedTensor x_t({M, K}, {1, M}, kF32, std::vector<double>(size_t(M * K), 0.5));
  refuses(refusal(x_t.h.get(), w.h.get(), g32.h.get(), s.h.get()), "expect A to be contiguous");
  TypedTensor x_3d({1, M, K}, kF32, std::vector<double>(size_t(M * K), 0.5));
  refuses(refusal(x_3d.h.get(), w.h.get(), g32.h.get(), s.h.get()), "expect A to be 2D tensor");

  TypedTensor w_i8({N, K / 2}, aoti_torch_dtype_int8(), std::vector<double>(size_t(N * K / 2), 1.0));
  refuses(refusal(x.h.get(), w_i8.h.get(), g32.h.get(), s.h.get()), "expect B to be uint8 tensor");
  TypedTensor w_t({N, K / 2}, {1, N}, kU8, std::vector<double>(size_t(N * K / 2), 0x88));
  refuses(refusal(x.h.get(), w_t.h.get(), g32.h.get(), s.h.get()), "expect B to be contiguous");
  TypedTensor w_wide({N, K}, kU8, std::vector<double>(size_t(N * K), 0x88));
  refuses(refusal(x.h.get(), w_wide.h.get(), g32.h.get(), s.h.get()), "expect B.size(1) to be K/2, got 64");

  TypedTensor s_2d({K / 32, N * 2}, kF32, std::vector<double>(size_t(K / 32 * N * 2), 1.0));
  refuses(refusal(x.h.get(), w.h.get(), g32.h.get(), s_2d.h.get()), "expect qScaleAndZeros to be 3d tensor");
  TypedTensor s_n({K / 32, N / 2, 2}, kF32, std::vector<double>(size_t(K / 32 * N), 1.0));
  refuses(refusal(x.h.get(), w.h.get(), g32.h.get(), s_n.h.get()), "with sizes [:, 32, 2]");
  TypedTensor s_bf16({K / 32, N, 2}, kBF16, std::vector<double>(size_t(K / 32 * N * 2), 1.0));
  refuses(refusal(x.h.get(), w.h.get(), g32.h.get(), s_bf16.h.get()), "qScaleAndZeros of scalar type float32");
  TypedTensor s_short({1, N, 2}, kF32, std::vector<double>(size_t(N * 2), 1.0));
  refuses(refusal(x.h.get(), w.h.get(), g32.h.get(), s_short.h.get()), "holds 1 groups, K / qGroupSize is 2");

  // 40 columns: torch's kernel has no block of 8.
  CapabilityScope cap("avx2");
  TypedTensor w40({40, K / 2}, kU8, std::vector<double>(size_t(40 * K / 2), 0x88));
  TypedTensor s40({K / 32, 40, 2}, kF32, std::vector<double>(size_t(K / 32 * 80), 1.0));
  refuses(refusal(x.h.get(), w40.h.get(), g32.h.get(), s40.h.get()), "Unsupported n block size: 8");
}

TEST_CASE("int4 weight kernels: every set this CPU runs against the exact sums", "[shim][int4]") {
  using mpspack::shim::int4mm::Kernels;
  for (const Kernels* set : mpspack::shim::int4mm::runnable_kernels()) {
    INFO("kernel set " << set->name);
    for (int64_t nb : {16, 32, 48, 64})
      for (bool split : {false, true})
        for (int64_t M : {1, 2, 3, 4, 5, 7, 8, 9})
          for (int64_t group : {32, 64}) {
            const int64_t K = 128, bb = nb / 2, groups = K / group, L = set->lanes;
            INFO("nb " << nb << ", split " << split << ", M " << M << ", group " << group);
            // Rows of A and C further apart than K and the block, so that a kernel reading or writing past shows.
            const int64_t lda = K + 3, ldc = nb + 5;
            const auto a = random_floats(size_t(M * lda), uint32_t(M * 100 + nb));
            std::vector<uint8_t> b(size_t(K * bb));
            for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t((i * 37 + size_t(nb)) % 256);
            const auto sc = random_floats(size_t(groups * nb), uint32_t(nb), 0.001f, 0.05f);
            const auto ze = random_floats(size_t(groups * nb), uint32_t(nb + 1), -0.2f, 0.2f);
            // The table as int4_rows.hpp lays it out: per group the low nibbles' scales byte after byte, the high
            // nibbles', then the offsets zero - 8 * scale in the same order, each run padded to whole units.
            const int64_t run = (bb + L - 1) / L * L;
            std::vector<float> t(size_t(groups * 4 * run), 0.0f);
            for (int64_t g = 0; g < groups; ++g)
              for (int h = 0; h < 2; ++h)
                for (int64_t j = 0; j < bb; ++j) {
                  const int64_t c = column_in_block(j, h, nb, split);
                  t[size_t(g * 4 * run + h * run + j)] = sc[size_t(g * nb + c)];
                  t[size_t(g * 4 * run + 2 * run + h * run + j)] =
                      std::fma(sc[size_t(g * nb + c)], -8.0f, ze[size_t(g * nb + c)]);
                }
            auto weight = [&](int64_t k, int64_t c) {
              for (int64_t j = 0; j < bb; ++j)
                for (int h = 0; h < 2; ++h)
                  if (column_in_block(j, h, nb, split) == c) {
                    const int q = (b[size_t(k * bb + j)] >> (4 * h)) & 15;
                    return (q - 8) * double(sc[size_t(k / group * nb + c)]) + double(ze[size_t(k / group * nb + c)]);
                  }
              FAIL("no byte holds column " << c);
              return 0.0;
            };
            std::vector<float> c(size_t(M * ldc), -7.0f);
            set->rows(a.data(), lda, M, b.data(), bb, split, t.data(), group, K, c.data(), ldc);
            for (int64_t m = 0; m < M; ++m)
              for (int64_t n = 0; n < ldc; ++n) {
                const float got = c[size_t(m * ldc + n)];
                if (n >= nb) {
                  REQUIRE(got == -7.0f);
                  continue;
                }
                double want = 0, mag = 0;
                for (int64_t k = 0; k < K; ++k) {
                  want += double(a[size_t(m * lda + k)]) * weight(k, n);
                  mag += std::abs(double(a[size_t(m * lda + k)]) * weight(k, n));
                }
                INFO("C[" << m << ", " << n << "]");
                REQUIRE(std::abs(double(got) - want) <= double(K + 4) * 0x1p-24 * mag);
              }
            // The panel of rows [group, K): every weight dequantized, as float rounds (q - 8) * scale + zero.
            std::vector<float> panel(size_t((K - group) * (nb + 1)), -7.0f);
            set->panel(b.data(), bb, split, t.data(), group, group, K - group, panel.data(), nb + 1);
            for (int64_t k = group; k < K; ++k) {
              for (int64_t n = 0; n < nb; ++n)
                REQUIRE(std::abs(panel[size_t((k - group) * (nb + 1) + n)] - weight(k, n)) <=
                        0x1p-23 * (8 * 0.05 + 0.2));
              REQUIRE(panel[size_t((k - group) * (nb + 1) + nb)] == -7.0f);
            }
          }
  }
}
