// The linear-algebra fallbacks against hand-computed values: the float8 codecs (torch 1.13, which makes the
// conformance cases here, has no float8), _scaled_mm on them, the 4-bit dynamic-quantization pair (no torch
// here runs its reference path) and the layouts of the LAPACK-backed results. The conformance suite
// (tests/ops/opcases/linalg.py) compares the rest with torch.
#include "runtime/shim/fp8.hpp"
#include "op_test_util.hpp"

#include <cmath>
#include <cstring>

using namespace mpspack::test;
namespace fp8 = mpspack::shim::fp8;

namespace {

constexpr int32_t kE5M2 = 23, kE4M3 = 24, kE5M2Fnuz = 25, kE4M3Fnuz = 26;
const int32_t kF32 = aoti_torch_dtype_float32(), kU8 = aoti_torch_dtype_uint8(), kBF16 = aoti_torch_dtype_bfloat16();

// A [rows, cols] tensor of raw float8 codes.
struct Fp8Tensor {
  std::vector<uint8_t> codes;
  Handle h;
  Fp8Tensor(std::vector<int64_t> sizes, std::vector<uint8_t> c, int32_t dtype) : codes(std::move(c)) {
    h = from_blob(codes.data(), sizes, contiguous(sizes), dtype);
  }
};

}  // namespace

TEST_CASE("float8: each format decodes its landmarks exactly", "[shim][linalg][fp8]") {
  // e4m3fn: bias 7, no inf, NaN S.1111.111
  CHECK(fp8::decode(0x38, kE4M3) == 1.0f);
  CHECK(fp8::decode(0xB8, kE4M3) == -1.0f);
  CHECK(fp8::decode(0x7E, kE4M3) == 448.0f);
  CHECK(fp8::decode(0x08, kE4M3) == std::ldexp(1.0f, -6));  // smallest normal
  CHECK(fp8::decode(0x01, kE4M3) == std::ldexp(1.0f, -9));  // smallest subnormal: 1/8 * 2^-6
  CHECK(fp8::decode(0x3B, kE4M3) == 1.375f);
  CHECK(std::isnan(fp8::decode(0x7F, kE4M3)));
  CHECK(std::isnan(fp8::decode(0xFF, kE4M3)));
  // e5m2: bias 15, IEEE-like
  CHECK(fp8::decode(0x3C, kE5M2) == 1.0f);
  CHECK(fp8::decode(0x7B, kE5M2) == 57344.0f);
  CHECK(fp8::decode(0x01, kE5M2) == std::ldexp(1.0f, -16));
  CHECK(fp8::decode(0x7C, kE5M2) == INFINITY);
  CHECK(fp8::decode(0xFC, kE5M2) == -INFINITY);
  CHECK(std::isnan(fp8::decode(0x7D, kE5M2)));
  // the fnuz formats: bias 8 and 16, 0x80 the one NaN, no inf
  CHECK(fp8::decode(0x40, kE4M3Fnuz) == 1.0f);
  CHECK(fp8::decode(0x7F, kE4M3Fnuz) == 240.0f);
  CHECK(fp8::decode(0x01, kE4M3Fnuz) == std::ldexp(1.0f, -10));
  CHECK(std::isnan(fp8::decode(0x80, kE4M3Fnuz)));
  CHECK(fp8::decode(0x40, kE5M2Fnuz) == 1.0f);
  CHECK(fp8::decode(0x7F, kE5M2Fnuz) == 57344.0f);
  CHECK(fp8::decode(0x01, kE5M2Fnuz) == std::ldexp(1.0f, -17));
  CHECK(std::isnan(fp8::decode(0x80, kE5M2Fnuz)));
}

TEST_CASE("float8: encoding rounds to nearest even and overflows as c10 does", "[shim][linalg][fp8]") {
  CHECK(fp8::encode(1.0f, kE4M3) == 0x38);
  CHECK(fp8::encode(-1.0f, kE4M3) == 0xB8);
  CHECK(fp8::encode(1.0625f, kE4M3) == 0x38);  // halfway 1.0 / 1.125: the even code
  CHECK(fp8::encode(1.1875f, kE4M3) == 0x3A);  // halfway 1.125 / 1.25: the even code (1.25)
  CHECK(fp8::encode(1.07f, kE4M3) == 0x39);
  CHECK(fp8::encode(464.0f, kE4M3) == 0x7E);  // halfway 448 / (480): stays at the even 448
  CHECK(fp8::encode(465.0f, kE4M3) == 0x7F);  // past it: NaN, e4m3fn has no inf
  CHECK(fp8::encode(-1e6f, kE4M3) == 0xFF);
  CHECK(fp8::encode(NAN, kE4M3) == 0x7F);
  CHECK(fp8::encode(std::ldexp(1.0f, -10), kE4M3) == 0x00);  // halfway 0 / 2^-9: even (0)
  CHECK(fp8::encode(60000.0f, kE5M2) == 0x7B);
  CHECK(fp8::encode(61440.0f, kE5M2) == 0x7C);  // halfway 57344 / 65536 from an odd code: up, to inf
  CHECK(fp8::encode(-INFINITY, kE5M2) == 0xFC);
  CHECK(fp8::encode(-0.0f, kE4M3Fnuz) == 0x00);  // no negative zero
  CHECK(fp8::encode(241.0f, kE4M3Fnuz) == 0x7F);
  CHECK(fp8::encode(248.0f, kE4M3Fnuz) == 0x80);  // rounds past 240: the NaN
  for (int32_t dt : {kE5M2, kE4M3, kE5M2Fnuz, kE4M3Fnuz})
    for (int c = 0; c < 256; ++c) {
      const float v = fp8::decode(uint8_t(c), dt);
      if (std::isnan(v)) continue;
      INFO("dtype " << dt << " code " << c);
      CHECK(fp8::encode(v, dt) == (v == 0.0f && dt >= kE5M2Fnuz ? 0 : c));
    }
}

TEST_CASE("_scaled_mm: float8 operands times their scales, plus bias, to each output dtype", "[shim][linalg][fp8]") {
  // a = [1, 2] (e4m3fn 0x38, 0x40), b = [0.5, -1.5]^T (0x30, 0xBC); scales 2 and 0.5:
  // (2 * 1)(0.5 * 0.5) + (2 * 2)(0.5 * -1.5) = 0.5 - 3 = -2.5; with bias 1: -1.5.
  Fp8Tensor a({1, 2}, {0x38, 0x40}, kE4M3), b({2, 1}, {0x30, 0xBC}, kE4M3);
  TypedTensor sa({}, kF32, {2.0}), sb({}, kF32, {0.5}), bias({1}, kF32, {1.0}), sr({}, kF32, {0.5});
  int32_t f32 = kF32;
  Handle out;
  REQUIRE(aoti_torch_cpu__scaled_mm(a.h.get(), b.h.get(), sa.h.get(), sb.h.get(), nullptr, nullptr, &f32, 0,
                                    out.out()) == 0);
  CHECK(read_values(out.get()) == std::vector<double>{-2.5});
  AtenTensorHandle bias_h = bias.h.get(), sr_h = sr.h.get();
  Handle with_bias;
  REQUIRE(aoti_torch_cpu__scaled_mm(a.h.get(), b.h.get(), sa.h.get(), sb.h.get(), &bias_h, nullptr, &f32, 0,
                                    with_bias.out()) == 0);
  CHECK(read_values(with_bias.get()) == std::vector<double>{-1.5});
  // float8 output: divided by scale_result (0.5): -3.0, e4m3fn 0xC4.
  int32_t e4m3 = kE4M3;
  Handle f8;
  REQUIRE(aoti_torch_cpu__scaled_mm(a.h.get(), b.h.get(), sa.h.get(), sb.h.get(), &bias_h, &sr_h, &e4m3, 0, f8.out()) ==
          0);
  REQUIRE(dtype_of(f8.get()) == kE4M3);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(f8.get(), &p) == 0);
  CHECK(*static_cast<uint8_t*>(p) == 0xC4);
  // Per-row scales ([M, 1] and [1, N] with M = 2): torch 2.11's CPU kernel takes one scale each, and refuses.
  Fp8Tensor a2({2, 2}, {0x38, 0x40, 0x38, 0x40}, kE4M3);
  TypedTensor ra({2, 1}, kF32, {4.0, 4.0}), rb({1, 1}, kF32, {1.0});
  Handle rows;
  CHECK(aoti_torch_cpu__scaled_mm(a2.h.get(), b.h.get(), ra.h.get(), rb.h.get(), nullptr, nullptr, &f32, 0,
                                  rows.out()) != 0);
}

TEST_CASE("_scaled_mm refuses what torch's CPU kernel refuses", "[shim][linalg][fp8]") {
  Fp8Tensor a({2, 2}, {0x38, 0x40, 0x38, 0x40}, kE4M3), b({2, 3}, {0x30, 0xBC, 0, 0, 0x38, 0x38}, kE4M3);
  TypedTensor one({}, kF32, {1.0}), bad_rows({3, 1}, kF32, {1, 1, 1}), wrong_bias({2}, kF32, {1, 1});
  TypedTensor not_fp8({2, 2}, kF32, {1, 2, 3, 4});
  int32_t f32 = kF32;
  Handle out;
  CHECK(aoti_torch_cpu__scaled_mm(a.h.get(), b.h.get(), bad_rows.h.get(), one.h.get(), nullptr, nullptr, &f32, 0,
                                  out.out()) != 0);  // not one element
  CHECK(aoti_torch_cpu__scaled_mm(not_fp8.h.get(), b.h.get(), one.h.get(), one.h.get(), nullptr, nullptr, &f32, 0,
                                  out.out()) != 0);
  AtenTensorHandle bias_h = wrong_bias.h.get();
  CHECK(aoti_torch_cpu__scaled_mm(a.h.get(), b.h.get(), one.h.get(), one.h.get(), &bias_h, nullptr, &f32, 0,
                                  out.out()) != 0);
  CHECK(aoti_torch_cpu__scaled_mm(b.h.get(), a.h.get(), one.h.get(), one.h.get(), nullptr, nullptr, &f32, 0,
                                  out.out()) != 0);  // [2, 3] @ [2, 2]
}

TEST_CASE("_dyn_quant_*_4bit: packing concatenates, the product quantizes rows as torch's reference",
          "[shim][linalg][int4]") {
  // Channel-wise, K = 2: weights 3 (nibble 0xB, low) and -2 (0x6, high) in one byte 0x6B, scale 0.5.
  TypedTensor w({1, 1}, kU8, {0x6B}), s({1, 1}, kF32, {0.5});
  Handle packed;
  REQUIRE(aoti_torch_cpu__dyn_quant_pack_4bit_weight(w.h.get(), s.h.get(), nullptr, 2, 2, 1, packed.out()) == 0);
  CHECK(read_values(packed.get()) == std::vector<double>{107.0, 0.5});
  // x = [1, -1]: scale 255 / 2, zero point lrint(-0.5) = 0, q = [127 (128 clamped), -128];
  // 127 * 3 + (-128) * (-2) = 637, times 0.5, times 1 / 127.5.
  TypedTensor x({1, 2}, kF32, {1.0, -1.0});
  Handle y;
  REQUIRE(aoti_torch_cpu__dyn_quant_matmul_4bit(x.h.get(), packed.get(), 2, 2, 1, y.out()) == 0);
  REQUIRE(sizes_of(y.get()) == std::vector<int64_t>{1, 1});
  CHECK(read_values(y.get())[0] == double(637.0f * 0.5f * (1.0f / 127.5f)));

  // Group-wise, K = 64 in two blocks of 32, every weight +1 (nibble 9, bytes 0x99), scales 0.25 and 0.5.
  // x all ones: scale 255, zero point -128, q = 127, so (q + 128) = 255 and each block sums 255 * 32 = 8160.
  std::vector<double> bytes(32, double(0x99));
  TypedTensor wg({1, 32}, kU8, bytes), sg({1, 2}, kF32, {0.25, 0.5});
  Handle pg;
  REQUIRE(aoti_torch_cpu__dyn_quant_pack_4bit_weight(wg.h.get(), sg.h.get(), nullptr, 32, 64, 1, pg.out()) == 0);
  TypedTensor ones({1, 64}, kF32, std::vector<double>(64, 1.0));
  Handle yg;
  REQUIRE(aoti_torch_cpu__dyn_quant_matmul_4bit(ones.h.get(), pg.get(), 32, 64, 1, yg.out()) == 0);
  CHECK(read_values(yg.get())[0] == double((8160.0f * 0.25f + 8160.0f * 0.5f) * (1.0f / 255.0f)));

  // bfloat16 input: channel-wise only, the bias added last, the result truncated to bfloat16.
  TypedTensor bias({1}, kF32, {0.25});
  AtenTensorHandle bias_h = bias.h.get();
  Handle pb;
  REQUIRE(aoti_torch_cpu__dyn_quant_pack_4bit_weight(w.h.get(), s.h.get(), &bias_h, 2, 2, 1, pb.out()) == 0);
  CHECK(read_values(pb.get()) == std::vector<double>{107.0, 0.5, 0.25});
  TypedTensor xb({1, 2}, kBF16, {1.0, -1.0});
  Handle yb;
  REQUIRE(aoti_torch_cpu__dyn_quant_matmul_4bit(xb.h.get(), pb.get(), 2, 2, 1, yb.out()) == 0);
  float full = 637.0f * 0.5f * (1.0f / 127.5f) + 0.25f;
  uint32_t bits;
  std::memcpy(&bits, &full, 4);
  bits &= 0xFFFF0000u;
  std::memcpy(&full, &bits, 4);
  CHECK(read_values(yb.get())[0] == double(full));
  Handle yf;  // float32 with the same packing: the bias added last, no truncation
  REQUIRE(aoti_torch_cpu__dyn_quant_matmul_4bit(x.h.get(), pb.get(), 2, 2, 1, yf.out()) == 0);
  CHECK(read_values(yf.get())[0] == double(637.0f * 0.5f * (1.0f / 127.5f) + 0.25f));
  // Refusals: a block size that is neither K nor a multiple of 32 dividing K; group-wise bfloat16.
  Handle bad;
  CHECK(aoti_torch_cpu__dyn_quant_matmul_4bit(ones.h.get(), pg.get(), 16, 64, 1, bad.out()) != 0);
  TypedTensor onesb({1, 64}, kBF16, std::vector<double>(64, 1.0));
  CHECK(aoti_torch_cpu__dyn_quant_matmul_4bit(onesb.h.get(), pg.get(), 32, 64, 1, bad.out()) != 0);
}

TEST_CASE("geqrf and cholesky_inverse: hand-computed values in column-major results", "[shim][linalg][lapack]") {
  // [3, 4]^T: R = -5, v = [1, 0.5], tau = (beta - alpha) / beta = 1.6.
  TypedTensor a({2, 1}, kF32, {3.0, 4.0});
  Handle qr, tau;
  REQUIRE(aoti_torch_cpu_geqrf(a.h.get(), qr.out(), tau.out()) == 0);
  const auto q = read_values(qr.get());
  CHECK(q[0] == Approx(-5.0));
  CHECK(q[1] == Approx(0.5));
  CHECK(read_values(tau.get())[0] == Approx(1.6));
  // L = chol([[4, 2], [2, 3]]) = [[2, 0], [1, sqrt 2]]; the inverse is [[0.375, -0.25], [-0.25, 0.5]].
  TypedTensor l({2, 2}, aoti_torch_dtype_float64(), {2.0, 0.0, 1.0, std::sqrt(2.0)});
  Handle inv;
  REQUIRE(aoti_torch_cpu_cholesky_inverse(l.h.get(), 0, inv.out()) == 0);
  CHECK(strides_of(inv.get()) == std::vector<int64_t>{1, 2});
  const auto v = read_values(inv.get());
  const std::vector<double> want{0.375, -0.25, -0.25, 0.5};
  for (size_t i = 0; i < 4; ++i) CHECK(v[i] == Approx(want[i]).margin(1e-15));
  // A zero on the diagonal: singular, as torch says.
  TypedTensor z({2, 2}, kF32, {2.0, 0.0, 1.0, 0.0});
  Handle none;
  CHECK(aoti_torch_cpu_cholesky_inverse(z.h.get(), 0, none.out()) != 0);
}
