// One complex element at a byte address, in any dtype the shim stores complex numbers in (complex32 as two halves,
// complex64, complex128); a real element reads as its value with imaginary part 0.
#pragma once

#include "element.hpp"
#include "tensor.hpp"

#include <complex>
#include <cstdint>
#include <cstring>

#include "mpspack/dtype.hpp"

namespace mpspack::shim {

inline std::complex<double> load_complex(const char* p, int32_t dtype) {
  if (dtype == mpspack::dtype::complex32) {
    uint16_t h[2];
    std::memcpy(h, p, sizeof h);
    return {half_to_float(h[0]), half_to_float(h[1])};
  }
  if (dtype == mpspack::dtype::complex64) {
    float f[2];
    std::memcpy(f, p, sizeof f);
    return {f[0], f[1]};
  }
  if (dtype == mpspack::dtype::complex128) {
    double d[2];
    std::memcpy(d, p, sizeof d);
    return {d[0], d[1]};
  }
  return {load_as_double(p, dtype), 0.0};
}

// z rounded once to a complex dtype (complex32, complex64, else complex128).
inline void store_complex(char* p, int32_t dtype, std::complex<double> z) {
  if (dtype == mpspack::dtype::complex32) {
    const uint16_t h[2] = {float_to_half(static_cast<float>(z.real())), float_to_half(static_cast<float>(z.imag()))};
    std::memcpy(p, h, sizeof h);
  } else if (dtype == mpspack::dtype::complex64) {
    const float f[2] = {static_cast<float>(z.real()), static_cast<float>(z.imag())};
    std::memcpy(p, f, sizeof f);
  } else {
    const double d[2] = {z.real(), z.imag()};
    std::memcpy(p, d, sizeof d);
  }
}

}  // namespace mpspack::shim
