// The softmax of one row of attention scores, written for the vector units: attention (attention.cpp) spends most
// of its time here, not in its two products, once those run on oneDNN (bench/attention_cpu.cpp).
#pragma once

#include <cstdint>

namespace mpspack::shim {

// exp(x) in float32 for x <= 0, within 2 ulp of std::exp down to -87.3; 0 below it and for -inf (a masked score),
// NaN for NaN. Branch-free and call-free so that a loop of it vectorizes: Cody-Waite reduction by ln 2, Cephes'
// degree-6 polynomial, the power of two put in through the exponent bits (as Cephes' expf and SLEEF do).
float exp_nonpositive(float x);

// The largest of s[0, n) (-inf for n == 0; NaN-free rows assumed, as after masking).
float row_max(const float* s, int64_t n);

// s[j] <- exp(s[j] - shift) for j < n; returns their sum (accumulated in float, 16 partial sums).
float exp_shifted_sum(float* s, int64_t n, float shift);

}  // namespace mpspack::shim
