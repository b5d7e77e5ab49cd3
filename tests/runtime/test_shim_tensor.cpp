// Tensor handle semantics of the shim: refcounted storage, views, sizes/strides, copies and conversions.
#include "shim_test_util.hpp"
#include "runtime/shim/provided.hpp"
#include "runtime/shim/tensor.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

using namespace mpspack::test;

namespace {
const int32_t f32 = aoti_torch_dtype_float32();
const int32_t f16 = aoti_torch_dtype_float16();
const int32_t bf16 = aoti_torch_dtype_bfloat16();
const int32_t f64 = aoti_torch_dtype_float64();
const int32_t i64 = aoti_torch_dtype_int64();
const int32_t i32 = aoti_torch_dtype_int32();
const int32_t i8 = aoti_torch_dtype_int8();
const int32_t u8 = aoti_torch_dtype_uint8();
const int32_t b8 = aoti_torch_dtype_bool();
}  // namespace

TEST_CASE("shim constants are c10's codes", "[shim]") {
  CHECK(aoti_torch_device_type_cpu() == 0);
  CHECK(aoti_torch_device_type_cuda() == 1);
  CHECK(aoti_torch_device_type_mps() == 13);
  CHECK(aoti_torch_dtype_uint8() == 0);
  CHECK(aoti_torch_dtype_int8() == 1);
  CHECK(aoti_torch_dtype_int16() == 2);
  CHECK(aoti_torch_dtype_int32() == 3);
  CHECK(aoti_torch_dtype_int64() == 4);
  CHECK(aoti_torch_dtype_float16() == 5);
  CHECK(aoti_torch_dtype_float32() == 6);
  CHECK(aoti_torch_dtype_float64() == 7);
  CHECK(aoti_torch_dtype_bool() == 11);
  CHECK(aoti_torch_dtype_bfloat16() == 15);
  CHECK(aoti_torch_layout_strided() == 0);
  CHECK(aoti_torch_dtype_element_size(f16) == 2);
  CHECK(aoti_torch_dtype_element_size(99) == 0);
}

TEST_CASE("grad mode is thread-local and on by default", "[shim]") {
  CHECK(aoti_torch_grad_mode_is_enabled());
  aoti_torch_grad_mode_set_enabled(false);
  CHECK_FALSE(aoti_torch_grad_mode_is_enabled());
  aoti_torch_grad_mode_set_enabled(true);
  CHECK(aoti_torch_grad_mode_is_enabled());
}

TEST_CASE("empty_strided: metadata, aligned owned storage, refcounted handles", "[shim]") {
  Handle t = empty({2, 3}, {3, 1}, f32);
  CHECK(sizes_of(t.get()) == std::vector<int64_t>{2, 3});
  CHECK(strides_of(t.get()) == std::vector<int64_t>{3, 1});
  int64_t v = -1;
  REQUIRE(aoti_torch_get_storage_size(t.get(), &v) == 0);
  CHECK(v == 24);
  REQUIRE(aoti_torch_get_storage_offset(t.get(), &v) == 0);
  CHECK(v == 0);
  int32_t d = -1;
  REQUIRE(aoti_torch_get_dtype(t.get(), &d) == 0);
  CHECK(d == f32);
  REQUIRE(aoti_torch_get_device_type(t.get(), &d) == 0);
  CHECK(d == 0);
  REQUIRE(aoti_torch_get_device_index(t.get(), &d) == 0);
  CHECK(d == 0);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(t.get(), &p) == 0);
  CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
  float* f = static_cast<float*>(p);
  for (int i = 0; i < 6; ++i) f[i] = float(i);

  // A second handle shares the storage and outlives the first.
  Handle second;
  REQUIRE(aoti_torch_new_tensor_handle(t.get(), second.out()) == 0);
  REQUIRE(aoti_torch_delete_tensor_object(t.h) == 0);
  t.h = nullptr;
  void* p2 = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(second.get(), &p2) == 0);
  CHECK(p2 == p);
  CHECK(read_f32(second.get()) == std::vector<float>{0, 1, 2, 3, 4, 5});

  // _reinterpret_tensor adds its offset to the source's offset and shares the storage.
  const int64_t s1[] = {2}, st1[] = {3};
  Handle col;
  REQUIRE(aoti_torch__reinterpret_tensor(second.get(), 1, s1, st1, 1, col.out()) == 0);
  CHECK(read_f32(col.get()) == std::vector<float>{1, 4});
  Handle col2;
  REQUIRE(aoti_torch__reinterpret_tensor(col.get(), 1, s1, st1, 1, col2.out()) == 0);
  REQUIRE(aoti_torch_get_storage_offset(col2.get(), &v) == 0);
  CHECK(v == 2);
  CHECK(read_f32(col2.get()) == std::vector<float>{2, 5});
  second = Handle();  // drop the base: the views keep the storage alive
  CHECK(read_f32(col2.get()) == std::vector<float>{2, 5});
}

TEST_CASE("create_tensor_from_blob borrows, data pointer includes the offset", "[shim]") {
  std::vector<float> buf{0, 1, 2, 3, 4, 5, 6, 7};
  {
    Handle t = from_blob(buf.data(), {2, 3}, {3, 1}, f32, 2);
    void* p = nullptr;
    REQUIRE(aoti_torch_get_data_ptr(t.get(), &p) == 0);
    CHECK(p == buf.data() + 2);
    int64_t n = 0;
    REQUIRE(aoti_torch_get_storage_size(t.get(), &n) == 0);
    CHECK(n == (6 + 2) * 4);
    CHECK(read_f32(t.get()) == std::vector<float>{2, 3, 4, 5, 6, 7});
    Handle v2;
    const int64_t sz[] = {2, 3}, st[] = {3, 1};
    REQUIRE(aoti_torch_create_tensor_from_blob_v2(buf.data(), 2, sz, st, 0, f32, 0, 0, v2.out(), 0, nullptr, 0) == 0);
    Handle mk;
    CHECK(aoti_torch_create_tensor_from_blob_v2(buf.data(), 2, sz, st, 0, f32, 0, 0, mk.out(), 8, nullptr, 0) == 1);
  }
  // Deleting the handles did not free the (stack-owned) vector storage.
  CHECK(buf[7] == 7);
  // A CUDA pointer can be wrapped (metadata only); computing on it is refused.
  Handle gpu;
  const int64_t sz[] = {8}, st[] = {1};
  REQUIRE(aoti_torch_create_tensor_from_blob(buf.data(), 1, sz, st, 0, f32, 1, 0, gpu.out()) == 0);
  int32_t dev = -1;
  REQUIRE(aoti_torch_get_device_type(gpu.get(), &dev) == 0);
  CHECK(dev == 1);
  Handle c;
  CHECK(aoti_torch_clone(gpu.get(), c.out()) == 1);
}

TEST_CASE("empty_strided refuses non-CPU devices with an error code", "[shim]") {
  Handle t;
  const int64_t sz[] = {4}, st[] = {1};
  CHECK(aoti_torch_empty_strided(1, sz, st, f32, aoti_torch_device_type_cuda(), 0, t.out()) == 1);
  CHECK(t.h == nullptr);
  CHECK(aoti_torch_empty_strided(1, sz, st, 99, 0, 0, t.out()) == 1);
  CHECK_FALSE(mpspack::shim::last_error().empty());
}

TEST_CASE("clone keeps dense strides, densifies the rest, clone_preserve_strides keeps them all", "[shim]") {
  std::vector<float> buf(24);
  for (int i = 0; i < 24; ++i) buf[i] = float(i);
  // A transposed [4,6] -> [6,4] view: dense, so clone keeps strides (1, 6).
  Handle tr = from_blob(buf.data(), {6, 4}, {1, 6}, f32);
  Handle c;
  REQUIRE(aoti_torch_clone(tr.get(), c.out()) == 0);
  CHECK(strides_of(c.get()) == std::vector<int64_t>{1, 6});
  CHECK(read_f32(c.get()) == read_f32(tr.get()));
  void* p1 = nullptr;
  void* p2 = nullptr;
  aoti_torch_get_data_ptr(c.get(), &p1);
  aoti_torch_get_data_ptr(tr.get(), &p2);
  CHECK(p1 != p2);
  // Every other column of a transposed view: not dense; clone gives dense strides in the same order.
  Handle sl = from_blob(buf.data(), {3, 4}, {2, 6}, f32);
  Handle c2;
  REQUIRE(aoti_torch_clone(sl.get(), c2.out()) == 0);
  CHECK(strides_of(c2.get()) == std::vector<int64_t>{1, 3});
  CHECK(read_f32(c2.get()) == read_f32(sl.get()));
  Handle c3;
  REQUIRE(aoti_torch_clone_preserve_strides(sl.get(), c3.out()) == 0);
  CHECK(strides_of(c3.get()) == std::vector<int64_t>{2, 6});
  CHECK(read_f32(c3.get()) == read_f32(sl.get()));
}

TEST_CASE("half and bfloat16 conversions round to nearest even", "[shim]") {
  using namespace mpspack::shim;
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.0f) == 0xc000);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00);  // rounds up to inf
  CHECK(float_to_half(65519.0f) == 0x7bff);
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);  // tie to even
  CHECK(float_to_half(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);      // tie to even (down)
  CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie to even (up)
  CHECK((float_to_half(std::numeric_limits<float>::quiet_NaN()) & 0x7c00) == 0x7c00);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    REQUIRE(float_to_half(f) == h);  // every half survives the round trip
  }
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(bf16_to_float(0x3f80) == 1.0f);
  CHECK(float_to_bf16(std::numeric_limits<float>::quiet_NaN()) == 0x7fc0);
  CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);  // tie to even
}

TEST_CASE("copy_ converts dtypes, follows strides and broadcasts", "[shim]") {
  std::vector<float> src{-2.75f, -1.5f, -0.25f, 0.0f, 0.5f, 1.75f, 3.0f, 100.5f};
  Handle s = from_blob(src.data(), {2, 4}, {4, 1}, f32);
  SECTION("float32 -> float16/bfloat16/float64 -> float32") {
    for (int32_t mid : {f16, bf16, f64}) {
      Handle m = empty({2, 4}, {4, 1}, mid);
      REQUIRE(aoti_torch_copy_(m.get(), s.get(), 0) == 0);
      Handle back = empty({2, 4}, {4, 1}, f32);
      REQUIRE(aoti_torch_copy_(back.get(), m.get(), 0) == 0);
      CHECK(read_f32(back.get()) == src);  // all exactly representable
    }
  }
  SECTION("float32 -> int64 truncates; -> bool is != 0; -> uint8/int8") {
    Handle m = empty({2, 4}, {4, 1}, i64);
    REQUIRE(aoti_torch_copy_(m.get(), s.get(), 0) == 0);
    void* p = nullptr;
    aoti_torch_get_data_ptr(m.get(), &p);
    const int64_t* q = static_cast<int64_t*>(p);
    CHECK(std::vector<int64_t>(q, q + 8) == std::vector<int64_t>{-2, -1, 0, 0, 0, 1, 3, 100});
    Handle b = empty({2, 4}, {4, 1}, b8);
    REQUIRE(aoti_torch_copy_(b.get(), s.get(), 0) == 0);
    aoti_torch_get_data_ptr(b.get(), &p);
    const bool* bb = static_cast<bool*>(p);
    CHECK(std::vector<bool>(bb, bb + 8) == std::vector<bool>{true, true, true, false, true, true, true, true});
    Handle i8t = empty({2, 4}, {4, 1}, i8);
    REQUIRE(aoti_torch_copy_(i8t.get(), s.get(), 0) == 0);
    Handle back = empty({2, 4}, {4, 1}, f32);
    REQUIRE(aoti_torch_copy_(back.get(), i8t.get(), 0) == 0);
    CHECK(read_f32(back.get()) == std::vector<float>{-2, -1, 0, 0, 0, 1, 3, 100});
    Handle bf = empty({2, 4}, {4, 1}, f32);
    REQUIRE(aoti_torch_copy_(bf.get(), b.get(), 0) == 0);
    CHECK(read_f32(bf.get()) == std::vector<float>{1, 1, 1, 0, 1, 1, 1, 1});
  }
  SECTION("int64 values beyond 2^53 copy exactly to int64 and int32 wraps like a cast") {
    std::vector<int64_t> big{(int64_t(1) << 60) + 1, -7};
    Handle a = from_blob(big.data(), {2}, {1}, i64);
    Handle b = empty({2}, {1}, i64);
    REQUIRE(aoti_torch_copy_(b.get(), a.get(), 0) == 0);
    void* p = nullptr;
    aoti_torch_get_data_ptr(b.get(), &p);
    CHECK(static_cast<int64_t*>(p)[0] == (int64_t(1) << 60) + 1);
    Handle c = empty({2}, {1}, i32);
    REQUIRE(aoti_torch_copy_(c.get(), a.get(), 0) == 0);
    aoti_torch_get_data_ptr(c.get(), &p);
    CHECK(static_cast<int32_t*>(p)[1] == -7);
    int64_t item = 0;
    Handle one = from_blob(big.data(), {1}, {1}, i64);
    REQUIRE(aoti_torch_item_int64(one.get(), &item) == 0);
    CHECK(item == (int64_t(1) << 60) + 1);
  }
  SECTION("transposed destination, broadcast source") {
    Handle dst = empty({4, 2}, {1, 4}, f32);  // column-major [4,2]
    Handle tr = from_blob(src.data(), {4, 2}, {1, 4}, f32);
    REQUIRE(aoti_torch_copy_(dst.get(), tr.get(), 0) == 0);
    CHECK(read_f32(dst.get()) == read_f32(tr.get()));
    std::vector<float> row{1, 2};
    Handle r = from_blob(row.data(), {2}, {1}, f32);
    REQUIRE(aoti_torch_copy_(dst.get(), r.get(), 0) == 0);
    CHECK(read_f32(dst.get()) == std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2});
    std::vector<float> bad{1, 2, 3};
    Handle rb = from_blob(bad.data(), {3}, {1}, f32);
    CHECK(aoti_torch_copy_(dst.get(), rb.get(), 0) == 1);
  }
  SECTION("overlapping source and destination go through a temporary") {
    std::vector<float> buf{0, 1, 2, 3, 4, 5, 6, 7, 8};
    Handle a = from_blob(buf.data(), {3, 3}, {3, 1}, f32);
    Handle at = from_blob(buf.data(), {3, 3}, {1, 3}, f32);
    REQUIRE(aoti_torch_copy_(a.get(), at.get(), 0) == 0);  // in-place transpose
    CHECK(buf == std::vector<float>{0, 3, 6, 1, 4, 7, 2, 5, 8});
  }
}

// Copies of 512 KiB and more are cut into slabs, one per thread, along their outermost dimension larger than 1:
// every element must still land where a plain element loop puts it.
TEST_CASE("large copies split over threads land every element", "[shim]") {
  const int64_t rows = 1031, cols = 389;  // 1.5 MiB of floats; neither divides evenly among threads
  std::vector<float> bias(static_cast<std::size_t>(cols));
  for (int64_t j = 0; j < cols; ++j) bias[std::size_t(j)] = float(j) * 0.5f - 7.0f;
  std::vector<float> big(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = float(i % 9973) - 4000.0f;
  SECTION("a bias broadcast over rows, as addmm copies it, behind a leading size-1 dimension") {
    Handle src = from_blob(bias.data(), {1, rows, cols}, {0, 0, 1}, f32);
    Handle dst = empty({1, rows, cols}, {rows * cols, cols, 1}, f32);
    REQUIRE(aoti_torch_copy_(dst.get(), src.get(), 0) == 0);
    const std::vector<float> got = read_f32(dst.get());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) REQUIRE(got[std::size_t(i * cols + j)] == bias[std::size_t(j)]);
  }
  SECTION("a transpose into float64 and back") {
    Handle src = from_blob(big.data(), {cols, rows}, {1, cols}, f32);  // the transpose of [rows, cols]
    Handle wide = empty({cols, rows}, {rows, 1}, f64);
    REQUIRE(aoti_torch_copy_(wide.get(), src.get(), 0) == 0);
    Handle back = empty({cols, rows}, {rows, 1}, f32);
    REQUIRE(aoti_torch_copy_(back.get(), wide.get(), 0) == 0);
    const std::vector<float> got = read_f32(back.get());
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t r = 0; r < rows; ++r) REQUIRE(got[std::size_t(c * rows + r)] == big[std::size_t(r * cols + c)]);
  }
  SECTION("a dense copy, as one memcpy per thread") {
    Handle src = from_blob(big.data(), {rows, cols}, {cols, 1}, f32);
    Handle dst = empty({rows, cols}, {cols, 1}, f32);
    REQUIRE(aoti_torch_copy_(dst.get(), src.get(), 0) == 0);
    CHECK(read_f32(dst.get()) == big);
  }
}

TEST_CASE("aoti_torch_check throws (the model's C API turns it into error code 1), warn prints", "[shim]") {
  aoti_torch_check(true, "f", "file.cpp", 1, "never");
  CHECK_THROWS_WITH(aoti_torch_check(false, "kernel", "model.cpp", 42, "index out of bounds"),
                    Catch::Contains("index out of bounds") && Catch::Contains("model.cpp:42"));
  aoti_torch_warn("f", "file.cpp", 3, "a warning from the test");
}

TEST_CASE("scalars, item, zero_, _alloc_from_pool", "[shim]") {
  Handle s;
  REQUIRE(aoti_torch_scalar_to_tensor_float32(2.5f, s.out()) == 0);
  CHECK(sizes_of(s.get()).empty());
  float f = 0;
  REQUIRE(aoti_torch_item_float32(s.get(), &f) == 0);
  CHECK(f == 2.5f);
  REQUIRE(aoti_torch_zero_(s.get()) == 0);
  REQUIRE(aoti_torch_item_float32(s.get(), &f) == 0);
  CHECK(f == 0.0f);
  Handle pool = empty({256}, {1}, u8);
  Handle v;
  const int64_t sz[] = {4, 4}, st[] = {4, 1};
  REQUIRE(aoti_torch__alloc_from_pool(pool.get(), 64, f32, 2, sz, st, v.out()) == 0);
  void* pp = nullptr;
  void* pv = nullptr;
  aoti_torch_get_data_ptr(pool.get(), &pp);
  aoti_torch_get_data_ptr(v.get(), &pv);
  CHECK(static_cast<char*>(pv) - static_cast<char*>(pp) == 64);
}

TEST_CASE("copy_ moves complex, float8 and uint64 elements bit for bit, into any layout", "[shim]") {
  // complex64 (8 bytes), complex128 (16), float8_e4m3fn (1), uint64 (8): dtypes the shim does not compute with.
  for (int32_t dtype : {aoti_torch_dtype_complex64(), aoti_torch_dtype_complex128(), aoti_torch_dtype_float8_e4m3fn(),
                        aoti_torch_dtype_uint64()}) {
    INFO("dtype " << dtype);
    const size_t isz = aoti_torch_dtype_element_size(dtype);
    const int64_t sizes[2] = {3, 4}, dense[2] = {4, 1}, transposed[2] = {1, 3};
    Handle src, dst;
    REQUIRE(aoti_torch_empty_strided(2, sizes, dense, dtype, 0, 0, src.out()) == 0);
    REQUIRE(aoti_torch_empty_strided(2, sizes, transposed, dtype, 0, 0, dst.out()) == 0);
    void *s = nullptr, *d = nullptr;
    aoti_torch_get_data_ptr(src.get(), &s);
    aoti_torch_get_data_ptr(dst.get(), &d);
    for (size_t i = 0; i < 12 * isz; ++i) static_cast<unsigned char*>(s)[i] = static_cast<unsigned char>(i * 7 + 1);
    REQUIRE(aoti_torch_copy_(dst.get(), src.get(), 0) == 0);
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c)
        REQUIRE(std::memcmp(static_cast<unsigned char*>(d) + (r + c * 3) * isz,
                            static_cast<unsigned char*>(s) + (r * 4 + c) * isz, isz) == 0);
    // Another dtype: refused with the names, not converted.
    Handle f32;
    REQUIRE(aoti_torch_empty_strided(2, sizes, dense, aoti_torch_dtype_float32(), 0, 0, f32.out()) == 0);
    REQUIRE(aoti_torch_copy_(f32.get(), src.get(), 0) != 0);
    CHECK(std::string(mpspack::shim::last_error()).find("is not supported") != std::string::npos);
  }
}
