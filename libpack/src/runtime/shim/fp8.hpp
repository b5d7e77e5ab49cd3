// The four float8 formats torch has (mpspack/dtype.hpp codes 23-26), decoded to float exactly and encoded from
// float as c10 does: round to nearest, ties to the even code; a value past the largest finite one (after
// rounding) becomes inf in e5m2 and NaN in the others, which have no inf; NaN stays NaN with its sign (e4m3fn,
// e5m2); the fnuz formats have one NaN (0x80) and no negative zero.
//   e4m3fn:   bias 7,  3 mantissa bits, max 448, NaN S.1111.111
//   e5m2:     bias 15, 2 mantissa bits, max 57344, inf S.11111.00, NaN S.11111.xx (xx != 0), as IEEE
//   e4m3fnuz: bias 8,  3 mantissa bits, max 240
//   e5m2fnuz: bias 16, 2 mantissa bits, max 57344
#pragma once

#include "mpspack/dtype.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace mpspack::shim::fp8 {

struct Format {
  int mbits, bias;
  bool fnuz;     // one NaN at 0x80, no negative zero, no inf: the top exponent holds ordinary values
  bool has_inf;  // e5m2 only
};

inline bool is_fp8(int32_t dtype) { return dtype >= dtype::float8_e5m2 && dtype <= dtype::float8_e4m3fnuz; }

inline Format format_of(int32_t dtype) {
  switch (dtype) {
    case dtype::float8_e5m2: return {2, 15, false, true};
    case dtype::float8_e4m3fn: return {3, 7, false, false};
    case dtype::float8_e5m2fnuz: return {2, 16, true, false};
    default: return {3, 8, true, false};  // float8_e4m3fnuz
  }
}

// The magnitude of code & 0x7f read as an ordinary (finite) number of format f.
inline double magnitude(uint8_t code, Format f) {
  const int ebits = 7 - f.mbits;
  const int e = (code >> f.mbits) & ((1 << ebits) - 1);
  const int m = code & ((1 << f.mbits) - 1);
  if (e == 0) return std::ldexp(double(m), 1 - f.bias - f.mbits);  // subnormal: m / 2^mbits * 2^(1 - bias)
  return std::ldexp(double((1 << f.mbits) + m), e - f.bias - f.mbits);
}

inline float decode(uint8_t code, int32_t dtype) {
  const Format f = format_of(dtype);
  const bool neg = (code & 0x80) != 0;
  const uint8_t mag = code & 0x7f;
  if (f.fnuz) {
    if (code == 0x80) return std::numeric_limits<float>::quiet_NaN();
  } else if (f.has_inf) {
    if ((mag >> 2) == 0x1f) {
      const float v = (mag & 3) == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
      return neg ? -v : v;
    }
  } else if (mag == 0x7f) {
    return neg ? -std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::quiet_NaN();
  }
  const auto v = static_cast<float>(magnitude(mag, f));
  return neg ? -v : v;
}

inline uint8_t encode(float x, int32_t dtype) {
  const Format f = format_of(dtype);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const uint8_t nan = f.fnuz ? 0x80 : static_cast<uint8_t>(0x7f | sign);
  const uint8_t overflow = f.has_inf ? static_cast<uint8_t>(0x7c | sign) : nan;
  if (std::isnan(x)) return nan;
  if (std::isinf(x)) return overflow;
  const uint8_t max_code = f.fnuz ? 0x7f : f.has_inf ? 0x7b : 0x7e;
  const double a = std::fabs(double(x));
  // The largest code whose magnitude is <= a (magnitudes grow with the code).
  int lo = 0, hi = max_code;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (magnitude(uint8_t(mid), f) <= a) lo = mid;
    else hi = mid - 1;
  }
  const double below = magnitude(uint8_t(lo), f);
  int code = lo;
  if (below != a) {
    const int top_e = (max_code >> f.mbits) & ((1 << (7 - f.mbits)) - 1);
    const double above =
        lo == max_code ? below + std::ldexp(1.0, top_e - f.bias - f.mbits) : magnitude(uint8_t(lo + 1), f);
    const double d_lo = a - below, d_hi = above - a;
    if (d_hi < d_lo || (d_hi == d_lo && (lo & 1) != 0)) code = lo + 1;
  }
  if (code > max_code) return overflow;
  if (f.fnuz && code == 0) return 0;  // no negative zero
  return static_cast<uint8_t>(code | sign);
}

}  // namespace mpspack::shim::fp8
