// The rest of torch's generic shim (c/shim.h) on the CPU: codes, scalars of the newer dtypes, undefined and pinned
// tensors, the CPU's device guard and stream, the debug helpers, _mm_plus_mm_out, the out= scatter/index_put and
// fbgemm's fp16-weight Linear, each against values worked out by hand or by a plain loop.
#include "op_test_util.hpp"
#include "runtime/shim/provided.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32(), kF64 = aoti_torch_dtype_float64(), kI64 = aoti_torch_dtype_int64(),
              kBF16 = aoti_torch_dtype_bfloat16(), kF16 = aoti_torch_dtype_float16();

// A 0-d tensor of `dtype` holding the raw bytes of `v`.
template <class T>
Handle scalar_of(int32_t dtype, const T& v) {
  Handle t = empty({}, {}, dtype);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(t.get(), &p) == 0);
  std::memcpy(p, &v, sizeof(T));
  return t;
}

// What `body` writes to stderr (fd 2), read back from a temporary file.
template <class F>
std::string stderr_of(F&& body) {
  std::fflush(stderr);
  char path[] = "/tmp/mpspack_stderr_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const int saved = dup(2);
  dup2(fd, 2);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::remove(path);
  return ss.str();
}

// c10::complex<float>: a class with constructors, aligned to its size, passed by value as torch's callers do.
struct alignas(8) C10ComplexFloat {
  float real_, imag_;
  constexpr C10ComplexFloat(float re, float im) : real_(re), imag_(im) {}
};
struct alignas(16) C10ComplexDouble {
  double real_, imag_;
  constexpr C10ComplexDouble(double re, double im) : real_(re), imag_(im) {}
};

}  // namespace

TEST_CASE("core shim: device-type and layout codes are c10's, abi_version is torch 2.11.0's", "[shim][core]") {
  CHECK(aoti_torch_device_type_xpu() == 12);
  CHECK(aoti_torch_device_type_meta() == 14);
  CHECK(aoti_torch_device_type_privateuse1() == 20);
  CHECK(aoti_torch_layout_strided() == 0);
  CHECK(aoti_torch_layout_sparse_coo() == 1);
  CHECK(aoti_torch_layout_sparse_csr() == 2);
  CHECK(aoti_torch_layout__mkldnn() == 3);
  CHECK(aoti_torch_layout_sparse_csc() == 4);
  CHECK(aoti_torch_layout_sparse_bsr() == 5);
  CHECK(aoti_torch_layout_sparse_bsc() == 6);
  CHECK(aoti_torch_layout_jagged() == 7);
  CHECK(aoti_torch_abi_version() == 0x020B000000000000ULL);
}

TEST_CASE("core shim: item of float16 and bfloat16 rounds, keeps inf, refuses what overflows", "[shim][core]") {
  uint16_t bits = 0;
  Handle a = scalar_of(kF32, 1.5f);
  REQUIRE(aoti_torch_item_float16(a.get(), &bits) == 0);
  CHECK(bits == 0x3E00);
  REQUIRE(aoti_torch_item_bfloat16(a.get(), &bits) == 0);
  CHECK(bits == 0x3FC0);
  Handle inf = scalar_of(kF64, std::numeric_limits<double>::infinity());
  REQUIRE(aoti_torch_item_float16(inf.get(), &bits) == 0);
  CHECK(bits == 0x7C00);
  Handle big = scalar_of(kF32, 70000.f);  // beyond float16's 65504, within bfloat16's range
  CHECK(aoti_torch_item_float16(big.get(), &bits) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("cannot be converted to type at::Half without overflow") !=
        std::string::npos);
  REQUIRE(aoti_torch_item_bfloat16(big.get(), &bits) == 0);
  CHECK(bits == 0x4789);  // 70000 rounded to bfloat16: 70144
  Handle i = scalar_of(kI64, int64_t(-3));
  REQUIRE(aoti_torch_item_float16(i.get(), &bits) == 0);
  CHECK(bits == 0xC200);
}

TEST_CASE("core shim: item of uint16/32/64 wraps negative integers, refuses negative floats and overflow",
          "[shim][core]") {
  uint16_t u16 = 0;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  Handle minus_one = scalar_of(kI64, int64_t(-1));
  REQUIRE(aoti_torch_item_uint16(minus_one.get(), &u16) == 0);
  CHECK(u16 == 65535);  // c10 lets a negative integer wrap as two's complement
  REQUIRE(aoti_torch_item_uint64(minus_one.get(), &u64) == 0);
  CHECK(u64 == ~uint64_t(0));
  Handle too_big = scalar_of(kI64, int64_t(70000));
  CHECK(aoti_torch_item_uint16(too_big.get(), &u16) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("uint16_t without overflow") != std::string::npos);
  REQUIRE(aoti_torch_item_uint32(too_big.get(), &u32) == 0);
  CHECK(u32 == 70000);
  Handle neg_float = scalar_of(kF32, -1.f);
  CHECK(aoti_torch_item_uint32(neg_float.get(), &u32) == 1);
  Handle high = scalar_of(mpspack::dtype::uint64, (uint64_t(1) << 63) + 5);  // above INT64_MAX: exact
  REQUIRE(aoti_torch_item_uint64(high.get(), &u64) == 0);
  CHECK(u64 == (uint64_t(1) << 63) + 5);
  CHECK(aoti_torch_item_uint32(high.get(), &u32) == 1);
  Handle u16_tensor = scalar_of(mpspack::dtype::uint16, uint16_t(40000));
  REQUIRE(aoti_torch_item_uint32(u16_tensor.get(), &u32) == 0);
  CHECK(u32 == 40000);
  Handle two = empty({2}, {1}, kI64);
  CHECK(aoti_torch_item_uint16(two.get(), &u16) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("a Tensor with 2 elements cannot be converted to Scalar") !=
        std::string::npos);
}

TEST_CASE("core shim: item_complex64 takes complex and real tensors, a real target refuses an imaginary part",
          "[shim][core]") {
  AotiComplex64 z{};
  const double zz[2] = {1.5, -2.0};
  Handle c128 = scalar_of(mpspack::dtype::complex128, zz);
  REQUIRE(aoti_torch_item_complex64(c128.get(), &z) == 0);
  CHECK(z.real == 1.5f);
  CHECK(z.imag == -2.0f);
  Handle r = scalar_of(kF32, 3.f);
  REQUIRE(aoti_torch_item_complex64(r.get(), &z) == 0);
  CHECK(z.real == 3.f);
  CHECK(z.imag == 0.f);
  uint16_t bits = 0;
  CHECK(aoti_torch_item_float16(c128.get(), &bits) == 1);
  const float real_only[2] = {2.f, 0.f};
  Handle c64 = scalar_of(mpspack::dtype::complex64, real_only);
  REQUIRE(aoti_torch_item_float16(c64.get(), &bits) == 0);
  CHECK(bits == 0x4000);
}

TEST_CASE("core shim: scalar_to_tensor of uint and complex values, complex passed by value as c10's class",
          "[shim][core]") {
  Handle u;
  REQUIRE(aoti_torch_scalar_to_tensor_uint64(~uint64_t(0) - 1, u.out()) == 0);
  CHECK(dtype_of(u.get()) == 29);
  CHECK(sizes_of(u.get()).empty());
  uint64_t u64 = 0;
  REQUIRE(aoti_torch_item_uint64(u.get(), &u64) == 0);
  CHECK(u64 == ~uint64_t(0) - 1);
  Handle u16, u32;
  REQUIRE(aoti_torch_scalar_to_tensor_uint16(65535, u16.out()) == 0);
  REQUIRE(aoti_torch_scalar_to_tensor_uint32(4000000000u, u32.out()) == 0);
  CHECK(dtype_of(u16.get()) == 27);
  CHECK(dtype_of(u32.get()) == 28);
  uint32_t v32 = 0;
  REQUIRE(aoti_torch_item_uint32(u32.get(), &v32) == 0);
  CHECK(v32 == 4000000000u);

  // The declarations take plain structs; a model passes c10::complex by value. Call through its signature.
  using Fn64 = AOTITorchError (*)(C10ComplexFloat, AtenTensorHandle*);
  using Fn128 = AOTITorchError (*)(C10ComplexDouble, AtenTensorHandle*);
  using Any = void (*)();
  const auto f64 = reinterpret_cast<Fn64>(reinterpret_cast<Any>(&aoti_torch_scalar_to_tensor_complex64));
  const auto f128 = reinterpret_cast<Fn128>(reinterpret_cast<Any>(&aoti_torch_scalar_to_tensor_complex128));
  Handle c64, c128;
  REQUIRE(f64(C10ComplexFloat(1.25f, -7.5f), c64.out()) == 0);
  REQUIRE(f128(C10ComplexDouble(0.1, 1e300), c128.out()) == 0);
  CHECK(dtype_of(c64.get()) == 9);
  CHECK(dtype_of(c128.get()) == 10);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(c64.get(), &p) == 0);
  CHECK(static_cast<float*>(p)[0] == 1.25f);
  CHECK(static_cast<float*>(p)[1] == -7.5f);
  REQUIRE(aoti_torch_get_data_ptr(c128.get(), &p) == 0);
  CHECK(static_cast<double*>(p)[0] == 0.1);
  CHECK(static_cast<double*>(p)[1] == 1e300);
}

TEST_CASE("core shim: an uninitialized tensor is undefined until assigned, ops refuse it", "[shim][core]") {
  Handle undef;
  REQUIRE(aoti_torch_new_uninitialized_tensor(undef.out()) == 0);
  bool defined = true;
  REQUIRE(aoti_torch_is_defined(undef.get(), &defined) == 0);
  CHECK_FALSE(defined);
  int64_t dim = 0;
  CHECK(aoti_torch_get_dim(undef.get(), &dim) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("undefined tensor") != std::string::npos);
  Handle copy;
  CHECK(aoti_torch_clone(undef.get(), copy.out()) == 1);
  Handle alias;  // a second handle on an undefined tensor is undefined too
  REQUIRE(aoti_torch_new_tensor_handle(undef.get(), alias.out()) == 0);
  REQUIRE(aoti_torch_is_defined(alias.get(), &defined) == 0);
  CHECK_FALSE(defined);

  Handle src = empty({2, 3}, {3, 1}, kF32);
  REQUIRE(aoti_torch_assign_tensors(src.get(), undef.get()) == 0);
  REQUIRE(aoti_torch_is_defined(undef.get(), &defined) == 0);
  CHECK(defined);
  CHECK(sizes_of(undef.get()) == std::vector<int64_t>{2, 3});
  void *a = nullptr, *b = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(undef.get(), &a) == 0);
  REQUIRE(aoti_torch_get_data_ptr(src.get(), &b) == 0);
  CHECK(a == b);
}

TEST_CASE("core shim: empty_strided_pinned gives aligned CPU memory with the strides asked, CPU only", "[shim][core]") {
  const std::vector<int64_t> sizes{3, 4}, strides{1, 3};
  Handle t;
  REQUIRE(aoti_torch_empty_strided_pinned(2, sizes.data(), strides.data(), kF32, 0, 0, t.out()) == 0);
  CHECK(strides_of(t.get()) == strides);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(t.get(), &p) == 0);
  CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
  int64_t bytes = 0;
  REQUIRE(aoti_torch_get_storage_size(t.get(), &bytes) == 0);
  CHECK(bytes == 48);
  Handle cuda;
  CHECK(aoti_torch_empty_strided_pinned(2, sizes.data(), strides.data(), kF32, 1, 0, cuda.out()) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("only CPU tensors can be pinned") != std::string::npos);
}

TEST_CASE("core shim: the CPU's device guard, device index and stream", "[shim][core]") {
  DeviceGuardHandle g = nullptr;
  REQUIRE(aoti_torch_create_device_guard(0, &g) == 0);
  REQUIRE(g != nullptr);
  CHECK(aoti_torch_device_guard_set_index(g, -1) == 0);
  CHECK(aoti_torch_device_guard_set_index(g, 1) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("CPU device index must be -1 or zero, got 1") !=
        std::string::npos);
  CHECK(aoti_torch_delete_device_guard(g) == 0);
  DeviceGuardHandle bad = nullptr;
  CHECK(aoti_torch_create_device_guard(2, &bad) == 1);
  CHECK(bad == nullptr);
  CHECK(aoti_torch_delete_device_guard(nullptr) == 1);

  int32_t index = 7;
  REQUIRE(aoti_torch_get_current_device_index(&index) == 0);
  CHECK(index == -1);
  StreamHandle s = nullptr;
  REQUIRE(aoti_torch_get_current_stream(-1, &s) == 0);
  int64_t id = 99;
  REQUIRE(aoti_torch_stream_id(s, &id) == 0);
  CHECK(id == 0);
  CHECK(aoti_torch_delete_stream(s) == 0);
  CHECK(aoti_torch_stream_id(nullptr, &id) == 1);
}

TEST_CASE("core shim: check_inf_and_nan reports NaN before INF, reads strides, skips integers", "[shim][core]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  TypedTensor finite({2, 2}, kF32, {1, 2, 3, 4});
  CHECK(aoti_torch_check_inf_and_nan("x", finite.h.get()) == 0);
  TypedTensor inf_then_nan({3}, kF64, {inf, 0, nan});
  CHECK(aoti_torch_check_inf_and_nan("buf3", inf_then_nan.h.get()) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("At least one NaN in buf3") != std::string::npos);
  TypedTensor only_inf({2}, kBF16, {-inf, 1});
  CHECK(aoti_torch_check_inf_and_nan("y", only_inf.h.get()) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("At least one INF in y") != std::string::npos);
  // A strided view whose gaps hold NaN: only the elements it reaches count.
  std::vector<float> data{1, NAN, 2, NAN, 3, NAN};
  Handle every_other = from_blob(data.data(), {3}, {2}, kF32);
  CHECK(aoti_torch_check_inf_and_nan("z", every_other.get()) == 0);
  TypedTensor ints({2}, kI64, {1, 2});
  CHECK(aoti_torch_check_inf_and_nan("i", ints.h.get()) == 0);
  const float complex_inf[2] = {0.f, INFINITY};
  Handle c = scalar_of(mpspack::dtype::complex64, complex_inf);
  CHECK(aoti_torch_check_inf_and_nan("c", c.get()) == 1);
}

TEST_CASE("core shim: print_tensor_handle writes torch's summary to stderr, save_tensor_handle says why it cannot",
          "[shim][core]") {
  TypedTensor t({2, 3}, kF32, {-1, 2, 3, 4, 5, 6});
  const std::string printed = stderr_of([&] { aoti_torch_print_tensor_handle(t.h.get(), "after kernel_0"); });
  CHECK(printed.find("[  after kernel_0  ]:") != std::string::npos);
  CHECK(printed.find("-1.0000 2.0000 3.0000 4.0000 5.0000 6.0000") != std::string::npos);
  CHECK(printed.find("Number of elements: 6") != std::string::npos);
  CHECK(printed.find("Dtype: float32") != std::string::npos);
  CHECK(printed.find("Mean value: 3.16667") != std::string::npos);
  CHECK(printed.find("Min value: -1") != std::string::npos);
  CHECK(printed.find("Max value: 6") != std::string::npos);
  CHECK(printed.find("Size: [2, 3]") != std::string::npos);
  CHECK(printed.find("Stride: [3, 1]") != std::string::npos);

  const auto dir = std::filesystem::temp_directory_path() / ("mpspack_save_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const std::string said =
      stderr_of([&] { aoti_torch_save_tensor_handle(t.h.get(), "buf0", "before_launch", "triton_poi_0"); });
  std::filesystem::current_path(previous);
  CHECK(said.find("tmp/aoti_torch/before_launch_triton_poi_0_buf0_cpu.pt") != std::string::npos);
  CHECK(said.find("cannot write torch's pickle format") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "tmp"));  // nothing written under torch's name
  std::filesystem::remove_all(dir);
}

TEST_CASE("core shim: _mm_plus_mm_out is a @ b + c @ d, strided operands, shapes checked", "[shim][core]") {
  const auto va = small_integers(6, 1), vb = small_integers(12, 2), vc = small_integers(10, 3),
             vd = small_integers(20, 4);
  for (int32_t dt : {kF32, kF64, kI64}) {
    TypedTensor a({2, 3}, dt, va), c({2, 5}, dt, vc), d({5, 4}, dt, vd);
    TypedTensor b({3, 4}, {1, 3}, dt, vb);  // column-major b
    Handle out = empty({2, 4}, {4, 1}, dt);
    REQUIRE(aoti_torch__mm_plus_mm_out(out.get(), a.h.get(), b.h.get(), c.h.get(), d.h.get()) == 0);
    std::vector<double> want(8, 0.0);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        for (int k = 0; k < 3; ++k) want[i * 4 + j] += va[i * 3 + k] * vb[k * 4 + j];
        for (int k = 0; k < 5; ++k) want[i * 4 + j] += vc[i * 5 + k] * vd[k * 4 + j];
      }
    CHECK(read_values(out.get()) == want);
  }
  TypedTensor a({2, 3}, kF32, va), b({3, 4}, kF32, vb), c({2, 5}, kF32, vc), wrong({4, 4}, kF32, small_integers(16, 5));
  Handle out = empty({2, 4}, {4, 1}, kF32);
  CHECK(aoti_torch__mm_plus_mm_out(out.get(), a.h.get(), b.h.get(), c.h.get(), wrong.h.get()) == 1);
}

TEST_CASE("core shim: scatter_out and scatter_reduce_out write self with src scattered into out", "[shim][core]") {
  TypedTensor self({2, 3}, kF32, {1, 1, 1, 1, 1, 1});
  TypedTensor index({2, 2}, kI64, {2, 0, 1, 1});
  TypedTensor src({2, 2}, kF32, {10, 20, 30, 40});
  Handle out = empty({2, 3}, {3, 1}, kF32);
  REQUIRE(aoti_torch_scatter_out(out.get(), self.h.get(), 1, index.h.get(), src.h.get()) == 0);
  CHECK(read_values(out.get()) == std::vector<double>{20, 1, 10, 1, 40, 1});
  REQUIRE(aoti_torch_scatter_reduce_out(out.get(), self.h.get(), 1, index.h.get(), src.h.get(), "sum", 1) == 0);
  CHECK(read_values(out.get()) == std::vector<double>{21, 1, 11, 1, 71, 1});
  REQUIRE(aoti_torch_scatter_reduce_out(out.get(), self.h.get(), 1, index.h.get(), src.h.get(), "amax", 0) == 0);
  CHECK(read_values(out.get()) == std::vector<double>{20, 1, 10, 1, 40, 1});
  CHECK(aoti_torch_scatter_reduce_out(out.get(), self.h.get(), 1, index.h.get(), src.h.get(), "max", 1) == 1);
  CHECK(aoti_torch_scatter_out(out.get(), self.h.get(), 1, index.h.get(), nullptr) == 1);
}

TEST_CASE("core shim: index_put_out takes handles with null for None, accumulates, checks out", "[shim][core]") {
  TypedTensor self({3, 2}, kF32, {0, 1, 2, 3, 4, 5});
  TypedTensor rows({2}, kI64, {2, 0});
  TypedTensor values({2}, kF32, {10, 20});
  const AtenTensorHandle idx[2] = {nullptr, rows.h.get()};  // index 2 on dim 1, of size 2
  TypedTensor cols({2}, kI64, {1, 0});
  const AtenTensorHandle by_col[2] = {nullptr, cols.h.get()};
  Handle out = empty({3, 2}, {1, 3}, kF32);  // out with its own (column-major) strides
  REQUIRE(aoti_torch_index_put_out(out.get(), self.h.get(), by_col, 2, values.h.get(), false) == 0);
  CHECK(strides_of(out.get()) == std::vector<int64_t>{1, 3});
  CHECK(read_values(out.get()) == std::vector<double>{20, 10, 20, 10, 20, 10});
  const AtenTensorHandle by_row[1] = {rows.h.get()};
  TypedTensor two({2}, kF32, {100, 100});
  REQUIRE(aoti_torch_index_put_out(out.get(), self.h.get(), by_row, 1, two.h.get(), true) == 0);
  CHECK(read_values(out.get()) == std::vector<double>{100, 101, 2, 3, 104, 105});
  CHECK(aoti_torch_index_put_out(out.get(), self.h.get(), idx, 2, values.h.get(), false) == 1);  // index 2 of 2
  Handle small = empty({2, 2}, {2, 1}, kF32);
  CHECK(aoti_torch_index_put_out(small.get(), self.h.get(), by_row, 1, two.h.get(), false) == 1);
}

TEST_CASE("core shim: fbgemm fp16 pack rounds and saturates the weight, linear multiplies in float32", "[shim][core]") {
  const std::vector<double> w{0.1, -0.2, 0.3, 70000, 1, 2, 3, 4, -1, -2, -3, -100000};  // [3, 4]
  TypedTensor weight({3, 4}, kF32, w);
  Handle packed;
  REQUIRE(aoti_torch_cpu_wrapped_fbgemm_pack_gemm_matrix_fp16(weight.h.get(), packed.out()) == 0);
  CHECK(dtype_of(packed.get()) == kF16);
  const auto pw = read_values(packed.get());
  CHECK(pw[0] == double(mpspack::half_to_float(mpspack::float_to_half(0.1f))));
  CHECK(pw[3] == 65504.0);
  CHECK(pw[11] == -65504.0);

  const auto x = small_integers(16, 7);  // [2, 2, 4]
  TypedTensor input({2, 2, 4}, kF32, x);
  TypedTensor bias({3}, kF32, {0.5, -0.5, 1});
  Handle out;
  REQUIRE(aoti_torch_cpu_wrapped_fbgemm_linear_fp16_weight(input.h.get(), packed.get(), bias.h.get(), 3, out.out()) ==
          0);
  CHECK(sizes_of(out.get()) == std::vector<int64_t>{2, 2, 3});
  CHECK(dtype_of(out.get()) == kF32);
  std::vector<double> want;
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 3; ++n) {
      double acc = 0;
      for (int k = 0; k < 4; ++k) acc += x[m * 4 + k] * pw[n * 4 + k];
      want.push_back(acc + std::vector<double>{0.5, -0.5, 1}[n]);
    }
  require_close(read_f32(out.get()), want, 1e-6, 1e-2);
  Handle no_bias;
  REQUIRE(aoti_torch_cpu_wrapped_fbgemm_linear_fp16_weight(input.h.get(), packed.get(), nullptr, 3, no_bias.out()) ==
          0);
  CHECK(std::abs(read_f32(no_bias.get())[0] - (want[0] - 0.5)) < 1e-3);

  TypedTensor vec({4}, kF32, {1, 2, 3, 4});
  Handle bad;
  CHECK(aoti_torch_cpu_wrapped_fbgemm_pack_gemm_matrix_fp16(vec.h.get(), bad.out()) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("only packs matrices not vectors") != std::string::npos);
  CHECK(aoti_torch_cpu_wrapped_fbgemm_linear_fp16_weight(vec.h.get(), packed.get(), nullptr, 3, bad.out()) == 1);
  CHECK(aoti_torch_cpu_wrapped_fbgemm_linear_fp16_weight(input.h.get(), weight.h.get(), nullptr, 3, bad.out()) == 1);
}

TEST_CASE("core shim: the int8 prepacked Linear quantizes, multiplies in integers and requantizes the output",
          "[shim][core]") {
  // Weight on its quantization grid (scale 0.5, zero point 1), input on its own (scale 0.25, zero point 128).
  const std::vector<double> w{1.5, -1.0, 0.0, 2.5, -0.5, 1.0};  // [2, 3]: q = w / 0.5 + 1
  TypedTensor weight({2, 3}, kF32, w);
  TypedTensor w_scale({}, kF32, {0.5}), w_zp({}, kI64, {1});
  TypedTensor bias({2}, kF32, {0.25, -1.0});
  Handle packed;
  REQUIRE(aoti_torch_cpu__wrapped_linear_prepack(weight.h.get(), w_scale.h.get(), w_zp.h.get(), bias.h.get(),
                                                 packed.out()) == 0);
  CHECK(dtype_of(packed.get()) == aoti_torch_dtype_uint8());

  const std::vector<double> x{1.0, 0.5, -2.0, 0.25, -0.75, 3.0};  // [2, 3]
  TypedTensor input({2, 3}, kF32, x);
  TypedTensor in_scale({}, kF32, {0.25}), in_zp({}, kI64, {128}), out_scale({}, kF32, {0.125}), out_zp({}, kI64, {100});
  Handle out;
  REQUIRE(aoti_torch_cpu__wrapped_quantized_linear_prepacked(input.h.get(), in_scale.h.get(), in_zp.h.get(),
                                                             packed.get(), out_scale.h.get(), out_zp.h.get(), 2,
                                                             out.out()) == 0);
  CHECK(sizes_of(out.get()) == std::vector<int64_t>{2, 2});
  // Every value is exact on the grids, so the result is x @ w^T + bias rounded to a multiple of 0.125 (here exact).
  std::vector<double> want;
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 2; ++n) {
      double acc = std::vector<double>{0.25, -1.0}[n];
      for (int k = 0; k < 3; ++k) acc += x[m * 3 + k] * w[n * 3 + k];
      want.push_back(std::round(acc / 0.125) * 0.125);
    }
  CHECK(read_values(out.get()) == want);

  // The output saturates at quint8's range: (255 - 100) * 0.125 = 19.375 at most.
  TypedTensor big({1, 3}, kF32, {31.75, -32, 0});  // row 0: 79.875 before the clamp
  Handle clamped;
  REQUIRE(aoti_torch_cpu__wrapped_quantized_linear_prepacked(big.h.get(), in_scale.h.get(), in_zp.h.get(), packed.get(),
                                                             out_scale.h.get(), out_zp.h.get(), 2, clamped.out()) == 0);
  CHECK(read_values(clamped.get())[0] == 19.375);

  Handle bad;
  TypedTensor wrong_k({2, 4}, kF32, std::vector<double>(8, 0.0));
  CHECK(aoti_torch_cpu__wrapped_quantized_linear_prepacked(wrong_k.h.get(), in_scale.h.get(), in_zp.h.get(),
                                                           packed.get(), out_scale.h.get(), out_zp.h.get(), 2,
                                                           bad.out()) == 1);
  CHECK(aoti_torch_cpu__wrapped_quantized_linear_prepacked(input.h.get(), in_scale.h.get(), in_zp.h.get(),
                                                           weight.h.get(), out_scale.h.get(), out_zp.h.get(), 2,
                                                           bad.out()) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("not one _wrapped_linear_prepack packed") != std::string::npos);
}
