// Typed element access for loops over the shim's dtypes: a C++ type per dtype code, and loads/stores that
// convert through a type holding the value exactly (float for float16/bfloat16).
#pragma once

#include "tensor.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

namespace mpspack::shim::typed {

struct Half {
  uint16_t x;
};
struct BF16 {
  uint16_t x;
};

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the C++ type T of `dtype`; fails for a dtype the shim does not handle.
template <class F>
decltype(auto) visit_dtype(int32_t dtype, F&& f) {
  switch (static_cast<DType>(dtype)) {
    case DType::u8: return f(Tag<uint8_t>{});
    case DType::i8: return f(Tag<int8_t>{});
    case DType::i16: return f(Tag<int16_t>{});
    case DType::i32: return f(Tag<int32_t>{});
    case DType::i64: return f(Tag<int64_t>{});
    case DType::f16: return f(Tag<Half>{});
    case DType::f32: return f(Tag<float>{});
    case DType::f64: return f(Tag<double>{});
    case DType::boolean: return f(Tag<bool>{});
    case DType::bf16: return f(Tag<BF16>{});
  }
  fail("dtype code " + std::to_string(dtype) + " is not supported by the mpspack shim");
}

// The value a stored element stands for, in a type that holds it exactly.
template <class S>
inline auto load(const S* p) {
  return *p;
}
template <>
inline auto load<Half>(const Half* p) {
  return half_to_float(p->x);
}
template <>
inline auto load<BF16>(const BF16* p) {
  return bf16_to_float(p->x);
}

template <class D, class V>
inline void store(D* p, V v) {
  if constexpr (std::is_same_v<D, bool>) {
    *p = (v != V(0));
  } else if constexpr (std::is_same_v<V, bool>) {
    *p = static_cast<D>(v ? 1 : 0);
  } else {
    *p = static_cast<D>(v);
  }
}
template <class V>
inline void store(Half* p, V v) {
  p->x = float_to_half(static_cast<float>(v));
}
template <class V>
inline void store(BF16* p, V v) {
  p->x = float_to_bf16(static_cast<float>(v));
}

// Whether a loaded value is NaN (never, for the integer types and bool).
template <class V>
bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
  else return false;
}

}  // namespace mpspack::shim::typed
