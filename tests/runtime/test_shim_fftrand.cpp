// _fft_r2c/_fft_c2c against a plain DFT, hann_window's values, the random ops' ranges and moments, randperm,
// bernoulli's and native_dropout's exact cases, and the fused fake-quant helper against values torch gave.
//
// The moment checks draw n = 200000 values and allow 6 standard errors: for a mean, 6 * sigma / sqrt(n); for a
// variance, 6 * sqrt((mu4 - sigma^4) / n) with mu4 the distribution's fourth central moment. The sample mean and
// variance are sums of n independent terms, so they are normal to within far less than these margins, and a
// 6-sigma miss has probability about 2e-9 per check: a failure means a wrong distribution, not bad luck.
#include "op_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <set>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32(), kF64 = aoti_torch_dtype_float64(), kI64 = aoti_torch_dtype_int64(),
              kBool = aoti_torch_dtype_bool(), kU8 = aoti_torch_dtype_uint8(), kC64 = aoti_torch_dtype_complex64();
constexpr int64_t kN = 200000;

struct Moments {
  double mean, var, min, max;
};
Moments moments(const std::vector<double>& v) {
  Moments m{0, 0, v.empty() ? 0 : v[0], v.empty() ? 0 : v[0]};
  for (double x : v) m.mean += x, m.min = std::min(m.min, x), m.max = std::max(m.max, x);
  m.mean /= double(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= double(v.size() - 1);
  return m;
}
// Mean and variance within 6 standard errors of (mean, var); mu4 is the fourth central moment.
void require_moments(const std::vector<double>& v, double mean, double var, double mu4) {
  const Moments m = moments(v);
  const double n = double(v.size());
  INFO("sample mean " << m.mean << " variance " << m.var << " expected " << mean << ", " << var);
  REQUIRE(std::abs(m.mean - mean) <= 6 * std::sqrt(var / n));
  REQUIRE(std::abs(m.var - var) <= 6 * std::sqrt((mu4 - var * var) / n));
}

// complex64 elements of t in logical (row-major) order, as complex<double>.
std::vector<std::complex<double>> read_c64(AtenTensorHandle t) {
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(t, &p) == 0);
  const float* f = static_cast<const float*>(p);
  const auto strides = strides_of(t);
  std::vector<std::complex<double>> out;
  for_each_index(sizes_of(t), [&](std::span<const int64_t> idx) {
    const int64_t at = 2 * offset_of(idx, strides);
    out.emplace_back(f[at], f[at + 1]);
  });
  return out;
}

}  // namespace

TEST_CASE("_fft_r2c over dims 0 and 2 equals a plain DFT, onesided and scaled by 1/sqrt(n)", "[shim][fft]") {
  const std::vector<int64_t> sizes{3, 4, 5};
  const auto values = small_integers(60, 7);
  // Stored transposed (dims 0 and 2 swapped in memory) so the input is not contiguous.
  TypedTensor x(sizes, {1, 3, 12}, kF32, values);
  const int64_t dims[] = {0, 2};
  Handle y;
  REQUIRE(aoti_torch_cpu__fft_r2c(x.h.get(), dims, 2, 1, 1, y.out()) == 0);
  REQUIRE(sizes_of(y.get()) == std::vector<int64_t>{3, 4, 3});
  // torch's (MKL's) layout: batch dim 1 outermost, then signal dim 0, then the halved last signal dim 2.
  REQUIRE(strides_of(y.get()) == std::vector<int64_t>{3, 9, 1});
  REQUIRE(dtype_of(y.get()) == kC64);
  const auto got = read_c64(y.get());
  const double pi = std::acos(-1.0), scale = 1.0 / std::sqrt(15.0);
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t c = 0; c < 3; ++c) {
        std::complex<double> want = 0;
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t k = 0; k < 5; ++k)
            want +=
                values[size_t(i * 20 + b * 5 + k)] * std::polar(1.0, -2 * pi * (double(a * i) / 3 + double(c * k) / 5));
        const auto g = got[size_t(a * 12 + b * 3 + c)];
        REQUIRE(std::abs(g - want * scale) <= 1e-5);
      }
}

TEST_CASE("_fft_c2c forward then backward with normalization 2 gives the input back", "[shim][fft]") {
  std::vector<float> data(2 * 24);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(int(i * 7 % 11) - 5);
  Handle x = from_blob(data.data(), {4, 6}, {6, 1}, kC64);
  const int64_t dims[] = {-1, 0};
  Handle f, b;
  REQUIRE(aoti_torch_cpu__fft_c2c(x.get(), dims, 2, 0, 1, f.out()) == 0);
  REQUIRE(aoti_torch_cpu__fft_c2c(f.get(), dims, 2, 2, 0, b.out()) == 0);
  const auto back = read_c64(b.get());
  for (size_t i = 0; i < back.size(); ++i) {
    REQUIRE(std::abs(back[i].real() - data[2 * i]) <= 1e-5);
    REQUIRE(std::abs(back[i].imag() - data[2 * i + 1]) <= 1e-5);
  }
  // The zero bin of the forward transform is the plain sum.
  double sum = 0;
  for (size_t i = 0; i < 24; ++i) sum += data[2 * i];
  REQUIRE(std::abs(read_c64(f.get())[0].real() - sum) <= 1e-4);
}

TEST_CASE("_fft_r2c refuses complex, integer and repeated-dim inputs and bad normalizations", "[shim][fft]") {
  TypedTensor x({3, 4}, kF32, small_integers(12, 1));
  TypedTensor i({3, 4}, kI64, small_integers(12, 1));
  const int64_t d1[] = {1}, dup[] = {1, -1}, far[] = {2};
  Handle y;
  REQUIRE(aoti_torch_cpu__fft_r2c(i.h.get(), d1, 1, 0, 1, y.out()) == 1);
  REQUIRE(aoti_torch_cpu__fft_r2c(x.h.get(), dup, 2, 0, 1, y.out()) == 1);
  REQUIRE(aoti_torch_cpu__fft_r2c(x.h.get(), far, 1, 0, 1, y.out()) == 1);
  REQUIRE(aoti_torch_cpu__fft_r2c(x.h.get(), d1, 1, 3, 1, y.out()) == 1);
  REQUIRE(aoti_torch_cpu__fft_r2c(x.h.get(), d1, 0, 0, 1, y.out()) == 1);
  TypedTensor empty_signal({3, 0}, kF32, {});
  REQUIRE(aoti_torch_cpu__fft_r2c(empty_signal.h.get(), d1, 1, 0, 1, y.out()) == 1);
  REQUIRE(aoti_torch_cpu__fft_c2c(x.h.get(), d1, 1, 0, 1, y.out()) == 1);
}

TEST_CASE("hann_window is torch's periodic window", "[shim][fft]") {
  Handle w;
  REQUIRE(aoti_torch_cpu_hann_window(5, nullptr, nullptr, nullptr, 0, nullptr, w.out()) == 0);
  REQUIRE(dtype_of(w.get()) == kF32);
  const auto v = read_values(w.get());
  const double want[] = {0.0, 0.3454915, 0.9045085, 0.9045085, 0.3454915};
  for (size_t i = 0; i < 5; ++i) REQUIRE(std::abs(v[i] - want[i]) <= 1e-6);
  Handle one, none, bad;
  REQUIRE(aoti_torch_cpu_hann_window(1, nullptr, nullptr, nullptr, 0, nullptr, one.out()) == 0);
  REQUIRE(read_values(one.get()) == std::vector<double>{1.0});
  REQUIRE(aoti_torch_cpu_hann_window(0, nullptr, nullptr, nullptr, 0, nullptr, none.out()) == 0);
  REQUIRE(sizes_of(none.get()) == std::vector<int64_t>{0});
  int32_t i64 = kI64;
  REQUIRE(aoti_torch_cpu_hann_window(4, &i64, nullptr, nullptr, 0, nullptr, bad.out()) == 1);
  REQUIRE(aoti_torch_cpu_hann_window(-1, nullptr, nullptr, nullptr, 0, nullptr, bad.out()) == 1);
}

TEST_CASE("rand is uniform on 0 to 1 (1 left out) and randn standard normal, float32 unless a dtype is given",
          "[shim][random]") {
  const int64_t size[] = {kN};
  Handle u, g;
  REQUIRE(aoti_torch_cpu_rand_generator(size, 1, nullptr, nullptr, nullptr, nullptr, 0, nullptr, u.out()) == 0);
  REQUIRE(dtype_of(u.get()) == kF32);
  const auto uv = read_values(u.get());
  const Moments um = moments(uv);
  REQUIRE(um.min >= 0.0);
  REQUIRE(um.max < 1.0);
  require_moments(uv, 0.5, 1.0 / 12, 1.0 / 80);
  int32_t f64 = kF64;
  REQUIRE(aoti_torch_cpu_randn_generator(size, 1, nullptr, &f64, nullptr, nullptr, 0, nullptr, g.out()) == 0);
  REQUIRE(dtype_of(g.get()) == kF64);
  require_moments(read_values(g.get()), 0.0, 1.0, 3.0);
  Handle plain;
  REQUIRE(aoti_torch_cpu_rand(size, 1, nullptr, nullptr, nullptr, 0, nullptr, plain.out()) == 0);
  REQUIRE(dtype_of(plain.get()) == kF32);
  int32_t i64 = kI64;
  Handle bad;
  REQUIRE(aoti_torch_cpu_rand(size, 1, &i64, nullptr, nullptr, 0, nullptr, bad.out()) == 1);
  const int64_t negative[] = {2, -1};
  REQUIRE(aoti_torch_cpu_randn(negative, 2, nullptr, nullptr, nullptr, 0, nullptr, bad.out()) == 1);
}

TEST_CASE("randint gives every integer from low to high - 1 and none outside them", "[shim][random]") {
  const int64_t size[] = {kN};
  Handle r, f;
  int32_t i64 = kI64;
  REQUIRE(aoti_torch_cpu_randint_low(-3, 7, size, 1, &i64, nullptr, nullptr, 0, nullptr, r.out()) == 0);
  REQUIRE(dtype_of(r.get()) == kI64);
  // A null dtype is torch's default dtype, as torch's own shim gives it.
  REQUIRE(aoti_torch_cpu_randint_generator(5, size, 1, nullptr, nullptr, nullptr, nullptr, 0, nullptr, f.out()) == 0);
  REQUIRE(dtype_of(f.get()) == kF32);
  const auto v = read_values(r.get());
  REQUIRE(std::set<double>(v.begin(), v.end()) == std::set<double>{-3, -2, -1, 0, 1, 2, 3, 4, 5, 6});
  // Discrete uniform on 10 values: variance (10^2 - 1) / 12, fourth central moment (3 * 10^2 - 7)(10^2 - 1) / 240.
  require_moments(v, 1.5, 99.0 / 12, 293.0 * 99.0 / 240);
  Handle h, bad;
  int32_t u8 = kU8;
  REQUIRE(aoti_torch_cpu_randint(2, size, 1, &u8, nullptr, nullptr, 0, nullptr, h.out()) == 0);
  const auto bits = read_values(h.get());
  REQUIRE(std::set<double>(bits.begin(), bits.end()) == std::set<double>{0, 1});
  REQUIRE(aoti_torch_cpu_randint_low(5, 5, size, 1, nullptr, nullptr, nullptr, 0, nullptr, bad.out()) == 1);
  REQUIRE(aoti_torch_cpu_randint(300, size, 1, &u8, nullptr, nullptr, 0, nullptr, bad.out()) == 1);
}

TEST_CASE("randint_low_out resizes out and fills it", "[shim][random]") {
  Handle out = empty({2}, {1}, kI64);
  const int64_t size[] = {3, 50};
  REQUIRE(aoti_torch_cpu_randint_low_out(out.get(), 10, 12, size, 2) == 0);
  REQUIRE(sizes_of(out.get()) == std::vector<int64_t>{3, 50});
  REQUIRE(strides_of(out.get()) == std::vector<int64_t>{50, 1});
  for (double x : read_values(out.get())) REQUIRE((x == 10 || x == 11));
}

TEST_CASE("randperm is a permutation of 0..n-1", "[shim][random]") {
  Handle p, e, bad;
  REQUIRE(aoti_torch_cpu_randperm(1000, nullptr, nullptr, nullptr, 0, nullptr, p.out()) == 0);
  REQUIRE(dtype_of(p.get()) == kI64);
  auto v = read_values(p.get());
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> want(1000);
  std::iota(want.begin(), want.end(), 0.0);
  REQUIRE(sorted == want);
  REQUIRE(v != want);  // 1/1000! that a shuffle leaves it in order
  REQUIRE(aoti_torch_cpu_randperm(0, nullptr, nullptr, nullptr, 0, nullptr, e.out()) == 0);
  REQUIRE(sizes_of(e.get()) == std::vector<int64_t>{0});
  int32_t u8 = kU8;
  REQUIRE(aoti_torch_cpu_randperm(300, &u8, nullptr, nullptr, 0, nullptr, bad.out()) == 1);
  REQUIRE(aoti_torch_cpu_randperm(-1, nullptr, nullptr, nullptr, 0, nullptr, bad.out()) == 1);
}

TEST_CASE("normal_functional, uniform and exponential draw their distributions into tensors like self",
          "[shim][random]") {
  Handle self = empty({400, 500}, {1, 400}, kF32);  // column-major: the results keep that layout
  Handle n, u, x, bad;
  REQUIRE(aoti_torch_cpu_normal_functional(self.get(), 2.0, 3.0, nullptr, n.out()) == 0);
  REQUIRE(strides_of(n.get()) == std::vector<int64_t>{1, 400});
  require_moments(read_values(n.get()), 2.0, 9.0, 3 * 81.0);
  REQUIRE(aoti_torch_cpu_uniform(self.get(), -2.0, 5.0, nullptr, u.out()) == 0);
  const auto uv = read_values(u.get());
  REQUIRE(moments(uv).min >= -2.0);
  REQUIRE(moments(uv).max < 5.0);
  require_moments(uv, 1.5, 49.0 / 12, 2401.0 / 80);
  REQUIRE(aoti_torch_cpu_exponential(self.get(), 2.0, nullptr, x.out()) == 0);
  const auto xv = read_values(x.get());
  REQUIRE(moments(xv).min >= 0.0);
  require_moments(xv, 0.5, 0.25, 9.0 / 16);  // Exp(2): variance 1/4, fourth central moment 9/2^4
  REQUIRE(aoti_torch_cpu_normal_functional(self.get(), 0.0, -1.0, nullptr, bad.out()) == 1);
  REQUIRE(aoti_torch_cpu_uniform(self.get(), 2.0, 1.0, nullptr, bad.out()) == 1);
  REQUIRE(aoti_torch_cpu_exponential(self.get(), 0.0, nullptr, bad.out()) == 1);
  Handle ints = empty({4}, {1}, kI64);
  REQUIRE(aoti_torch_cpu_uniform(ints.get(), 0.0, 1.0, nullptr, bad.out()) == 1);
}

TEST_CASE("bernoulli_ with p = 0 and p = 1 is exact, and p = 0.3 keeps 30%", "[shim][random]") {
  for (int32_t dt : {kF32, kI64, kBool}) {
    TypedTensor t({50, 4}, {1, 50}, dt, std::vector<double>(200, 1.0));
    REQUIRE(aoti_torch_cpu_bernoulli__float(t.h.get(), 0.0, nullptr) == 0);
    for (double v : read_values(t.h.get())) REQUIRE(v == 0.0);
    REQUIRE(aoti_torch_cpu_bernoulli__float(t.h.get(), 1.0, nullptr) == 0);
    for (double v : read_values(t.h.get())) REQUIRE(v == 1.0);
  }
  Handle t = empty({kN}, {1}, kF32);
  REQUIRE(aoti_torch_cpu_bernoulli__float(t.get(), 0.3, nullptr) == 0);
  // Bernoulli(p): variance p(1-p), fourth central moment p(1-p)(1 - 3p(1-p)).
  require_moments(read_values(t.get()), 0.3, 0.21, 0.21 * (1 - 3 * 0.21));
  REQUIRE(aoti_torch_cpu_bernoulli__float(t.get(), 1.5, nullptr) == 1);
}

TEST_CASE("native_dropout zeroes with probability p and scales the rest by 1/(1-p), and train false is the identity",
          "[shim][random]") {
  std::vector<double> values(static_cast<size_t>(kN));
  for (size_t i = 0; i < values.size(); ++i) values[i] = double(int(i % 17) - 8) / 4;
  TypedTensor x({kN}, kF32, values);
  Handle out, mask;
  int32_t train = 1;
  REQUIRE(aoti_torch_cpu_native_dropout(x.h.get(), 0.25, &train, out.out(), mask.out()) == 0);
  REQUIRE(dtype_of(mask.get()) == kBool);
  const auto o = read_values(out.get()), m = read_values(mask.get());
  for (size_t i = 0; i < o.size(); ++i) REQUIRE(o[i] == (m[i] != 0 ? double(float(values[i]) * float(1 / 0.75)) : 0.0));
  require_moments(m, 0.75, 0.1875, 0.1875 * (1 - 3 * 0.1875));
  Handle same, all_true;
  train = 0;
  REQUIRE(aoti_torch_cpu_native_dropout(x.h.get(), 0.25, &train, same.out(), all_true.out()) == 0);
  REQUIRE(read_values(same.get()) == read_values(x.h.get()));
  for (double v : read_values(all_true.get())) REQUIRE(v == 1.0);
  Handle zeros, none_kept, bad0, bad1;
  REQUIRE(aoti_torch_cpu_native_dropout(x.h.get(), 1.0, nullptr, zeros.out(), none_kept.out()) == 0);
  for (double v : read_values(zeros.get())) REQUIRE(v == 0.0);
  for (double v : read_values(none_kept.get())) REQUIRE(v == 0.0);
  REQUIRE(aoti_torch_cpu_native_dropout(x.h.get(), 1.5, nullptr, bad0.out(), bad1.out()) == 1);
}

TEST_CASE("_fused_moving_avg_obs_fq_helper matches torch per tensor and per row", "[shim][fake_quant]") {
  const std::vector<double> xv{-1.5, 0.25, 2.0, 0.7, -0.3, 3.1};
  TypedTensor x({2, 3}, kF32, xv);
  TypedTensor on({}, kI64, {1});
  SECTION("per tensor, moving average") {
    TypedTensor rmin({1}, kF32, {-1.0}), rmax({1}, kF32, {2.5}), scale({1}, kF32, {1.0});
    TypedTensor zp({1}, aoti_torch_dtype_int32(), {0});
    Handle out, mask;
    REQUIRE(aoti_torch_cpu__fused_moving_avg_obs_fq_helper(x.h.get(), on.h.get(), on.h.get(), rmin.h.get(),
                                                           rmax.h.get(), scale.h.get(), zp.h.get(), 0.1, 0, 15, 0, 0, 0,
                                                           out.out(), mask.out()) == 0);
    // What torch 1.13 gave for these inputs.
    const std::vector<float> want{-0.9626666307449341f, 0.24066665768623352f,  1.9253332614898682f,
                                  0.722000002861023f,   -0.24066665768623352f, 2.6473331451416016f};
    const auto got = read_f32(out.get());
    for (size_t i = 0; i < 6; ++i) REQUIRE(got[i] == want[i]);
    REQUIRE(read_values(mask.get()) == std::vector<double>{0, 1, 1, 1, 1, 0});
    REQUIRE(read_f32(rmin.h.get())[0] == -1.0499999523162842f);
    REQUIRE(read_f32(rmax.h.get())[0] == 2.559999942779541f);
    REQUIRE(read_f32(scale.h.get())[0] == 0.24066665768623352f);
    REQUIRE(read_values(zp.h.get())[0] == 4);
  }
  SECTION("per row, symmetric, functional") {
    const double inf = std::numeric_limits<double>::infinity();
    TypedTensor rmin({2}, kF32, {inf, inf}), rmax({2}, kF32, {-inf, -inf}), scale({2}, kF32, {1, 1});
    TypedTensor zp({2}, aoti_torch_dtype_int32(), {0, 0});
    Handle r[6];
    REQUIRE(aoti_torch_cpu__fused_moving_avg_obs_fq_helper_functional(
                x.h.get(), on.h.get(), on.h.get(), rmin.h.get(), rmax.h.get(), scale.h.get(), zp.h.get(), 0.1, -8, 7, 0,
                1, 1, r[0].out(), r[1].out(), r[2].out(), r[3].out(), r[4].out(), r[5].out()) == 0);
    const std::vector<float> want{-1.4285714626312256f, 0.2857142984867096f,   2.0f,
                                  0.8857142329216003f,  -0.44285711646080017f, 3.0999999046325684f};
    const auto got = read_f32(r[0].get());
    for (size_t i = 0; i < 6; ++i) REQUIRE(got[i] == want[i]);
    REQUIRE(read_values(r[1].get()) == std::vector<double>(6, 1.0));
    REQUIRE(read_f32(r[2].get()) == std::vector<float>{-1.5f, -0.30000001192092896f});
    REQUIRE(read_f32(r[3].get()) == std::vector<float>{2.0f, 3.0999999046325684f});
    REQUIRE(read_f32(r[4].get()) == std::vector<float>{0.2857142984867096f, 0.44285711646080017f});
    REQUIRE(read_values(r[5].get()) == std::vector<double>{0, 0});
    REQUIRE(std::isinf(read_f32(rmin.h.get())[0]));  // the inputs are left alone
  }
}
