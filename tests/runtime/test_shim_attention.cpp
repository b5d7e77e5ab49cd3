// The CPU attention's kernels (attention_kernels.hpp: every set this CPU runs) against plain loops in double, and
// aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu on the layouts models hand it: masks broadcast with
// stride 0, causal with L != S, keys and values expanded over the heads with stride 0 or with fewer heads (grouped
// queries), bfloat16 and float16, decode steps of one query row, a query whose last dim is strided. test_shim_ops.cpp
// holds the first cases.
#include "runtime/shim/attention_kernels.hpp"
#include "op_test_util.hpp"
#include "runtime/tuning/tuning.hpp"

#include <mpspack/half.hpp>

#include <bit>
#include <cmath>
#include <iterator>
#include <limits>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32(), kBF16 = aoti_torch_dtype_bfloat16(), kF16 = aoti_torch_dtype_float16(),
              kBool = aoti_torch_dtype_bool();

std::vector<float> randoms(size_t n, uint32_t seed) { return random_floats(n, seed, -1.f, 1.f); }

}  // namespace

TEST_CASE("attention kernels: products, dot products, row max and exp sums against double loops",
          "[shim][ops][attention]") {
  for (const auto* k : mpspack::shim::attn::runnable_kernels()) {
    INFO("kernel set " << k->name);
    // Heights across the register blocks' tails, widths across the vector groups' and the scalar tail.
    for (int64_t M : {1, 5, 7, 13}) {
      for (int64_t N : {1, 7, 16, 37, 64, 130}) {
        for (int64_t K : {0, 1, 9, 64}) {
          INFO("M " << M << " N " << N << " K " << K);
          const int64_t lda = K + 3, ldb = N + 5, ldc = N + 2;
          const auto a = randoms(size_t(M * lda), 1), b = randoms(size_t(std::max<int64_t>(K, 1) * ldb), 2),
                     scale = randoms(size_t(M), 3);
          const auto bt = randoms(size_t(N * lda), 4);  // rows of B for dots: N rows of K, lda apart
          std::vector<float> c(size_t(M * ldc), 99.f), d(size_t(M * ldc), 99.f);
          k->product(M, N, K, 0.5f, nullptr, a.data(), lda, b.data(), ldb, c.data(), ldc);
          k->dots(M, N, K, 0.5f, a.data(), lda, bt.data(), lda, d.data(), ldc);
          std::vector<float> cs(size_t(M * ldc), 99.f);
          k->product(M, N, K, 0.5f, scale.data(), a.data(), lda, b.data(), ldb, cs.data(), ldc);
          for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
              double want = 0, want_dot = 0;
              for (int64_t r = 0; r < K; ++r) {
                want += double(a[size_t(m * lda + r)]) * b[size_t(r * ldb + n)];
                want_dot += double(a[size_t(m * lda + r)]) * bt[size_t(n * lda + r)];
              }
              REQUIRE(std::abs(c[size_t(m * ldc + n)] - 0.5 * want) < 1e-4);
              REQUIRE(std::abs(cs[size_t(m * ldc + n)] - scale[size_t(m)] * want) < 1e-4);
              REQUIRE(std::abs(d[size_t(m * ldc + n)] - 0.5 * want_dot) < 1e-4);
            }
          for (int64_t m = 0; m < M; ++m)  // the columns between rows are not written
            for (int64_t n = N; n < ldc; ++n) REQUIRE(c[size_t(m * ldc + n)] == 99.f);
        }
      }
    }
    // exp(s - max) over rows with -inf (masked) scores, scores far below the max, lengths across the tails.
    for (int64_t n : {1, 8, 15, 16, 33, 130}) {
      INFO("row of " << n);
      auto s = random_floats(size_t(n), 5, -30.f, 10.f);
      if (n > 1) s[size_t(n / 2)] = -std::numeric_limits<float>::infinity();
      if (n > 2) s[1] = -200.f;
      double mx = -INFINITY;
      for (float x : s) mx = std::max(mx, double(x));
      CHECK(k->row_max(s.data(), n) == float(mx));
      const auto before = s;
      const float sum = k->exp_sum(s.data(), n, float(mx));
      double want_sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double want = std::exp(double(before[size_t(j)] - float(mx)));  // the difference in float, as the op
        want_sum += want;
        INFO("j " << j << " score " << before[size_t(j)] << " got " << double(s[size_t(j)]) << " want " << want);
        REQUIRE(std::abs(s[size_t(j)] - want) <= 1e-6 * want + 1e-30);
      }
      CHECK(std::abs(sum - want_sum) < 1e-5 * want_sum);
    }
    CHECK(k->row_max(nullptr, 0) == -std::numeric_limits<float>::infinity());
    // bfloat16 widened and rounded back as half.hpp's scalar conversions do, bit for bit: ties to even either way,
    // the largest finite values rounding to infinity, NaNs to 0x7fc0, subnormals and signed zeros kept; lengths
    // across the vector width and its tail.
    const uint32_t specials[] = {0x3f808000u, 0x3f818000u, 0x3f80c000u, 0x3f807fffu, 0x7f7fffffu, 0xff7fffffu,
                                 0x7f800000u, 0xff800000u, 0x7fc00001u, 0xffffffffu, 0x00000001u, 0x80000000u,
                                 0x807fffffu, 0x00008000u, 0x00018000u, 0x7f7f8000u};
    for (int64_t n : {1, 15, 16, 17, 40}) {
      INFO("values " << n);
      auto f = random_floats(size_t(n), 6, -1e4f, 1e4f);
      for (size_t i = 0; i < f.size(); i += 2) f[i] = std::bit_cast<float>(specials[i / 2 % std::size(specials)]);
      std::vector<uint16_t> got(size_t(n) + 1, 0xabcd);
      k->narrow_bf16(f.data(), n, got.data());
      for (int64_t i = 0; i < n; ++i) {
        INFO("float bits " << std::hex << std::bit_cast<uint32_t>(f[size_t(i)]));
        REQUIRE(got[size_t(i)] == mpspack::float_to_bf16(f[size_t(i)]));
      }
      CHECK(got[size_t(n)] == 0xabcd);  // nothing past n written
      std::vector<uint16_t> h(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) h[size_t(i)] = uint16_t(0x8001u * uint32_t(i) + 0x3f80u);
      std::vector<float> back(size_t(n) + 1, 7.f);
      k->widen_bf16(h.data(), n, back.data());
      for (int64_t i = 0; i < n; ++i)
        REQUIRE(std::bit_cast<uint32_t>(back[size_t(i)]) ==
                std::bit_cast<uint32_t>(mpspack::bf16_to_float(h[size_t(i)])));
      CHECK(back[size_t(n)] == 7.f);
    }
    // The bf16 pair products, where the set has them (AVX-512 BF16): float32 sums of exact products.
    if (k->product_bf16 == nullptr) continue;
    for (int64_t M : {1, 5, 7, 13}) {
      for (int64_t N : {1, 7, 16, 37, 64, 130}) {
        for (int64_t P : {0, 1, 9, 32}) {
          INFO("bf16 pairs: M " << M << " N " << N << " P " << P);
          const int64_t lda = 2 * P + 3, ldb = N + 5, ldc = N + 2;
          std::vector<uint16_t> a;
          for (float x : randoms(size_t(M * lda), 7)) a.push_back(mpspack::float_to_bf16(x));
          const auto bf = randoms(size_t(std::max<int64_t>(P, 1) * ldb * 2), 8);
          std::vector<uint32_t> b(size_t(std::max<int64_t>(P, 1) * ldb));
          for (size_t i = 0; i < b.size(); ++i)
            b[i] = uint32_t(mpspack::float_to_bf16(bf[2 * i])) | uint32_t(mpspack::float_to_bf16(bf[2 * i + 1])) << 16;
          const auto scale = randoms(size_t(M), 9);
          std::vector<float> c(size_t(M * ldc), 99.f);
          k->product_bf16(M, N, P, 1.0f, scale.data(), a.data(), lda, b.data(), ldb, c.data(), ldc);
          for (int64_t m = 0; m < M; ++m) {
            for (int64_t n = 0; n < N; ++n) {
              double want = 0;
              for (int64_t p = 0; p < P; ++p) {
                const uint32_t w = b[size_t(p * ldb + n)];
                want += double(mpspack::bf16_to_float(a[size_t(m * lda + 2 * p)])) * mpspack::bf16_to_float(w & 0xffff);
                want +=
                    double(mpspack::bf16_to_float(a[size_t(m * lda + 2 * p + 1)])) * mpspack::bf16_to_float(w >> 16);
              }
              REQUIRE(std::abs(c[size_t(m * ldc + n)] - scale[size_t(m)] * want) < 1e-4);
            }
            for (int64_t n = N; n < ldc; ++n) REQUIRE(c[size_t(m * ldc + n)] == 99.f);  // nothing past N written
          }
        }
      }
    }
    for (int64_t n : {1, 16, 21}) {
      std::vector<uint16_t> r0(static_cast<size_t>(n)), r1(static_cast<size_t>(n));
      for (int64_t e = 0; e < n; ++e) r0[size_t(e)] = uint16_t(0x1000 + e), r1[size_t(e)] = uint16_t(0xf000 - e);
      std::vector<uint32_t> out(size_t(n) + 1, 5u);
      k->interleave_bf16(r0.data(), r1.data(), n, out.data());
      for (int64_t e = 0; e < n; ++e)
        REQUIRE(out[size_t(e)] == (uint32_t(r0[size_t(e)]) | uint32_t(r1[size_t(e)]) << 16));
      CHECK(out[size_t(n)] == 5u);
    }
  }
}

namespace {

// A 4-D operand in any dtype and strides over storage of its own, every storage element random (rounded to the
// dtype, so that the reference reads what the op reads).
struct Operand {
  int32_t dtype;
  std::vector<int64_t> sizes, strides;
  std::vector<float> f;       // float32 storage
  std::vector<uint16_t> h;    // bfloat16 / float16 storage
  std::vector<uint8_t> bits;  // bool storage
  Handle t;
  Operand(int32_t dt, std::vector<int64_t> sz, std::vector<int64_t> st, uint32_t seed, float lo = -1.f, float hi = 1.f)
      : dtype(dt), sizes(std::move(sz)), strides(std::move(st)) {
    int64_t extent = 1;
    for (size_t d = 0; d < sizes.size(); ++d) extent += (sizes[d] - 1) * strides[d];
    const auto v = random_floats(size_t(extent), seed, lo, hi);
    void* p;
    if (dt == kF32) {
      f = v;
      p = f.data();
    } else if (dt == kBool) {
      for (float x : v) bits.push_back(x > lo + (hi - lo) * 0.25f);  // three in four kept
      p = bits.data();
    } else {
      for (float x : v) h.push_back(dt == kBF16 ? mpspack::float_to_bf16(x) : mpspack::float_to_half(x));
      p = h.data();
    }
    t = from_blob(p, sizes, strides, dt);
  }
  double at(int64_t a, int64_t b, int64_t c, int64_t d) const {
    const int64_t i = a * strides[0] + b * strides[1] + c * strides[2] + d * strides[3];
    if (dtype == kF32) return f[size_t(i)];
    if (dtype == kBool) return bits[size_t(i)];
    return dtype == kBF16 ? mpspack::bf16_to_float(h[size_t(i)]) : mpspack::half_to_float(h[size_t(i)]);
  }
};

std::vector<int64_t> dense(int64_t B, int64_t H, int64_t L, int64_t E) { return {H * L * E, L * E, E, 1}; }
std::vector<int64_t> from_rows(int64_t B, int64_t H, int64_t L, int64_t E) {  // [B, L, H, E] memory
  return {L * H * E, E, H * E, 1};
}

// softmax(q k^T * scale + mask) v in double, top-left causal; rows with every key masked give zeros.
std::vector<double> reference(const Operand& q, const Operand& k, const Operand& v, const Operand* mask, bool causal,
                              double scale) {
  const int64_t B = q.sizes[0], H = q.sizes[1], L = q.sizes[2], E = q.sizes[3], S = k.sizes[2], Ev = v.sizes[3];
  const int64_t g = H / k.sizes[1];  // query heads per key/value head
  std::vector<double> out(size_t(B * H * L * Ev), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(static_cast<size_t>(S));
        double mx = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < E; ++e) dot += q.at(b, h, i, e) * k.at(b, h / g, j, e);
          s[size_t(j)] = dot * scale;
          if (mask) {
            const double m =
                mask->at(mask->sizes[0] == 1 ? 0 : b, mask->sizes[1] == 1 ? 0 : h, mask->sizes[2] == 1 ? 0 : i, j);
            if (mask->dtype == kBool) s[size_t(j)] = m == 0 ? -INFINITY : s[size_t(j)];
            else s[size_t(j)] += m;
          }
          if (causal && j > i) s[size_t(j)] = -INFINITY;
          mx = std::max(mx, s[size_t(j)]);
        }
        if (mx == -INFINITY) continue;
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += std::exp(s[size_t(j)] - mx);
        for (int64_t j = 0; j < S; ++j)
          for (int64_t e = 0; e < Ev; ++e)
            out[size_t(((b * H + h) * L + i) * Ev + e)] += std::exp(s[size_t(j)] - mx) / sum * v.at(b, h / g, j, e);
      }
  return out;
}

// The op's output in logical order, as double, whatever its dtype.
std::vector<double> read_any(AtenTensorHandle t) {
  const auto& x = mpspack::shim::deref(t);
  std::vector<double> got;
  for (int64_t a = 0; a < x.sizes[0]; ++a)
    for (int64_t b = 0; b < x.sizes[1]; ++b)
      for (int64_t c = 0; c < x.sizes[2]; ++c)
        for (int64_t d = 0; d < x.sizes[3]; ++d)
          got.push_back(mpspack::shim::load_as_double(
              x.data() +
                  (a * x.strides[0] + b * x.strides[1] + c * x.strides[2] + d * x.strides[3]) * int64_t(x.itemsize()),
              x.dtype));
  return got;
}

void check(const Operand& q, const Operand& k, const Operand& v, const Operand* mask, bool causal, double tol) {
  const auto want = reference(q, k, v, mask, causal, 1.0 / std::sqrt(double(q.sizes[3])));
  AtenTensorHandle mh = mask ? mask->t.get() : nullptr;
  Handle O, LSE;
  REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
              q.t.get(), k.t.get(), v.t.get(), 0.0, causal, mask ? &mh : nullptr, nullptr, O.out(), LSE.out()) == 0);
  CHECK(sizes_of(O.get()) == std::vector<int64_t>{q.sizes[0], q.sizes[1], q.sizes[2], v.sizes[3]});
  const auto got = read_any(O.get());
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::abs(got[i] - want[i]);
    if (!(diff <= tol)) ++bad;
    worst = std::max(worst, diff);
  }
  INFO("elements out of tolerance: " << bad << " of " << got.size() << ", max abs diff " << worst);
  REQUIRE(bad == 0);
}

}  // namespace

TEST_CASE("sdpa flash_attention_for_cpu: the layouts and dtypes models hand it", "[shim][ops][attention]") {
  const int64_t B = 2, H = 3, L = 50, S = 45, E = 20;
  SECTION("a padding mask [B,1,1,S] broadcast to [B,H,L,S] with stride 0, float32 q, k, v from rows") {
    Operand q(kF32, {B, H, L, E}, from_rows(B, H, L, E), 1), k(kF32, {B, H, S, E}, from_rows(B, H, S, E), 2),
        v(kF32, {B, H, S, E}, from_rows(B, H, S, E), 3);
    Operand m(kF32, {B, H, L, S}, {S, 0, 0, 1}, 4, -3.f, 1.f);
    check(q, k, v, &m, false, 2e-5);
    Operand mb(kBool, {B, 1, L, S}, {S, S, 0, 1}, 5);
    check(q, k, v, &mb, false, 2e-5);
  }
  SECTION("a dense [B,1,L,S] mask with causal, the query rows more than the keys and fewer") {
    for (const auto& [l, s] : {std::pair<int64_t, int64_t>{70, 40}, {20, 53}}) {
      INFO("L " << l << " S " << s);
      Operand q(kF32, {B, H, l, E}, dense(B, H, l, E), 6), k(kF32, {B, H, s, E}, dense(B, H, s, E), 7),
          v(kF32, {B, H, s, E}, dense(B, H, s, E), 8);
      check(q, k, v, nullptr, true, 2e-5);
      Operand m(kF32, {B, 1, l, s}, dense(B, 1, l, s), 9, -2.f, 2.f);
      check(q, k, v, &m, true, 2e-5);
    }
  }
  SECTION("keys and values expanded over the heads with stride 0 (one head shared, as grouped queries)") {
    Operand q(kF32, {B, H, L, E}, dense(B, H, L, E), 10), k(kF32, {B, H, S, E}, {S * E, 0, E, 1}, 11),
        v(kF32, {B, H, S, E}, {S * E, 0, E, 1}, 12);
    check(q, k, v, nullptr, true, 2e-5);
  }
  SECTION("grouped-query attention: fewer key/value heads than query heads, each shared by a group in turn") {
    const int64_t Hq = 6, Hk = 2;
    for (const int64_t l : {1, 50}) {  // a decode step (dot products) and blocks (transposed keys, shared)
      INFO("L " << l);
      Operand q(kF32, {B, Hq, l, E}, from_rows(B, Hq, l, E), 24), k(kF32, {B, Hk, S, E}, from_rows(B, Hk, S, E), 25),
          v(kF32, {B, Hk, S, E}, dense(B, Hk, S, E), 26);
      check(q, k, v, nullptr, true, 2e-5);
      Operand kb(kBF16, {B, Hk, S, E}, dense(B, Hk, S, E), 27), vb(kBF16, {B, Hk, S, E}, dense(B, Hk, S, E), 28),
          qb(kBF16, {B, Hq, l, E}, dense(B, Hq, l, E), 29);
      check(qb, kb, vb, nullptr, false, 4e-3);
    }
    Operand q(kF32, {B, 4, L, E}, dense(B, 4, L, E), 30), k(kF32, {B, 3, S, E}, dense(B, 3, S, E), 31);
    Handle O, LSE;  // 4 query heads do not split over 3 key/value heads
    CHECK(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(q.t.get(), k.t.get(), k.t.get(), 0.0, 0, nullptr,
                                                                     nullptr, O.out(), LSE.out()) == 1);
  }
  SECTION("bfloat16 and float16 q, k, v, mask and output: float32 math, one rounding at the end") {
    for (const int32_t dt : {kBF16, kF16}) {
      INFO("dtype " << dt);
      Operand q(dt, {B, H, L, E}, from_rows(B, H, L, E), 13), k(dt, {B, H, S, E}, from_rows(B, H, S, E), 14),
          v(dt, {B, H, S, E}, dense(B, H, S, E), 15);
      Operand m(dt, {B, 1, L, S}, dense(B, 1, L, S), 16, -2.f, 2.f);
      // The result is rounded once to the dtype: half an ulp of values under 1 (bf16: 2^-9, f16: 2^-12).
      const double tol = dt == kBF16 ? 4e-3 : 5e-4;
      check(q, k, v, &m, true, tol);
      check(q, k, v, nullptr, false, tol);
    }
  }
  SECTION("decode steps: one to three query rows against a longer cache, masked, float32 and bfloat16") {
    for (const int64_t l : {1, 3}) {
      for (const int32_t dt : {kF32, kBF16}) {
        INFO("L " << l << " dtype " << dt);
        const int64_t Sc = 77;
        Operand q(dt, {1, H, l, 64}, dense(1, H, l, 64), 17), k(dt, {1, H, Sc, 64}, dense(1, H, Sc, 64), 18),
            v(dt, {1, H, Sc, 64}, dense(1, H, Sc, 64), 19);
        Operand m(dt, {1, 1, l, Sc}, {Sc, Sc, 0, 1}, 20, -2.f, 2.f);
        check(q, k, v, &m, false, dt == kF32 ? 2e-5 : 4e-3);
      }
    }
  }
  SECTION("a query whose last dim is strided, a value width other than the key's") {
    Operand q(kF32, {B, H, L, E}, {H * L * E * 2, L * E * 2, E * 2, 2}, 21),
        k(kF32, {B, H, S, E}, dense(B, H, S, E), 22), v(kF32, {B, H, S, 24}, dense(B, H, S, 24), 23);
    check(q, k, v, nullptr, false, 2e-5);
  }
}

TEST_CASE("sdpa flash_attention_for_cpu: blocks of any height give the reference's result", "[shim][ops][attention]") {
  // MPSPACK_CPU_ATTENTION_ROWS sets the height: 1-3 rows take dot products with the keys where they are, taller
  // blocks the transposed keys a thread keeps for its next block of the same head, a last block shorter than the
  // rest, a block as tall as the sequence.
  const int64_t B = 2, H = 3, L = 50, S = 45, E = 20;
  for (const uint64_t rows : {1, 3, 7, 16, 49, 1000}) {
    mpspack::Tuning t = mpspack::tuning();
    t.cpu_attention_rows = rows;
    mpspack::ScopedTuning scoped(t);
    INFO("rows per block " << rows);
    Operand q(kF32, {B, H, L, E}, from_rows(B, H, L, E), 50), k(kF32, {B, H, S, E}, from_rows(B, H, S, E), 51),
        v(kF32, {B, H, S, E}, dense(B, H, S, E), 52);
    check(q, k, v, nullptr, false, 2e-5);
    check(q, k, v, nullptr, true, 2e-5);
    Operand m(kF32, {B, 1, L, S}, dense(B, 1, L, S), 53, -2.f, 2.f);
    check(q, k, v, &m, false, 2e-5);
    Operand qb(kBF16, {B, H, L, E}, dense(B, H, L, E), 54), kb(kBF16, {B, 1, S, E}, dense(B, 1, S, E), 55),
        vb(kBF16, {B, 1, S, E}, dense(B, 1, S, E), 56);
    check(qb, kb, vb, nullptr, true, 4e-3);
    // Values whose rows are 1 KiB apart (4 heads of 64 floats from [B, S, H, E] rows) and outgrow L1: copied into
    // rows of their own (copy_values), and kept for the thread's next block of the same head.
    const int64_t Hv = 4, Sv = 200, Ev = 64;
    Operand qv(kF32, {1, Hv, L, Ev}, from_rows(1, Hv, L, Ev), 57),
        kv(kF32, {1, Hv, Sv, Ev}, from_rows(1, Hv, Sv, Ev), 58),
        vv(kF32, {1, Hv, Sv, Ev}, from_rows(1, Hv, Sv, Ev), 59);
    check(qv, kv, vv, nullptr, false, 2e-5);
    check(qv, kv, vv, nullptr, true, 2e-5);
  }
}

TEST_CASE("sdpa flash_attention_for_cpu: bfloat16 on bf16 pairs and widened to float32", "[shim][ops][attention]") {
  // Both routes against the double reference; where this CPU has the pairs (AVX-512 BF16), the two must differ
  // (the probabilities are rounded to bf16 on one), else the switch changes nothing.
  const int64_t B = 2, H = 4, L = 50;
  std::vector<double> outputs[2];
  for (const bool pairs : {true, false}) {
    mpspack::Tuning t = mpspack::tuning();
    t.cpu_attention_pairs = pairs;
    mpspack::ScopedTuning scoped(t);
    INFO("pairs route " << pairs);
    for (const int64_t S : {45, 64}) {  // an odd and an even number of keys (values paired by rows)
      for (const int64_t E : {20, 64}) {
        INFO("S " << S << " E " << E);
        Operand q(kBF16, {B, H, L, E}, from_rows(B, H, L, E), 40), k(kBF16, {B, 2, S, E}, from_rows(B, 2, S, E), 41),
            v(kBF16, {B, 2, S, 24}, dense(B, 2, S, 24), 42);
        check(q, k, v, nullptr, true, 4e-3);
        check(q, k, v, nullptr, false, 4e-3);
        Operand m(kBF16, {B, 1, L, S}, dense(B, 1, L, S), 43, -2.f, 2.f);
        check(q, k, v, &m, false, 4e-3);
      }
    }
    Operand q(kBF16, {B, H, L, 64}, dense(B, H, L, 64), 44), k(kBF16, {B, H, L, 64}, dense(B, H, L, 64), 45),
        v(kBF16, {B, H, L, 64}, dense(B, H, L, 64), 46);
    Handle O, LSE;
    REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(q.t.get(), k.t.get(), v.t.get(), 0.0, 1, nullptr,
                                                                       nullptr, O.out(), LSE.out()) == 0);
    outputs[pairs ? 0 : 1] = read_any(O.get());
  }
  if (mpspack::shim::attn::best_kernels().product_bf16 != nullptr) CHECK(outputs[0] != outputs[1]);
  else CHECK(outputs[0] == outputs[1]);
}
