// The CUDA part of the shim against the CPU shim on the same data: matrix products (transposed operands,
// broadcast bias, batches), convolution (stride, padding, groups, channels-last), attention (causal, bias),
// copies between host and device and within the device, cumsum (dtypes, strided input). Needs an NVIDIA GPU: without one every case says
// why it skipped (tests/device/run.sh runs it on the device machine).
#include "aoti_shim_cuda.h"
#include "op_test_util.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <string>

using namespace mpspack::test;

namespace {

constexpr int32_t kF32 = 6;

// Empty string when a GPU is usable, else why not.
std::string gpu_missing() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return cudaGetErrorString(e);
  if (n == 0) return "no CUDA device";
  return {};
}

#define REQUIRE_GPU()                                       \
  do {                                                      \
    const std::string why = gpu_missing();                  \
    if (!why.empty()) {                                     \
      WARN("skipped: needs an NVIDIA GPU (" << why << ")"); \
      return;                                               \
    }                                                       \
  } while (0)

Handle empty_on(int32_t device, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                int32_t dtype = kF32) {
  Handle t;
  REQUIRE(aoti_torch_empty_strided(int64_t(sizes.size()), sizes.data(), strides.data(), dtype, device, 0, t.out()) == 0);
  return t;
}

// A host tensor holding `v`, and its copy on the GPU.
struct Pair {
  std::vector<float> host_data;
  Handle cpu, gpu;
};
Pair make(const std::vector<int64_t>& sizes, uint32_t seed) {
  Pair p;
  p.host_data = random_floats(size_t(numel(sizes)), seed);
  p.cpu = from_blob(p.host_data.data(), sizes, contiguous(sizes), kF32);
  p.gpu = empty_on(aoti_torch_device_type_cuda(), sizes, contiguous(sizes));
  REQUIRE(aoti_torch_copy_(p.gpu.get(), p.cpu.get(), 0) == 0);
  return p;
}

// A view with other sizes/strides on the same storage.
Handle view(AtenTensorHandle t, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
            int64_t offset = 0) {
  Handle v;
  REQUIRE(aoti_torch__reinterpret_tensor(t, int64_t(sizes.size()), sizes.data(), strides.data(), offset, v.out()) == 0);
  return v;
}

// Any tensor (CPU or GPU) as dense host floats.
std::vector<float> host(AtenTensorHandle t) {
  const auto sizes = sizes_of(t);
  Handle h = empty(sizes, contiguous(sizes), kF32);
  REQUIRE(aoti_torch_copy_(h.get(), t, 0) == 0);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(h.get(), &p) == 0);
  const float* f = static_cast<const float*>(p);
  return std::vector<float>(f, f + numel(sizes));
}

void require_close(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-4f) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])));
  }
}

}  // namespace

TEST_CASE("cuda copies: host to device, strided device to device, device to host", "[cuda]") {
  REQUIRE_GPU();
  Pair a = make({3, 4}, 1);
  REQUIRE(host(a.gpu.get()) == a.host_data);
  // The transpose, materialised on the device.
  Handle at = view(a.gpu.get(), {4, 3}, {1, 4});
  Handle dense = empty_on(aoti_torch_device_type_cuda(), {4, 3}, {3, 1});
  REQUIRE(aoti_torch_copy_(dense.get(), at.get(), 0) == 0);
  const auto t = host(dense.get());
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) REQUIRE(t[size_t(i * 3 + j)] == a.host_data[size_t(j * 4 + i)]);
  // clone keeps values; clone_preserve_strides keeps the strides too.
  Handle c1, c2;
  REQUIRE(aoti_torch_clone(at.get(), c1.out()) == 0);
  REQUIRE(host(c1.get()) == t);
  REQUIRE(aoti_torch_clone_preserve_strides(at.get(), c2.out()) == 0);
  REQUIRE(strides_of(c2.get()) == std::vector<int64_t>{1, 4});
  REQUIRE(host(c2.get()) == t);
  int32_t dev = -1;
  REQUIRE(aoti_torch_get_device_type(c2.get(), &dev) == 0);
  REQUIRE(dev == aoti_torch_device_type_cuda());
}

TEST_CASE("cuda mm, addmm and bmm match the CPU shim", "[cuda]") {
  REQUIRE_GPU();
  Pair a = make({5, 7}, 2), b = make({7, 3}, 3), bias = make({3}, 4), bt_src = make({3, 7}, 5);
  SECTION("mm, and mm with a transposed right operand") {
    Handle cpu_out = empty({5, 3}, {3, 1}, kF32), gpu_out = empty_on(1, {5, 3}, {3, 1});
    REQUIRE(aoti_torch_cpu_mm_out(cpu_out.get(), a.cpu.get(), b.cpu.get()) == 0);
    REQUIRE(aoti_torch_cuda_mm_out(gpu_out.get(), a.gpu.get(), b.gpu.get()) == 0);
    require_close(host(gpu_out.get()), host(cpu_out.get()));
    Handle bt_cpu = view(bt_src.cpu.get(), {7, 3}, {1, 7}), bt_gpu = view(bt_src.gpu.get(), {7, 3}, {1, 7});
    REQUIRE(aoti_torch_cpu_mm_out(cpu_out.get(), a.cpu.get(), bt_cpu.get()) == 0);
    REQUIRE(aoti_torch_cuda_mm_out(gpu_out.get(), a.gpu.get(), bt_gpu.get()) == 0);
    require_close(host(gpu_out.get()), host(cpu_out.get()));
  }
  SECTION("addmm with a broadcast bias, beta and alpha") {
    for (auto [beta, alpha] : {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}, std::pair{0.0, 1.0}}) {
      Handle cpu_out = empty({5, 3}, {3, 1}, kF32), gpu_out = empty_on(1, {5, 3}, {3, 1});
      REQUIRE(aoti_torch_cpu_addmm_out(cpu_out.get(), bias.cpu.get(), a.cpu.get(), b.cpu.get(), beta, alpha) == 0);
      REQUIRE(aoti_torch_cuda_addmm_out(gpu_out.get(), bias.gpu.get(), a.gpu.get(), b.gpu.get(), beta, alpha) == 0);
      require_close(host(gpu_out.get()), host(cpu_out.get()));
    }
  }
  SECTION("bmm") {
    Pair x = make({2, 4, 5}, 6), y = make({2, 5, 3}, 7);
    Handle cpu_out = empty({2, 4, 3}, {12, 3, 1}, kF32), gpu_out = empty_on(1, {2, 4, 3}, {12, 3, 1});
    REQUIRE(aoti_torch_cpu_bmm_out(cpu_out.get(), x.cpu.get(), y.cpu.get()) == 0);
    REQUIRE(aoti_torch_cuda_bmm_out(gpu_out.get(), x.gpu.get(), y.gpu.get()) == 0);
    require_close(host(gpu_out.get()), host(cpu_out.get()));
  }
  SECTION("shapes that do not chain are refused") {
    Handle gpu_out = empty_on(1, {5, 3}, {3, 1});
    REQUIRE(aoti_torch_cuda_mm_out(gpu_out.get(), a.gpu.get(), a.gpu.get()) != 0);
  }
}

TEST_CASE("cuda convolution matches the CPU shim", "[cuda]") {
  REQUIRE_GPU();
  struct Case { int64_t C, O, groups, stride, padding; bool channels_last; };
  for (Case c : {Case{3, 4, 1, 1, 1, false}, Case{4, 6, 2, 2, 1, false}, Case{3, 8, 1, 2, 0, true}}) {
    INFO("C " << c.C << " O " << c.O << " groups " << c.groups << " channels_last " << c.channels_last);
    Pair x = make({2, c.C, 9, 9}, 8), w = make({c.O, c.C / c.groups, 3, 3}, 9), b = make({c.O}, 10);
    Handle xc = view(x.cpu.get(), {2, c.C, 9, 9}, {81 * c.C, 1, 9 * c.C, c.C});
    Handle xg = view(x.gpu.get(), {2, c.C, 9, 9}, {81 * c.C, 1, 9 * c.C, c.C});
    AtenTensorHandle in_cpu = c.channels_last ? xc.get() : x.cpu.get();
    AtenTensorHandle in_gpu = c.channels_last ? xg.get() : x.gpu.get();
    const int64_t stride[] = {c.stride, c.stride}, padding[] = {c.padding, c.padding}, dilation[] = {1, 1}, op[] = {0, 0};
    AtenTensorHandle bc = b.cpu.get(), bg = b.gpu.get();
    Handle yc, yg;
    REQUIRE(aoti_torch_cpu_convolution(in_cpu, w.cpu.get(), &bc, stride, 2, padding, 2, dilation, 2, 0, op, 2, c.groups,
                                       yc.out()) == 0);
    REQUIRE(aoti_torch_cuda_convolution(in_gpu, w.gpu.get(), &bg, stride, 2, padding, 2, dilation, 2, 0, op, 2,
                                        c.groups, yg.out()) == 0);
    REQUIRE(sizes_of(yg.get()) == sizes_of(yc.get()));
    REQUIRE(strides_of(yg.get()) == strides_of(yc.get()));
    require_close(host(yg.get()), host(yc.get()));
  }
}

TEST_CASE("cuda efficient attention matches the CPU shim's attention", "[cuda]") {
  REQUIRE_GPU();
  const std::vector<int64_t> s{2, 3, 5, 8};
  Pair q = make(s, 11), k = make(s, 12), v = make(s, 13), bias = make({2, 3, 5, 5}, 14);
  for (int causal : {0, 1})
    for (bool with_bias : {false, true}) {
      INFO("causal " << causal << " bias " << with_bias);
      if (causal && with_bias) continue;  // torch takes one or the other
      AtenTensorHandle bc = bias.cpu.get(), bg = bias.gpu.get();
      Handle oc, lc, o0, o1, o2, o3;
      REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
                  q.cpu.get(), k.cpu.get(), v.cpu.get(), 0.0, causal, with_bias ? &bc : nullptr, nullptr, oc.out(),
                  lc.out()) == 0);
      REQUIRE(aoti_torch_cuda__scaled_dot_product_efficient_attention(
                  q.gpu.get(), k.gpu.get(), v.gpu.get(), with_bias ? &bg : nullptr, 1, 0.0, causal, nullptr, o0.out(),
                  o1.out(), o2.out(), o3.out()) == 0);
      REQUIRE(sizes_of(o0.get()) == s);
      // torch's kernel returns [B, L, H, Ev] memory transposed to [B, H, L, Ev].
      REQUIRE(strides_of(o0.get()) == std::vector<int64_t>{5 * 3 * 8, 8, 3 * 8, 1});
      require_close(host(o0.get()), host(oc.get()));
      REQUIRE(sizes_of(o1.get()) == std::vector<int64_t>{2, 3, 32});
    }
}

namespace {

// A copy on the GPU of a CPU tensor (same dtype, contiguous), and a GPU tensor's values back on the host.
Handle to_gpu(AtenTensorHandle cpu) {
  const auto sizes = sizes_of(cpu);
  Handle g = empty_on(aoti_torch_device_type_cuda(), sizes, contiguous(sizes), dtype_of(cpu));
  REQUIRE(aoti_torch_copy_(g.get(), cpu, 0) == 0);
  return g;
}
std::vector<double> host_values(AtenTensorHandle gpu) {
  const auto sizes = sizes_of(gpu);
  Handle h = empty(sizes, contiguous(sizes), dtype_of(gpu));
  REQUIRE(aoti_torch_copy_(h.get(), gpu, 0) == 0);
  return read_values(h.get());
}

}  // namespace

TEST_CASE("cuda cumsum matches the CPU shim: every dim, strided input, result dtypes", "[cuda]") {
  REQUIRE_GPU();
  const int32_t f32 = aoti_torch_dtype_float32(), i32 = aoti_torch_dtype_int32(), i64 = aoti_torch_dtype_int64(),
                bf16 = aoti_torch_dtype_bfloat16(), f64 = aoti_torch_dtype_float64();
  const std::vector<int64_t> sizes{3, 70, 5};
  auto run_both = [](AtenTensorHandle cpu_in, AtenTensorHandle gpu_in, int64_t dim, int32_t* dtype) {
    Handle yc, yg;
    REQUIRE(aoti_torch_cpu_cumsum(cpu_in, dim, dtype, yc.out()) == 0);
    REQUIRE(aoti_torch_cuda_cumsum(gpu_in, dim, dtype, yg.out()) == 0);
    REQUIRE(dtype_of(yg.get()) == dtype_of(yc.get()));
    REQUIRE(sizes_of(yg.get()) == sizes_of(yc.get()));
    REQUIRE(strides_of(yg.get()) == strides_of(yc.get()));
    return std::pair{host_values(yg.get()), read_values(yc.get())};
  };
  SECTION("float32, bfloat16 and int32 along every dim") {
    for (int32_t dt : {f32, bf16, i32}) {
      const auto v = small_integers(size_t(numel(sizes)), 21, -3, 3);  // exact sums in every dtype and order
      TypedTensor x(sizes, dt, v);
      Handle g = to_gpu(x.h.get());
      for (int64_t dim : {0, 1, 2, -1}) {
        INFO("dtype " << dt << " dim " << dim);
        auto [got, want] = run_both(x.h.get(), g.get(), dim, nullptr);
        REQUIRE(got == want);
      }
    }
  }
  SECTION("int32 input gives int64; an explicit dtype casts first") {
    TypedTensor x({4}, i32, {2147483647.0, 2147483647.0, 1, -3});
    Handle g = to_gpu(x.h.get());
    auto [got, want] = run_both(x.h.get(), g.get(), 0, nullptr);
    REQUIRE(got == want);
    Handle y;
    REQUIRE(aoti_torch_cuda_cumsum(g.get(), 0, nullptr, y.out()) == 0);
    REQUIRE(dtype_of(y.get()) == i64);
    int32_t to_f64 = f64;
    auto [got64, want64] = run_both(x.h.get(), g.get(), 0, &to_f64);
    REQUIRE(got64 == want64);
  }
  SECTION("a transposed (non-contiguous) float input, random values") {
    Pair a = make({6, 40}, 22);
    Handle tc = view(a.cpu.get(), {40, 6}, {1, 40}), tg = view(a.gpu.get(), {40, 6}, {1, 40});
    for (int64_t dim : {0, 1}) {
      auto [got, want] = run_both(tc.get(), tg.get(), dim, nullptr);
      require_close(std::vector<float>(got.begin(), got.end()), std::vector<float>(want.begin(), want.end()));
    }
  }
  SECTION("512 bfloat16 ones reach 512 (the running value is float)") {
    TypedTensor x({512}, bf16, std::vector<double>(512, 1.0));
    Handle g = to_gpu(x.h.get()), y;
    REQUIRE(aoti_torch_cuda_cumsum(g.get(), 0, nullptr, y.out()) == 0);
    REQUIRE(host_values(y.get()).back() == 512.0);
  }
  SECTION("a size-0 dim, a bad dim and a CPU tensor") {
    TypedTensor e({2, 0}, f32, {});
    Handle ge = to_gpu(e.h.get()), y;
    REQUIRE(aoti_torch_cuda_cumsum(ge.get(), 1, nullptr, y.out()) == 0);
    REQUIRE(sizes_of(y.get()) == std::vector<int64_t>{2, 0});
    Handle bad;
    CHECK(aoti_torch_cuda_cumsum(ge.get(), 2, nullptr, bad.out()) != 0);
    CHECK(aoti_torch_cuda_cumsum(e.h.get(), 0, nullptr, bad.out()) != 0);
  }
}
