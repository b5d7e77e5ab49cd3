// The dtypes mpspack handles, in one table: each one's c10 ScalarType code (as AOTInductor reports it), the names
// mpspack prints and parses, its element size and NumPy descr. The manifest's names (dtype_name), the CLI's tensor
// files and specs (tensor_io) and the shim's element sizes and messages read it; the Python package mirrors it
// (tests/python/test_dtypes.py). Header-only, so the shim and the CUDA plugin use it without linking libpack.
#pragma once

#include <cstdint>

namespace mpspack {

// c10 ScalarType codes as AOTInductor reports them (aoti-abi.md section 3).
namespace dtype {
constexpr int32_t uint8 = 0, int8 = 1, int16 = 2, int32 = 3, int64 = 4, float16 = 5, float32 = 6, float64 = 7,
                  complex32 = 8, complex64 = 9, complex128 = 10, bool_ = 11, bfloat16 = 15, float8_e5m2 = 23,
                  float8_e4m3fn = 24, float8_e5m2fnuz = 25, float8_e4m3fnuz = 26, uint16 = 27, uint32 = 28, uint64 = 29;
}

struct DtypeInfo {
  int32_t code;
  const char* name;        // as mpspack prints it: "f32", "bf16"
  const char* torch_name;  // as torch names it: "float32", "bfloat16"
  uint32_t size;           // bytes per element
  const char* npy;         // NumPy's descr without the byte order ("f4"); "" where NumPy has none (bf16)
  bool floating;
};

inline constexpr DtypeInfo kDtypes[] = {
    {dtype::uint8, "u8", "uint8", 1, "u1", false},
    {dtype::int8, "i8", "int8", 1, "i1", false},
    {dtype::int16, "i16", "int16", 2, "i2", false},
    {dtype::int32, "i32", "int32", 4, "i4", false},
    {dtype::int64, "i64", "int64", 8, "i8", false},
    {dtype::float16, "f16", "float16", 2, "f2", true},
    {dtype::float32, "f32", "float32", 4, "f4", true},
    {dtype::float64, "f64", "float64", 8, "f8", true},
    {dtype::bool_, "bool", "bool", 1, "b1", false},
    {dtype::bfloat16, "bf16", "bfloat16", 2, "", true},
    {dtype::complex32, "c32", "complex32", 4, "", true},
    {dtype::complex64, "c64", "complex64", 8, "c8", true},
    {dtype::complex128, "c128", "complex128", 16, "c16", true},
    {dtype::float8_e5m2, "f8e5m2", "float8_e5m2", 1, "", true},
    {dtype::float8_e4m3fn, "f8e4m3fn", "float8_e4m3fn", 1, "", true},
    {dtype::float8_e5m2fnuz, "f8e5m2fnuz", "float8_e5m2fnuz", 1, "", true},
    {dtype::float8_e4m3fnuz, "f8e4m3fnuz", "float8_e4m3fnuz", 1, "", true},
    {dtype::uint16, "u16", "uint16", 2, "u2", false},
    {dtype::uint32, "u32", "uint32", 4, "u4", false},
    {dtype::uint64, "u64", "uint64", 8, "u8", false},
};

// The table's entry for a c10 code; nullptr for a code mpspack does not handle.
constexpr const DtypeInfo* find_dtype(int32_t code) {
  for (const DtypeInfo& d : kDtypes)
    if (d.code == code) return &d;
  return nullptr;
}

// Bytes per element, 0 for unknown codes.
constexpr uint32_t dtype_size(int32_t code) {
  const DtypeInfo* d = find_dtype(code);
  return d ? d->size : 0;
}

}  // namespace mpspack
