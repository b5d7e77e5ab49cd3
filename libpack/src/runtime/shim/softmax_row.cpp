// softmax_row.hpp. Each loop runs 16 lanes at a time with a scalar tail, and each function is compiled three times
// (AVX-512, AVX2 + FMA, baseline x86-64; GCC's target_clones picks one when the library loads), so the portable
// build still runs 16-wide on the machines that have it.
#include "softmax_row.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

// Not under AddressSanitizer: the clones' resolver runs while the library is relocated, before ASan is set up.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define MPSPACK_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MPSPACK_VECTOR_CLONES
#endif

namespace mpspack::shim {
namespace {

constexpr int kLanes = 16;

inline float exp_nonpositive_inline(float x) {
  constexpr float kLowest = -87.33654f;          // ln(FLT_MIN): below it the result is not a normal float
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kRound = 12582912.0f;          // 1.5 * 2^23: adding it rounds to an integer in the low bits
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  const bool under = x < kLowest;                // -inf included; false for NaN
  const float c = std::min(std::max(x, kLowest), 0.0f);
  const float t = c * kLog2e + kRound;
  const float n = t - kRound;                    // round(c / ln 2), exactly, in [-126, 0]
  const float r = (c - n * kLn2Hi) - n * kLn2Lo; // c - n ln 2, in [-ln 2 / 2, ln 2 / 2]
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n: n's integer sits in t's low mantissa bits; biased by 127 it is the exponent field of 2^n.
  const uint32_t n_bits = std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kRound);
  const float two_n = std::bit_cast<float>((n_bits + 127u) << 23);
  const float e = p * two_n;
  return under ? 0.0f : (x != x ? x : e);
}

}  // namespace

float exp_nonpositive(float x) { return exp_nonpositive_inline(x); }

// GCC's vector type: the vectorizer leaves a max over lanes in scalar code, so this one is written in vectors.
using Lanes = float __attribute__((vector_size(kLanes * sizeof(float))));

MPSPACK_VECTOR_CLONES float row_max(const float* s, int64_t n) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  Lanes lane = Lanes{} + kNegInf;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Lanes x;
    std::memcpy(&x, s + j, sizeof x);
    lane = x > lane ? x : lane;
  }
  float mx = kNegInf;
  for (int l = 0; l < kLanes; ++l) mx = std::max(mx, lane[l]);
  for (; j < n; ++j) mx = std::max(mx, s[j]);
  return mx;
}

MPSPACK_VECTOR_CLONES float exp_shifted_sum(float* s, int64_t n, float shift) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float e = exp_nonpositive_inline(s[j + l] - shift);
      s[j + l] = e;
      lane[l] += e;
    }
  float sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += lane[l];
  for (; j < n; ++j) {
    s[j] = exp_nonpositive_inline(s[j] - shift);
    sum += s[j];
  }
  return sum;
}

}  // namespace mpspack::shim
