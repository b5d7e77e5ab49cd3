// IEEE half (float16) and bfloat16 to and from float, rounding to nearest even as c10 does: the one scalar
// conversion, used by the shim's element loops (shim/element.hpp) and by the comparison of host tensors
// (tensor_io). Inline and header-only: the widening loops of half-precision products call them once per element,
// and the shim uses them without linking libpack. Vectorised conversions stay with the kernels that use them.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mpspack {

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in float
    const float mag = static_cast<float>(man) * (1.0f / 16777216.0f);
    std::memcpy(&bits, &mag, sizeof bits);
    bits |= sign;
  } else {
    bits = sign | (exp == 31 ? 0x7f800000u : (exp + 112u) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));  // NaN
  if (ax == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
  const int e = static_cast<int>(ax >> 23) - 127;
  if (e > 15) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e >= -14) {
    const uint32_t man = ax & 0x7fffffu;
    uint32_t h = (static_cast<uint32_t>(e + 15) << 10) | (man >> 13);
    const uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: correct
    return static_cast<uint16_t>(sign | h);
  }
  if (e < -25) return static_cast<uint16_t>(sign);
  const uint32_t man = (ax & 0x7fffffu) | 0x800000u;  // value = man * 2^(e-23); unit 2^-24
  const int shift = -(e + 1);                         // 14..24
  uint32_t h = man >> shift;
  const uint32_t rem = man & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  if (std::isnan(f)) return 0x7fc0u;
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint32_t bias = ((u >> 16) & 1u) + 0x7fffu;
  return static_cast<uint16_t>((u + bias) >> 16);
}

}  // namespace mpspack
