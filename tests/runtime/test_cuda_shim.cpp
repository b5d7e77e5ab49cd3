// The CUDA part of the shim: matrix products (transposed operands, broadcast bias, batches), attention (causal,
// bias, strided views, several row blocks; the raw kernels' packed batches and windows), the float8 grouped
// product and cumsum (dtypes, strided input) against the CPU shim or a double reference; convolution (cuDNN)
// against a direct loop in double; copies between host and device and within the device. Needs an NVIDIA GPU:
// without one every case says why it skipped (tests/device/run.sh runs it on the device machine).
#include "runtime/shim_cuda/aoti_shim_cuda.h"
#include "op_test_util.hpp"
#include "runtime/shim/provided.hpp"
#include "runtime/tuning/tuning.hpp"
#include "shim_test_util.hpp"
#include "runtime/shim/tensor.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
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
  REQUIRE(aoti_torch_empty_strided(int64_t(sizes.size()), sizes.data(), strides.data(), dtype, device, 0, t.out()) ==
          0);
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

// Any tensor (CPU or GPU) as dense host values of T (float or double; `dtype` its code), row-major.
template <class T>
std::vector<T> host_as(AtenTensorHandle t, int32_t dtype) {
  const auto sizes = sizes_of(t);
  Handle h = empty(sizes, contiguous(sizes), dtype);
  REQUIRE(aoti_torch_copy_(h.get(), t, 0) == 0);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(h.get(), &p) == 0);
  const T* v = static_cast<const T*>(p);
  return std::vector<T>(v, v + numel(sizes));
}

std::vector<float> host(AtenTensorHandle t) { return host_as<float>(t, kF32); }

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

// MPSPACK_CUDA_GEMM's ways for a single product: the strided-batched call with a batch of one; torch's own
// (cublasSgemm for float32, cublasGemmEx otherwise); and a row times a Linear's weight as one kernel of mpspack's
// (gemv), over K of 9 (element by element) and 64 (four at a time), with and without the bias. A row vector (the
// decode step's products) and 6 rows; nn.Linear's weight transposed and GPT-2's Conv1D weight as it is; beta and
// alpha other than 1, which gemv leaves to cuBLAS. N 37: a partial last block of columns.
TEST_CASE("cuda mm and addmm match the CPU shim whichever way a single product takes (MPSPACK_CUDA_GEMM)", "[cuda]") {
  REQUIRE_GPU();
  for (const char* way : {"batched", "plain", "gemv"})
    for (int64_t M : {1, 6})
      for (int64_t K : {9, 64}) {
        INFO(way << ", M " << M << ", K " << K);
        mpspack::Tuning t;
        t.cuda_gemm = way;
        const mpspack::ScopedTuning tuned(t);
        const int64_t N = 37;
        Pair a = make({M, K}, 11), w = make({N, K}, 12), bias = make({N}, 13), conv1d = make({K, N}, 14);
        // nn.Linear's weight transposed (read along K), and a [K, N] weight as GPT-2's Conv1D has it (along N).
        Handle wt_cpu = view(w.cpu.get(), {K, N}, {1, K}), wt_gpu = view(w.gpu.get(), {K, N}, {1, K});
        for (auto [w_cpu, w_gpu] :
             {std::pair{wt_cpu.get(), wt_gpu.get()}, std::pair{conv1d.cpu.get(), conv1d.gpu.get()}}) {
          INFO((w_cpu == wt_cpu.get() ? "[N, K] weight" : "[K, N] weight"));
          Handle cpu_out = empty({M, N}, {N, 1}, kF32), gpu_out = empty_on(1, {M, N}, {N, 1});
          REQUIRE(aoti_torch_cpu_mm_out(cpu_out.get(), a.cpu.get(), w_cpu) == 0);
          REQUIRE(aoti_torch_cuda_mm_out(gpu_out.get(), a.gpu.get(), w_gpu) == 0);
          require_close(host(gpu_out.get()), host(cpu_out.get()));
          for (auto [beta, alpha] : {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}}) {
            INFO("beta " << beta << ", alpha " << alpha);
            REQUIRE(aoti_torch_cpu_addmm_out(cpu_out.get(), bias.cpu.get(), a.cpu.get(), w_cpu, beta, alpha) == 0);
            REQUIRE(aoti_torch_cuda_addmm_out(gpu_out.get(), bias.gpu.get(), a.gpu.get(), w_gpu, beta, alpha) == 0);
            require_close(host(gpu_out.get()), host(cpu_out.get()));
          }
        }
        // bfloat16 operands (cublasGemmEx on the plain way): against the float32 product of the same rounded
        // values, to bfloat16's precision.
        // Converted on the way up from the host: the CUDA shim converts dtypes only between host and device.
        const int32_t bf16 = aoti_torch_dtype_bfloat16();
        auto upload = [](std::vector<float> values, const std::vector<int64_t>& sizes, int32_t dtype) {
          Handle from = from_blob(values.data(), sizes, contiguous(sizes), kF32);
          Handle to = empty_on(aoti_torch_device_type_cuda(), sizes, contiguous(sizes), dtype);
          REQUIRE(aoti_torch_copy_(to.get(), from.get(), 0) == 0);
          return to;
        };
        Handle a16 = upload(a.host_data, {M, K}, bf16), w16 = upload(w.host_data, {N, K}, bf16);
        Handle a_back = upload(host(a16.get()), {M, K}, kF32), w_back = upload(host(w16.get()), {N, K}, kF32);
        Handle w16t = view(w16.get(), {K, N}, {1, K}), w_backt = view(w_back.get(), {K, N}, {1, K});
        Handle out16 = empty_on(1, {M, N}, {N, 1}, bf16), want = empty_on(1, {M, N}, {N, 1});
        REQUIRE(aoti_torch_cuda_mm_out(out16.get(), a16.get(), w16t.get()) == 0);
        REQUIRE(aoti_torch_cuda_mm_out(want.get(), a_back.get(), w_backt.get()) == 0);
        require_close(host(out16.get()), host(want.get()), 1e-2f);
      }
}

// A half-precision addmm with a 1-d bias rounds once, as torch's (cuBLASLt's bias epilogue): the products are
// small integers, so the float32 accumulator is exact (257 in bfloat16, 2049 in float16, both halfway between two
// representable values) and only the rounding decides. Rounding the product first (to 256, 2048: ties to even)
// and the sum again gives [256, 255] and [2048, 2047] instead.
TEST_CASE("cuda addmm in bfloat16 and float16 adds a 1-d bias before rounding, as torch does", "[cuda]") {
  REQUIRE_GPU();
  constexpr int32_t kHalfF16 = 5, kHalfBF16 = 15;
  struct Case {
    int32_t dtype;
    float x, w, sum;  // x * w + 1 * 1 == sum
    std::vector<float> want;
  };
  for (const Case& c :
       {Case{kHalfBF16, 16, 16, 257, {258, 256, 258, 256}}, Case{kHalfF16, 32, 64, 2049, {2050, 2048, 2050, 2048}}}) {
    INFO("dtype " << c.dtype);
    std::vector<float> a_host{c.x, 1, c.x, 1}, b_host{c.w, c.w, 1, 1}, bias_host{0.75f, -0.75f};
    auto on_gpu = [&](std::vector<float>& v, const std::vector<int64_t>& sizes) {
      Handle src = from_blob(v.data(), sizes, contiguous(sizes), kF32);
      Handle t = empty_on(aoti_torch_device_type_cuda(), sizes, contiguous(sizes), c.dtype);
      REQUIRE(aoti_torch_copy_(t.get(), src.get(), 0) == 0);
      return t;
    };
    Handle a = on_gpu(a_host, {2, 2}), b = on_gpu(b_host, {2, 2}), bias = on_gpu(bias_host, {2});
    Handle out = empty_on(aoti_torch_device_type_cuda(), {2, 2}, {2, 1}, c.dtype);
    REQUIRE(aoti_torch_cuda_addmm_out(out.get(), bias.get(), a.get(), b.get(), 1.0, 1.0) == 0);
    CHECK(host(out.get()) == c.want);
    // beta 0.5 is not torch's epilogue case: the bias goes through C, still within one rounding of the sum.
    REQUIRE(aoti_torch_cuda_addmm_out(out.get(), bias.get(), a.get(), b.get(), 0.5, 1.0) == 0);
    for (float v : host(out.get())) CHECK(std::fabs(v - c.sum) <= c.sum / 128);
  }
}

// ---- convolution (cuDNN) against a direct loop in double ---------------------------------------------------------

namespace {

constexpr int32_t kU8 = 0, kI32 = 3, kF16 = 5, kF64 = 7, kBF16 = 15;

// Dense strides with C innermost: channels-last for 4-D and 5-D tensors; for a 3-D [N, C, L] one, the memory of an
// [N, L, C] tensor transposed.
std::vector<int64_t> channels_last(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t step = sizes[1];
  st[1] = 1;
  for (size_t d = sizes.size(); d-- > 2;) {
    st[d] = step;
    step *= sizes[d];
  }
  st[0] = step;
  return st;
}

enum ConvFlags : unsigned { kTransposed = 1, kNoBias = 2, kInputChannelsLast = 4, kWeightChannelsLast = 8 };

struct ConvCase {
  const char* name;
  int64_t N, C, O, groups;
  std::vector<int64_t> in, kernel, stride, pad, dilation;
  unsigned flags = 0;
  std::vector<int64_t> out_pad = {};  // transposed only; empty: zeros
  bool transposed() const { return flags & kTransposed; }
  bool bias() const { return !(flags & kNoBias); }
  bool x_channels_last() const { return flags & kInputChannelsLast; }
  bool w_channels_last() const { return flags & kWeightChannelsLast; }
};

// Every shape kind AOTInductor hands the op; odd sizes throughout.
const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {"depthwise 3x3", 2, 8, 8, 8, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"depthwise 5x5 stride 2, channels-last",
       2,
       16,
       16,
       16,
       {14, 13},
       {5, 5},
       {2, 2},
       {2, 2},
       {1, 1},
       kInputChannelsLast},
      {"depthwise with 2 outputs per channel", 1, 4, 8, 4, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"grouped, no bias", 2, 6, 9, 3, {8, 7}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, kNoBias},
      {"dilation 2", 2, 3, 4, 1, {11, 10}, {3, 3}, {1, 1}, {2, 2}, {2, 2}},
      {"stride larger than the kernel", 2, 3, 5, 1, {13, 10}, {2, 2}, {3, 3}, {0, 0}, {1, 1}},
      {"1x1", 2, 16, 8, 1, {5, 6}, {1, 1}, {1, 1}, {0, 0}, {1, 1}},
      {"1x1 stride 2, channels-last", 2, 12, 10, 1, {7, 8}, {1, 1}, {2, 2}, {0, 0}, {1, 1}, kInputChannelsLast},
      {"7x7 stride 2", 2, 3, 5, 1, {23, 19}, {7, 7}, {2, 2}, {3, 3}, {1, 1}},
      {"one channel", 2, 1, 1, 1, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"batch 1", 1, 4, 6, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"batch 32, channels-last", 32, 4, 4, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, kInputChannelsLast},
      {"weight channels-last only", 2, 4, 6, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, kWeightChannelsLast},
      {"grouped, both channels-last",
       2,
       8,
       8,
       2,
       {7, 6},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       kInputChannelsLast | kWeightChannelsLast},
      {"1-D", 2, 4, 6, 1, {17}, {5}, {2}, {2}, {1}},
      {"1-D depthwise, dilation 2, input [N, L, C] transposed",
       2,
       6,
       6,
       6,
       {20},
       {3},
       {1},
       {2},
       {2},
       kInputChannelsLast},
      {"3-D", 2, 3, 4, 1, {5, 6, 7}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}},
      {"3-D depthwise, dilation 2 (the direct kernel)",
       2,
       6,
       6,
       6,
       {5, 7, 6},
       {3, 3, 3},
       {1, 1, 1},
       {2, 2, 2},
       {2, 2, 2}},
      {"3-D depthwise, 2 outputs per channel, stride larger than the kernel, no bias",
       1,
       3,
       6,
       3,
       {7, 8, 9},
       {1, 2, 2},
       {2, 3, 3},
       {0, 1, 0},
       {1, 1, 1},
       kNoBias},
      {"3-D depthwise, one channel, batch 32", 32, 1, 1, 1, {3, 4, 5}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
      {"3-D depthwise, channels-last (cuDNN)",
       1,
       4,
       4,
       4,
       {4, 5, 6},
       {3, 3, 3},
       {1, 2, 1},
       {1, 1, 1},
       {1, 1, 1},
       kInputChannelsLast},
      {"3-D grouped, channels-last",
       1,
       4,
       6,
       2,
       {4, 5, 6},
       {3, 1, 3},
       {1, 1, 2},
       {1, 0, 1},
       {1, 1, 1},
       kInputChannelsLast},
      {"transposed, grouped, output_padding", 2, 4, 6, 2, {5, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, kTransposed, {1, 1}},
      {"transposed 1-D, stride 3, output_padding 2", 2, 3, 5, 1, {7}, {4}, {3}, {0}, {1}, kTransposed, {2}},
      {"transposed 3-D, no bias",
       1,
       4,
       2,
       1,
       {3, 4, 3},
       {2, 3, 3},
       {2, 1, 2},
       {0, 1, 1},
       {1, 1, 1},
       kTransposed | kNoBias,
       {1, 0, 0}},
      {"transposed depthwise, channels-last",
       2,
       6,
       6,
       6,
       {6, 5},
       {4, 4},
       {2, 2},
       {1, 1},
       {1, 1},
       kTransposed | kInputChannelsLast},
      {"transposed, dilation 2", 1, 3, 4, 1, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {2, 2}, kTransposed, {1, 1}},
  };
  return cases;
}

// A case in three spatial dims (a 1-D or 2-D one has leading dims of size 1), with its output size.
struct Geometry {
  int64_t N, C, O, G;
  std::array<int64_t, 3> in, k, out, stride, pad, dil;
};

std::array<int64_t, 3> padded(const std::vector<int64_t>& v, int64_t filler) {
  std::array<int64_t, 3> a{filler, filler, filler};
  std::copy(v.begin(), v.end(), a.end() - v.size());
  return a;
}

Geometry geometry(const ConvCase& c) {
  Geometry g{c.N,
             c.C,
             c.O,
             c.groups,
             padded(c.in, 1),
             padded(c.kernel, 1),
             {},
             padded(c.stride, 1),
             padded(c.pad, 0),
             padded(c.dilation, 1)};
  const auto out_pad = padded(c.out_pad, 0);
  for (size_t d = 0; d < 3; ++d) {
    const int64_t reach = g.dil[d] * (g.k[d] - 1) + 1;
    g.out[d] = c.transposed() ? (g.in[d] - 1) * g.stride[d] - 2 * g.pad[d] + reach + out_pad[d]
                              : (g.in[d] + 2 * g.pad[d] - reach) / g.stride[d] + 1;
  }
  return g;
}

int64_t volume(const std::array<int64_t, 3>& dims) { return dims[0] * dims[1] * dims[2]; }

// Index of [row][p0][p1][p2] in a dense array of rows of `dims`.
int64_t flat(int64_t row, const std::array<int64_t, 3>& p, const std::array<int64_t, 3>& dims) {
  return ((row * dims[0] + p[0]) * dims[1] + p[1]) * dims[2] + p[2];
}

std::array<int64_t, 3> unravel(int64_t i, const std::array<int64_t, 3>& dims) {
  return {i / (dims[1] * dims[2]), i / dims[2] % dims[1], i % dims[2]};
}

// Calls f(x index, w index, y index) for every product the convolution sums. A convolution reads input position
// p*stride - pad + k*dilation for output position p and tap k; a transposed one writes output position
// p*stride - pad + k*dilation from input position p.
template <class F>
void for_each_term(const Geometry& g, bool transposed, F f) {
  const int64_t Cg = g.C / g.G, Og = g.O / g.G;
  const auto& from = transposed ? g.in : g.out;
  const auto& to = transposed ? g.out : g.in;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t o = 0; o < g.O; ++o)
      for (int64_t c = 0; c < Cg; ++c) {
        const int64_t ci = o / Og * Cg + c;
        const int64_t w_row = transposed ? ci * Og + o % Og : o * Cg + c;  // [C, O/G, k] or [O, C/G, k]
        for (int64_t pi = 0; pi < volume(from); ++pi)
          for (int64_t ki = 0; ki < volume(g.k); ++ki) {
            const auto p = unravel(pi, from), k = unravel(ki, g.k);
            std::array<int64_t, 3> q{};
            bool inside = true;
            for (size_t d = 0; d < 3; ++d) {
              q[d] = p[d] * g.stride[d] - g.pad[d] + k[d] * g.dil[d];
              inside = inside && q[d] >= 0 && q[d] < to[d];
            }
            if (!inside) continue;
            const auto& xp = transposed ? p : q;
            const auto& yp = transposed ? q : p;
            f(flat(n * g.C + ci, xp, g.in), flat(w_row, k, g.k), flat(n * g.O + o, yp, g.out));
          }
      }
}

// The output in double, and per element the sum of the magnitudes of its terms (what rounding errors scale with).
struct Reference {
  std::vector<double> y, magnitude;
};

Reference reference(const Geometry& g, bool transposed, const std::vector<double>& x, const std::vector<double>& w,
                    const std::vector<double>* bias) {
  const size_t n = size_t(g.N * g.O * volume(g.out));
  Reference r{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  for_each_term(g, transposed, [&](int64_t xi, int64_t wi, int64_t yi) {
    r.y[size_t(yi)] += x[size_t(xi)] * w[size_t(wi)];
    r.magnitude[size_t(yi)] += std::fabs(x[size_t(xi)] * w[size_t(wi)]);
  });
  if (bias)
    for (size_t i = 0; i < n; ++i) {
      const double b = (*bias)[size_t(int64_t(i) / volume(g.out) % g.O)];
      r.y[i] += b;
      r.magnitude[i] += std::fabs(b);
    }
  return r;
}

// A cuda tensor of `dtype` with those sizes and strides, holding `values` (row-major) rounded to the dtype.
Handle upload(const std::vector<double>& values, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
              int32_t dtype) {
  Handle h = from_blob(const_cast<double*>(values.data()), sizes, contiguous(sizes), kF64);
  Handle g = empty_on(aoti_torch_device_type_cuda(), sizes, strides, dtype);
  REQUIRE(aoti_torch_copy_(g.get(), h.get(), 0) == 0);
  return g;
}

std::vector<double> doubles(AtenTensorHandle t) { return host_as<double>(t, kF64); }

std::vector<double> random_doubles(int64_t n, uint32_t seed) {
  const auto f = random_floats(size_t(n), seed);
  return std::vector<double>(f.begin(), f.end());
}

// Leaves `bytes` of 0xFF (NaN in every float dtype) in the allocator's pool, which the next allocation of that
// size on this stream draws from: an output element the convolution does not write reads back as NaN.
void poison_pool(int64_t bytes) {
  Handle p = empty_on(aoti_torch_device_type_cuda(), {bytes}, {1}, kU8);
  void* d = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(p.get(), &d) == 0);
  REQUIRE(cudaMemset(d, 0xFF, size_t(bytes)) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}

bool tf32_allowed() {
  const char* v = std::getenv("MPSPACK_CUDNN_TF32");
  return !(v != nullptr && std::string(v) == "0");
}

// How far a result may be from the double reference, as a bound over its terms' magnitudes: f16/bf16 round the
// convolution's result and again after the bias; f32 inputs lose up to 2^-10 each as TF32 (torch's default for
// convolutions) unless MPSPACK_CUDNN_TF32=0; FFT and Winograd algorithms lose a little more. f64 is exact but for
// the order of the sums.
double tolerance(int32_t dtype, double magnitude) {
  switch (dtype) {
    case kF64: return 1e-12 * magnitude + 1e-12;
    case kF32: return (tf32_allowed() ? 2.5e-3 : 5e-5) * magnitude + 1e-6;
    case kF16: return 3e-3 * magnitude + 1e-3;
    default: return 2e-2 * magnitude + 1e-2;  // bf16
  }
}

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// One case, called twice (the second call runs the plan the first one made), each time against the reference:
// output sizes, strides by torch's rule (channels-last when the input or the weight is, 2-D and 3-D), values.
void check_convolution(const ConvCase& c, int32_t dtype, uint32_t seed) {
  INFO(c.name << ", " << mpspack::shim::dtype_name(dtype));
  const Geometry g = geometry(c);
  const size_t sp = c.in.size();
  const std::vector<int64_t> out(g.out.end() - sp, g.out.end());
  const auto xs = concat({c.N, c.C}, c.in), ys = concat({c.N, c.O}, out);
  const auto ws = concat(
      c.transposed() ? std::vector<int64_t>{c.C, c.O / c.groups} : std::vector<int64_t>{c.O, c.C / c.groups}, c.kernel);
  Handle x =
      upload(random_doubles(numel(xs), seed), xs, c.x_channels_last() ? channels_last(xs) : contiguous(xs), dtype);
  Handle w =
      upload(random_doubles(numel(ws), seed + 1), ws, c.w_channels_last() ? channels_last(ws) : contiguous(ws), dtype);
  Handle b = upload(random_doubles(c.O, seed + 2), {c.O}, {1}, dtype);
  const std::vector<double> bias = doubles(b.get());
  const Reference r = reference(g, c.transposed(), doubles(x.get()), doubles(w.get()), c.bias() ? &bias : nullptr);
  const bool cl_out = sp >= 2 && (c.x_channels_last() || c.w_channels_last());
  const std::vector<int64_t> out_pad = c.out_pad.empty() ? std::vector<int64_t>(sp, 0) : c.out_pad;
  const size_t itemsize = dtype == kF64 ? 8 : dtype == kF32 ? 4 : 2;
  for (int call = 0; call < 2; ++call) {
    INFO("call " << call + 1);
    poison_pool(numel(ys) * int64_t(itemsize));
    AtenTensorHandle bh = b.get();
    Handle y;
    const AOTITorchError rc = aoti_torch_cuda_convolution(
        x.get(), w.get(), c.bias() ? &bh : nullptr, c.stride.data(), int64_t(sp), c.pad.data(), int64_t(sp),
        c.dilation.data(), int64_t(sp), c.transposed(), out_pad.data(), int64_t(sp), c.groups, y.out());
    INFO("error: " << mpspack::shim::last_error());
    REQUIRE(rc == 0);
    CHECK(sizes_of(y.get()) == ys);
    CHECK(strides_of(y.get()) == (cl_out ? channels_last(ys) : contiguous(ys)));
    const std::vector<double> got = doubles(y.get());
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (!(std::fabs(got[i] - r.y[i]) <= tolerance(dtype, r.magnitude[i])) && bad++ == 0) first = i;
    INFO(bad << " of " << got.size() << " elements off; the first, " << first << ": " << got[first] << " for "
             << r.y[first] << " (tolerance " << tolerance(dtype, r.magnitude[first]) << ")");
    CHECK(bad == 0);
  }
}

void check_all_convolutions(int32_t dtype) {
  uint32_t seed = 100;
  for (const ConvCase& c : conv_cases()) check_convolution(c, dtype, seed += 3);
}

}  // namespace

TEST_CASE("cuda convolution in float64 matches a direct loop in double", "[cuda][convolution]") {
  REQUIRE_GPU();
  check_all_convolutions(kF64);
}

TEST_CASE("cuda convolution in float32 matches a direct loop in double (TF32 unless MPSPACK_CUDNN_TF32=0)",
          "[cuda][convolution]") {
  REQUIRE_GPU();
  WARN("float32 convolutions " << (tf32_allowed() ? "may use TF32 (the default): checked at 2.5e-3 of the terms' "
                                                    "magnitude"
                                                  : "without TF32 (MPSPACK_CUDNN_TF32=0): checked at 5e-5 of the "
                                                    "terms' magnitude"));
  check_all_convolutions(kF32);
}

TEST_CASE("cuda convolution in float16 matches a direct loop in double", "[cuda][convolution]") {
  REQUIRE_GPU();
  check_all_convolutions(kF16);
}

TEST_CASE("cuda convolution in bfloat16 matches a direct loop in double", "[cuda][convolution]") {
  REQUIRE_GPU();
  check_all_convolutions(kBF16);
}

TEST_CASE("cuda convolution runs on the stream the stream guard sets", "[cuda][convolution]") {
  REQUIRE_GPU();
  // A non-blocking stream does not wait for the legacy default stream: work the convolution left there would
  // race with the copies on this one and the poisoned output would show.
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  CUDAStreamGuardHandle guard = nullptr;
  REQUIRE(aoti_torch_create_cuda_stream_guard(stream, 0, &guard) == 0);
  check_convolution(conv_cases()[1], kF32, 7);
  check_convolution(conv_cases()[18], kF16, 8);
  REQUIRE(aoti_torch_delete_cuda_stream_guard(guard) == 0);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("cuda convolution refuses an unsupported dtype in one line", "[cuda][convolution]") {
  REQUIRE_GPU();
  const std::vector<int64_t> xs{1, 2, 5, 5}, ws{3, 2, 3, 3};
  Handle x = empty_on(aoti_torch_device_type_cuda(), xs, contiguous(xs), kI32);
  Handle w = empty_on(aoti_torch_device_type_cuda(), ws, contiguous(ws), kI32);
  const int64_t one[] = {1, 1}, zero[] = {0, 0};
  Handle y;
  REQUIRE(aoti_torch_cuda_convolution(x.get(), w.get(), nullptr, one, 2, zero, 2, one, 2, 0, zero, 2, 1, y.out()) != 0);
  CHECK(y.get() == nullptr);
  CHECK(std::string(mpspack::shim::last_error()) ==
        "aoti_torch_cuda_convolution: convolution: dtype int32 is not supported");
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
      REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(q.cpu.get(), k.cpu.get(), v.cpu.get(), 0.0,
                                                                         causal, with_bias ? &bc : nullptr, nullptr,
                                                                         oc.out(), lc.out()) == 0);
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

TEST_CASE("cuda cuDNN-named attention gives the efficient attention's values in torch's layouts", "[cuda]") {
  REQUIRE_GPU();
  const std::vector<int64_t> s{2, 3, 5, 8};
  Pair q = make(s, 11), k = make(s, 12), v = make(s, 13), bias = make({2, 3, 5, 5}, 14);
  // The same query as a model makes it: [B, L, H, E] memory seen as [B, H, L, E].
  Handle qt = empty_on(aoti_torch_device_type_cuda(), s, {5 * 3 * 8, 8, 3 * 8, 1});
  REQUIRE(aoti_torch_copy_(qt.get(), q.cpu.get(), 0) == 0);
  for (int causal : {0, 1})
    for (bool with_bias : {false, true})
      for (bool transposed : {false, true}) {
        INFO("causal " << causal << " bias " << with_bias << " transposed query " << transposed);
        if (causal && with_bias) continue;
        AtenTensorHandle bg = bias.gpu.get(), qg = transposed ? qt.get() : q.gpu.get();
        Handle e0, e1, e2, e3, c0, c1, c2, c3, c6, c7, c8;
        int64_t max_q = 0, max_k = 0;
        REQUIRE(aoti_torch_cuda__scaled_dot_product_efficient_attention(
                    q.gpu.get(), k.gpu.get(), v.gpu.get(), with_bias ? &bg : nullptr, 1, 0.0, causal, nullptr, e0.out(),
                    e1.out(), e2.out(), e3.out()) == 0);
        REQUIRE(aoti_torch_cuda__scaled_dot_product_cudnn_attention(
                    qg, k.gpu.get(), v.gpu.get(), with_bias ? &bg : nullptr, 1, 0.0, causal, 0, nullptr, c0.out(),
                    c1.out(), c2.out(), c3.out(), &max_q, &max_k, c6.out(), c7.out(), c8.out()) == 0);
        REQUIRE(sizes_of(c0.get()) == s);
        REQUIRE(strides_of(c0.get()) == strides_of(qg));  // torch's alloc_with_matching_layout
        require_close(host(c0.get()), host(e0.get()));
        REQUIRE(sizes_of(c1.get()) == std::vector<int64_t>{2, 3, 5, 1});
        CHECK(c2.get() == nullptr);
        CHECK(c3.get() == nullptr);
        CHECK(c8.get() == nullptr);
        CHECK(max_q == 5);
        CHECK(max_k == 5);
      }
  {  // AOTInductor passes null for the results it does not use; torch's shim then skips them.
    Handle e0, e0_only, c0_only;
    Handle e1, e2, e3;
    REQUIRE(aoti_torch_cuda__scaled_dot_product_efficient_attention(q.gpu.get(), k.gpu.get(), v.gpu.get(), nullptr, 0,
                                                                    0.0, 1, nullptr, e0.out(), e1.out(), e2.out(),
                                                                    e3.out()) == 0);
    REQUIRE(aoti_torch_cuda__scaled_dot_product_efficient_attention(q.gpu.get(), k.gpu.get(), v.gpu.get(), nullptr, 0,
                                                                    0.0, 1, nullptr, e0_only.out(), nullptr, nullptr,
                                                                    nullptr) == 0);
    REQUIRE(aoti_torch_cuda__scaled_dot_product_cudnn_attention(q.gpu.get(), k.gpu.get(), v.gpu.get(), nullptr, 0, 0.0,
                                                                1, 0, nullptr, c0_only.out(), nullptr, nullptr, nullptr,
                                                                nullptr, nullptr, nullptr, nullptr, nullptr) == 0);
    CHECK(host(e0_only.get()) == host(e0.get()));
    CHECK(host(c0_only.get()) == host(e0.get()));
  }
  Handle c0, c1, c2, c3, c6, c7, c8;
  int64_t max_q = 0, max_k = 0;
  REQUIRE(aoti_torch_cuda__scaled_dot_product_cudnn_attention(q.gpu.get(), k.gpu.get(), v.gpu.get(), nullptr, 1, 0.0, 0,
                                                              1, nullptr, c0.out(), c1.out(), c2.out(), c3.out(),
                                                              &max_q, &max_k, c6.out(), c7.out(), c8.out()) != 0);
  CHECK(std::string(mpspack::shim::last_error()) ==
        "aoti_torch_cuda__scaled_dot_product_cudnn_attention: scaled_dot_product_cudnn_attention: the debug mask is "
        "not supported");
}

// softmax(q k^T * scale + causal mask) v in double, over [B, H, L, E] / [B, H, S, E] / [B, H, S, Ev] row-major.
std::vector<double> attention_reference(const std::vector<double>& q, const std::vector<double>& k,
                                        const std::vector<double>& v, int64_t B, int64_t H, int64_t L, int64_t S,
                                        int64_t E, bool causal) {
  std::vector<double> out(static_cast<size_t>(B * H * L * E), 0.0), w(static_cast<size_t>(S));
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t i = 0; i < L; ++i) {
      double top = -INFINITY, sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < E; ++e) dot += q[size_t((bh * L + i) * E + e)] * k[size_t((bh * S + j) * E + e)];
        w[size_t(j)] = causal && j > i ? -INFINITY : dot / std::sqrt(double(E));
        top = std::max(top, w[size_t(j)]);
      }
      for (int64_t j = 0; j < S; ++j) sum += (w[size_t(j)] = std::exp(w[size_t(j)] - top));
      for (int64_t j = 0; j < S; ++j)
        for (int64_t e = 0; e < E; ++e)
          out[size_t((bh * L + i) * E + e)] += w[size_t(j)] / sum * v[size_t((bh * S + j) * E + e)];
    }
  return out;
}

TEST_CASE("cuda attention on strided q/k/v, fused and in several row blocks, matches a double reference", "[cuda]") {
  REQUIRE_GPU();
  // q, k, v as a model makes them: one [B, T, 3, H, E] projection, viewed per part as [B, H, T, E]. 37 rows make
  // 5 blocks of 8 rows (the last of 5) and 2 tiles of 32 keys (the last of 5) for the fused kernel; E 16 and 80
  // give it 1 and 3 output values a lane (80: lanes past the end in the last), E 160 is past its heads of 128 and
  // goes blocked. MPSPACK_CUDA_ATTENTION=blocked takes the blocked way with 5 query rows per block of scores:
  // 8 blocks, the last of two.
  const int64_t B = 2, T = 37, H = 3;
  for (const char* mode : {"fused", "blocked"})
    for (int64_t E : {16, 80, 160}) {
      const std::vector<int64_t> qkv_sizes{B, T, 3, H, E};
      const std::vector<double> qkv = random_doubles(B * T * 3 * H * E, 21);
      const std::vector<int64_t> part_sizes{B, H, T, E}, part_strides{T * 3 * H * E, E, 3 * H * E, 1};
      std::vector<double> parts[3];
      for (int part = 0; part < 3; ++part)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t t = 0; t < T; ++t)
              for (int64_t e = 0; e < E; ++e)
                parts[part].push_back(qkv[size_t((((b * T + t) * 3 + part) * H + h) * E + e)]);
      mpspack::Tuning t;
      t.cuda_attention = mode;
      t.attention_score_bytes = H * T * 4 * 5;
      const mpspack::ScopedTuning tuned(t);
      for (int32_t dtype : {kF32, kBF16})
        for (int causal : {0, 1}) {
          INFO(mode << ", E " << E << ", dtype " << dtype << ", causal " << causal);
          Handle g = upload(qkv, qkv_sizes, contiguous(qkv_sizes), dtype);
          Handle q = view(g.get(), part_sizes, part_strides, 0), k = view(g.get(), part_sizes, part_strides, H * E),
                 v = view(g.get(), part_sizes, part_strides, 2 * H * E);
          Handle o0, o1, o2, o3;
          REQUIRE(aoti_torch_cuda__scaled_dot_product_efficient_attention(q.get(), k.get(), v.get(), nullptr, 1, 0.0,
                                                                          causal, nullptr, o0.out(), o1.out(), o2.out(),
                                                                          o3.out()) == 0);
          const std::vector<double> want = attention_reference(parts[0], parts[1], parts[2], B, H, T, T, E, causal);
          const std::vector<double> got = doubles(o0.get());
          REQUIRE(got.size() == want.size());
          const double tol = dtype == kF32 ? 1e-5 : 2e-2;
          size_t bad = 0;
          for (size_t i = 0; i < got.size(); ++i) bad += !(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
          CHECK(bad == 0);
        }
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

TEST_CASE("cuda caching_allocator raw_alloc gives device memory freed by raw_delete, once", "[cuda]") {
  // What needs no GPU: no bytes give null, null deletes as nothing, an unknown pointer is refused.
  void* none = reinterpret_cast<void*>(1);
  REQUIRE(aoti_torch_cuda_caching_allocator_raw_alloc(0, &none) == 0);
  CHECK(none == nullptr);
  CHECK(aoti_torch_cuda_caching_allocator_raw_delete(nullptr) == 0);
  int on_host = 0;
  CHECK(aoti_torch_cuda_caching_allocator_raw_delete(&on_host) == 1);
  CHECK(std::string(mpspack::shim::last_error()).find("invalid device pointer") != std::string::npos);
  REQUIRE_GPU();
  constexpr std::size_t n = 1 << 20;
  void* p = nullptr;
  REQUIRE(aoti_torch_cuda_caching_allocator_raw_alloc(n, &p) == 0);
  REQUIRE(p != nullptr);
  cudaPointerAttributes attr{};
  REQUIRE(cudaPointerGetAttributes(&attr, p) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeDevice);
  REQUIRE(cudaMemset(p, 0x5A, n) == cudaSuccess);  // the whole block is usable
  std::vector<unsigned char> back(n);
  REQUIRE(cudaMemcpy(back.data(), p, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(std::all_of(back.begin(), back.end(), [](unsigned char b) { return b == 0x5A; }));
  CHECK(aoti_torch_cuda_caching_allocator_raw_delete(p) == 0);
  CHECK(aoti_torch_cuda_caching_allocator_raw_delete(p) == 1);  // a second delete is refused, not a double free
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}

// ---- the raw attention kernels and the float8 grouped product -------------------------------------------------

namespace {

// Attention of a packed batch in double: q [TQ, H, E], k and v [TK, H, E] row-major, sequences cut by cq and ck.
// Query i of a sequence (nq queries, nk keys) sees its keys i + d + lo .. i + d + hi, d = nk - nq (bottom right).
// Returns out [TQ, H, E] and the logsumexp [H, TQ] of the scaled scores.
struct PackedReference {
  std::vector<double> out, lse;
};
PackedReference packed_attention(const std::vector<double>& q, const std::vector<double>& k,
                                 const std::vector<double>& v, const std::vector<int32_t>& cq,
                                 const std::vector<int32_t>& ck, int64_t H, int64_t E, int64_t lo, int64_t hi) {
  const int64_t TQ = cq.back();
  PackedReference r{std::vector<double>(size_t(TQ * H * E), 0.0), std::vector<double>(size_t(H * TQ), 0.0)};
  for (size_t s = 0; s + 1 < cq.size(); ++s) {
    const int64_t q0 = cq[s], nq = cq[s + 1] - q0, k0 = ck[s], nk = ck[s + 1] - k0, d = nk - nq;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < nq; ++i) {
        const int64_t first = std::max<int64_t>(0, i + d + lo), last = std::min<int64_t>(nk - 1, i + d + hi);
        std::vector<double> w;
        double top = -INFINITY;
        for (int64_t j = first; j <= last; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < E; ++e)
            dot += q[size_t(((q0 + i) * H + h) * E + e)] * k[size_t(((k0 + j) * H + h) * E + e)];
          w.push_back(dot / std::sqrt(double(E)));
          top = std::max(top, w.back());
        }
        double sum = 0;
        for (double& x : w) sum += (x = std::exp(x - top));
        r.lse[size_t(h * TQ + q0 + i)] = top + std::log(sum);
        for (int64_t j = first; j <= last; ++j)
          for (int64_t e = 0; e < E; ++e)
            r.out[size_t(((q0 + i) * H + h) * E + e)] +=
                w[size_t(j - first)] / sum * v[size_t(((k0 + j) * H + h) * E + e)];
      }
  }
  return r;
}

size_t count_far(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += !(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  return bad;
}

}  // namespace

TEST_CASE("cuda raw attention kernels: packed sequences, bottom-right masks and windows, torch's logsumexp layouts, "
          "grouped-query attention",
          "[cuda]") {
  REQUIRE_GPU();
  // Three sequences in one packed batch: 5, 9 and 3 queries, 7, 9 and 6 keys.
  const int64_t H = 2, E = 16, TQ = 17, TK = 22, max_q = 9;
  std::vector<int32_t> cq{0, 5, 14, 17}, ck{0, 7, 16, 22};
  Handle cu_q = from_blob(cq.data(), {4}, {1}, kI32), cu_k = from_blob(ck.data(), {4}, {1}, kI32);
  const std::vector<double> qd = random_doubles(TQ * H * E, 31), kd = random_doubles(TK * H * E, 32),
                            vd = random_doubles(TK * H * E, 33);
  SECTION("efficient: float32, causal from the bottom right, a window of 3") {
    Handle q = upload(qd, {1, TQ, H, E}, contiguous({1, TQ, H, E}), kF32);
    Handle k = upload(kd, {1, TK, H, E}, contiguous({1, TK, H, E}), kF32);
    Handle v = upload(vd, {1, TK, H, E}, contiguous({1, TK, H, E}), kF32);
    AtenTensorHandle cq_h = cu_q.get(), ck_h = cu_k.get();
    int64_t mq = max_q, window = 3, r4 = -1, r5 = -1;
    Handle o0, o1, o2, o3;
    REQUIRE(aoti_torch_cuda__efficient_attention_forward(q.get(), k.get(), v.get(), nullptr, &cq_h, &ck_h, &mq, nullptr,
                                                         0.0, 2, 1, nullptr, nullptr, &window, o0.out(), o1.out(),
                                                         o2.out(), o3.out(), &r4, &r5) == 0);
    CHECK(r4 == max_q);
    CHECK(r5 == 0);  // torch returns 0 for a packed batch without max_seqlen_k
    REQUIRE(sizes_of(o0.get()) == std::vector<int64_t>{1, TQ, H, E});
    REQUIRE(strides_of(o0.get()) == contiguous({1, TQ, H, E}));
    const PackedReference want = packed_attention(qd, kd, vd, cq, ck, H, E, -2, 0);
    CHECK(count_far(doubles(o0.get()), want.out, 1e-5) == 0);
    // logsumexp [sequences, H, max_q rounded up to 32]: the sequence's rows, then +inf.
    REQUIRE(sizes_of(o1.get()) == std::vector<int64_t>{3, H, 32});
    const std::vector<double> lse = doubles(o1.get());
    for (int64_t s = 0; s < 3; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < 32; ++i) {
          INFO("sequence " << s << " head " << h << " row " << i);
          const double got = lse[size_t((s * H + h) * 32 + i)];
          if (i < cq[size_t(s) + 1] - cq[size_t(s)])
            CHECK(std::abs(got - want.lse[size_t(h * TQ + cq[size_t(s)] + i)]) <= 1e-5);
          else CHECK((std::isinf(got) && got > 0));
        }
  }
  SECTION("flash: bfloat16 [total, H, E], causal, a window of 2 to the left, torch's [H, total] logsumexp") {
    Handle q = upload(qd, {TQ, H, E}, contiguous({TQ, H, E}), kBF16);
    Handle k = upload(kd, {TK, H, E}, contiguous({TK, H, E}), kBF16);
    Handle v = upload(vd, {TK, H, E}, contiguous({TK, H, E}), kBF16);
    AtenTensorHandle cq_h = cu_q.get(), ck_h = cu_k.get();
    int64_t left = 2;
    Handle o0, o1, o2, o3, o4;
    REQUIRE(aoti_torch_cuda__flash_attention_forward(q.get(), k.get(), v.get(), &cq_h, &ck_h, max_q, 9, 0.0, 1, 0,
                                                     nullptr, &left, nullptr, nullptr, nullptr, o0.out(), o1.out(),
                                                     o2.out(), o3.out(), o4.out()) == 0);
    REQUIRE(sizes_of(o0.get()) == std::vector<int64_t>{TQ, H, E});
    REQUIRE(sizes_of(o1.get()) == std::vector<int64_t>{H, TQ});
    REQUIRE(sizes_of(o4.get()) == std::vector<int64_t>{0});
    const PackedReference want =
        packed_attention(doubles(q.get()), doubles(k.get()), doubles(v.get()), cq, ck, H, E, -2, 0);
    CHECK(count_far(doubles(o0.get()), want.out, 2e-2) == 0);
    CHECK(count_far(doubles(o1.get()), want.lse, 1e-4) == 0);
  }
  SECTION("flash: grouped-query attention gives what key and value heads repeated per group give") {
    const int64_t B = 2, Sq = 6, Sk = 8, Hq = 4, Hk = 2;
    const std::vector<double> q4 = random_doubles(B * Sq * Hq * E, 34), k2 = random_doubles(B * Sk * Hk * E, 35),
                              v2 = random_doubles(B * Sk * Hk * E, 36);
    std::vector<double> k4, v4;  // [B, Sk, Hq, E]: query head h reads key/value head h / 2
    for (int64_t i = 0; i < B * Sk; ++i)
      for (int64_t h = 0; h < Hq; ++h)
        for (int64_t e = 0; e < E; ++e) {
          k4.push_back(k2[size_t((i * Hk + h / 2) * E + e)]);
          v4.push_back(v2[size_t((i * Hk + h / 2) * E + e)]);
        }
    Handle q = upload(q4, {B, Sq, Hq, E}, contiguous({B, Sq, Hq, E}), kF16);
    Handle kg = upload(k2, {B, Sk, Hk, E}, contiguous({B, Sk, Hk, E}), kF16);
    Handle vg = upload(v2, {B, Sk, Hk, E}, contiguous({B, Sk, Hk, E}), kF16);
    Handle kr = upload(k4, {B, Sk, Hq, E}, contiguous({B, Sk, Hq, E}), kF16);
    Handle vr = upload(v4, {B, Sk, Hq, E}, contiguous({B, Sk, Hq, E}), kF16);
    for (int causal : {0, 1}) {
      INFO("causal " << causal);
      Handle g0, g1, g2, g3, g4, r0, r1, r2, r3, r4;
      REQUIRE(aoti_torch_cuda__flash_attention_forward(q.get(), kg.get(), vg.get(), nullptr, nullptr, Sq, Sk, 0.0,
                                                       causal, 0, nullptr, nullptr, nullptr, nullptr, nullptr, g0.out(),
                                                       g1.out(), g2.out(), g3.out(), g4.out()) == 0);
      REQUIRE(aoti_torch_cuda__flash_attention_forward(q.get(), kr.get(), vr.get(), nullptr, nullptr, Sq, Sk, 0.0,
                                                       causal, 0, nullptr, nullptr, nullptr, nullptr, nullptr, r0.out(),
                                                       r1.out(), r2.out(), r3.out(), r4.out()) == 0);
      CHECK(count_far(doubles(g0.get()), doubles(r0.get()), 1e-6) == 0);
      CHECK(count_far(doubles(g1.get()), doubles(r1.get()), 1e-6) == 0);
      // The same through SDPA's flash entry point, on the [B, H, S, E] views of the same memory.
      auto bhse = [&](const Handle& t, int64_t S, int64_t heads) {
        return view(t.get(), {B, heads, S, E}, {S * heads * E, E, heads * E, 1});
      };
      Handle qv = bhse(q, Sq, Hq), kgv = bhse(kg, Sk, Hk), vgv = bhse(vg, Sk, Hk), krv = bhse(kr, Sk, Hq),
             vrv = bhse(vr, Sk, Hq);
      Handle s0, s1, s2, s3, s6, s7, s8, t0, t1, t2, t3, t6, t7, t8;
      int64_t mq = 0, mk = 0;
      REQUIRE(aoti_torch_cuda__scaled_dot_product_flash_attention(qv.get(), kgv.get(), vgv.get(), 0.0, causal, 0,
                                                                  nullptr, s0.out(), s1.out(), s2.out(), s3.out(), &mq,
                                                                  &mk, s6.out(), s7.out(), s8.out()) == 0);
      REQUIRE(aoti_torch_cuda__scaled_dot_product_flash_attention(qv.get(), krv.get(), vrv.get(), 0.0, causal, 0,
                                                                  nullptr, t0.out(), t1.out(), t2.out(), t3.out(), &mq,
                                                                  &mk, t6.out(), t7.out(), t8.out()) == 0);
      REQUIRE(sizes_of(s0.get()) == std::vector<int64_t>{B, Hq, Sq, E});
      CHECK(strides_of(s0.get()) == strides_of(qv.get()));
      CHECK(count_far(doubles(s0.get()), doubles(t0.get()), 1e-6) == 0);
      CHECK(count_far(doubles(s1.get()), doubles(t1.get()), 1e-6) == 0);
    }
  }
  SECTION("refusals name the op") {
    Handle q = upload(qd, {TQ, H, E}, contiguous({TQ, H, E}), kF32);
    Handle k = upload(kd, {TK, H, E}, contiguous({TK, H, E}), kF32);
    Handle o0, o1, o2, o3, o4;
    REQUIRE(aoti_torch_cuda__flash_attention_forward(q.get(), k.get(), k.get(), nullptr, nullptr, TQ, TK, 0.0, 0, 0,
                                                     nullptr, nullptr, nullptr, nullptr, nullptr, o0.out(), o1.out(),
                                                     o2.out(), o3.out(), o4.out()) != 0);
    CHECK(std::string(mpspack::shim::last_error()) ==
          "aoti_torch_cuda__flash_attention_forward: _flash_attention_forward: FlashAttention only support fp16 and "
          "bf16 data type");
  }
}

namespace {

// Random float8 e4m3fn codes of magnitude 1/4 .. 15/4 (exponents -2 .. 1), so that every product and every sum
// of up to 64 of them is exact in float32: the GPU's order of summation cannot matter.
std::vector<uint8_t> e4m3_codes(size_t n, uint32_t seed) {
  std::vector<uint8_t> c(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& code : c) {
    x = x * 1664525u + 1013904223u;
    code = uint8_t(((x >> 31) << 7) | ((5 + (x >> 8) % 4) << 3) | ((x >> 16) % 8));
  }
  return c;
}
double e4m3_value(uint8_t code) {
  const double m = 1 + (code & 7) / 8.0;
  return ((code & 0x80) ? -1 : 1) * std::ldexp(m, ((code >> 3) & 0xf) - 7);
}
// A float8 e4m3fn cuda tensor over `codes` (its storage, in memory order) with these sizes and strides.
Handle fp8_on_gpu(const std::vector<uint8_t>& codes, const std::vector<int64_t>& sizes,
                  const std::vector<int64_t>& strides) {
  Handle g = empty_on(aoti_torch_device_type_cuda(), sizes, strides, 24);
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) extent += (sizes[d] - 1) * strides[d];
  REQUIRE(codes.size() >= size_t(extent));
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(g.get(), &p) == 0);
  REQUIRE(cudaMemcpy(p, codes.data(), size_t(extent), cudaMemcpyHostToDevice) == cudaSuccess);
  return g;
}
std::vector<double> positive_scales(int64_t n, uint32_t seed) {
  std::vector<double> s = random_doubles(n, seed);
  for (double& x : s) x = 1.25 + x;  // 0.25 .. 2.25
  return s;
}
// bfloat16 results against double: one rounding of a value the GPU computes exactly up to its float32 scaling.
void require_bf16_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::abs(got[i] - want[i]) <= 8e-3 * std::abs(want[i]) + 1e-6);
  }
}

}  // namespace

TEST_CASE("cuda _scaled_grouped_mm: each group's float8 product with row-wise scales, in torch's shapes", "[cuda]") {
  REQUIRE_GPU();
  const int32_t bf16 = kBF16;
  SECTION("2-d x 3-d: groups of 3, 0 and 7 rows") {
    const int64_t M = 10, K = 32, N = 16, G = 3;
    const auto a = e4m3_codes(size_t(M * K), 1), b = e4m3_codes(size_t(G * N * K), 2);  // b's memory [G][N][K]
    Handle ga = fp8_on_gpu(a, {M, K}, {K, 1}), gb = fp8_on_gpu(b, {G, K, N}, {N * K, 1, K});
    const auto sa = positive_scales(M, 3), sb = positive_scales(G * N, 4);
    Handle gsa = upload(sa, {M}, {1}, kF32), gsb = upload(sb, {G, N}, {N, 1}, kF32);
    std::vector<int32_t> ends{3, 3, 10};
    Handle offs = upload(std::vector<double>(ends.begin(), ends.end()), {G}, {1}, kI32);
    AtenTensorHandle oh = offs.get();
    Handle out;
    REQUIRE(aoti_torch_cuda__scaled_grouped_mm(ga.get(), gb.get(), gsa.get(), gsb.get(), &oh, nullptr, nullptr, nullptr,
                                               0, out.out()) == 0);
    REQUIRE(sizes_of(out.get()) == std::vector<int64_t>{M, N});
    REQUIRE(strides_of(out.get()) == std::vector<int64_t>{N, 1});
    std::vector<double> want(size_t(M * N));
    int64_t start = 0;
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t i = start; i < ends[size_t(g)]; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t kk = 0; kk < K; ++kk)
            acc += e4m3_value(a[size_t(i * K + kk)]) * e4m3_value(b[size_t((g * N + j) * K + kk)]);
          want[size_t(i * N + j)] = acc * sa[size_t(i)] * sb[size_t(g * N + j)];
        }
      start = ends[size_t(g)];
    }
    require_bf16_close(doubles(out.get()), want);
  }
  SECTION("2-d x 2-d: groups of 16 and 32 along K, one [M, N] result each") {
    const int64_t M = 8, K = 48, N = 16, G = 2;
    const auto a = e4m3_codes(size_t(M * K), 5), b = e4m3_codes(size_t(N * K), 6);  // b's memory [N][K]
    Handle ga = fp8_on_gpu(a, {M, K}, {K, 1}), gb = fp8_on_gpu(b, {K, N}, {1, K});
    const auto sa = positive_scales(G * M, 7), sb = positive_scales(G * N, 8);
    Handle gsa = upload(sa, {G * M}, {1}, kF32), gsb = upload(sb, {G * N}, {1}, kF32);
    std::vector<int32_t> ends{16, 48};
    Handle offs = upload(std::vector<double>(ends.begin(), ends.end()), {G}, {1}, kI32);
    AtenTensorHandle oh = offs.get();
    int32_t od = bf16;
    Handle out;
    REQUIRE(aoti_torch_cuda__scaled_grouped_mm(ga.get(), gb.get(), gsa.get(), gsb.get(), &oh, nullptr, nullptr, &od, 0,
                                               out.out()) == 0);
    REQUIRE(sizes_of(out.get()) == std::vector<int64_t>{G, M, N});
    std::vector<double> want(size_t(G * M * N));
    for (int64_t g = 0; g < G; ++g)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t kk = g == 0 ? 0 : ends[0]; kk < ends[size_t(g)]; ++kk)
            acc += e4m3_value(a[size_t(i * K + kk)]) * e4m3_value(b[size_t(j * K + kk)]);
          want[size_t((g * M + i) * N + j)] = acc * sa[size_t(g * M + i)] * sb[size_t(g * N + j)];
        }
    require_bf16_close(doubles(out.get()), want);
  }
  SECTION("3-d x 2-d (groups of 16 columns each) and 3-d x 3-d") {
    const int64_t M = 8, K = 32, N = 32, G = 2;
    const auto a = e4m3_codes(size_t(G * M * K), 9), b = e4m3_codes(size_t(G * N * K), 10);
    Handle ga = fp8_on_gpu(a, {G, M, K}, {M * K, K, 1});
    const auto sa = positive_scales(G * M, 11), sb = positive_scales(G * N, 12);
    Handle gsa = upload(sa, {G, M}, {M, 1}, kF32);
    {  // b [K, N] column-major, columns in groups of 16
      Handle gb = fp8_on_gpu(b, {K, N}, {1, K}), gsb = upload(sb, {N}, {1}, kF32);
      std::vector<int32_t> ends{16, 32};
      Handle offs = upload(std::vector<double>(ends.begin(), ends.end()), {G}, {1}, kI32);
      AtenTensorHandle oh = offs.get();
      Handle out;
      REQUIRE(aoti_torch_cuda__scaled_grouped_mm(ga.get(), gb.get(), gsa.get(), gsb.get(), &oh, nullptr, nullptr,
                                                 nullptr, 0, out.out()) == 0);
      REQUIRE(sizes_of(out.get()) == std::vector<int64_t>{M, N});
      std::vector<double> want(size_t(M * N));
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          const int64_t g = j / 16;
          double acc = 0;
          for (int64_t kk = 0; kk < K; ++kk)
            acc += e4m3_value(a[size_t((g * M + i) * K + kk)]) * e4m3_value(b[size_t(j * K + kk)]);
          want[size_t(i * N + j)] = acc * sa[size_t(g * M + i)] * sb[size_t(j)];
        }
      require_bf16_close(doubles(out.get()), want);
    }
    {  // b [G, K, N] column-major: a batched product
      Handle gb = fp8_on_gpu(b, {G, K, N / 2}, {N / 2 * K, 1, K}), gsb = upload(sb, {G, N / 2}, {N / 2, 1}, kF32);
      Handle out;
      REQUIRE(aoti_torch_cuda__scaled_grouped_mm(ga.get(), gb.get(), gsa.get(), gsb.get(), nullptr, nullptr, nullptr,
                                                 nullptr, 0, out.out()) == 0);
      REQUIRE(sizes_of(out.get()) == std::vector<int64_t>{G, M, N / 2});
      std::vector<double> want(size_t(G * M * N / 2));
      for (int64_t g = 0; g < G; ++g)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N / 2; ++j) {
            double acc = 0;
            for (int64_t kk = 0; kk < K; ++kk)
              acc += e4m3_value(a[size_t((g * M + i) * K + kk)]) * e4m3_value(b[size_t((g * N / 2 + j) * K + kk)]);
            want[size_t((g * M + i) * N / 2 + j)] = acc * sa[size_t(g * M + i)] * sb[size_t(g * N / 2 + j)];
          }
      require_bf16_close(doubles(out.get()), want);
    }
  }
  SECTION("refusals: a transposed mat1, offsets missing, scales of the wrong length") {
    const auto a = e4m3_codes(16 * 32, 13), b = e4m3_codes(2 * 32 * 16, 14);
    Handle gb = fp8_on_gpu(b, {2, 32, 16}, {512, 1, 32});
    Handle gsa = upload(positive_scales(16, 15), {16}, {1}, kF32);
    Handle gsb = upload(positive_scales(32, 16), {2, 16}, {16, 1}, kF32);
    Handle offs = upload({8, 16}, {2}, {1}, kI32);
    AtenTensorHandle oh = offs.get();
    Handle out;
    Handle at = fp8_on_gpu(a, {16, 32}, {1, 16});  // column-major
    REQUIRE(aoti_torch_cuda__scaled_grouped_mm(at.get(), gb.get(), gsa.get(), gsb.get(), &oh, nullptr, nullptr, nullptr,
                                               0, out.out()) != 0);
    CHECK(std::string(mpspack::shim::last_error()) ==
          "aoti_torch_cuda__scaled_grouped_mm: _scaled_grouped_mm: Expected mat1 to not be transposed");
    Handle ga = fp8_on_gpu(a, {16, 32}, {32, 1});
    REQUIRE(aoti_torch_cuda__scaled_grouped_mm(ga.get(), gb.get(), gsa.get(), gsb.get(), nullptr, nullptr, nullptr,
                                               nullptr, 0, out.out()) != 0);
    CHECK(std::string(mpspack::shim::last_error()) ==
          "aoti_torch_cuda__scaled_grouped_mm: _scaled_grouped_mm: Have to provide offsets if there is a 2d matrix");
    Handle short_sa = upload(positive_scales(8, 17), {8}, {1}, kF32);
    REQUIRE(aoti_torch_cuda__scaled_grouped_mm(ga.get(), gb.get(), short_sa.get(), gsb.get(), &oh, nullptr, nullptr,
                                               nullptr, 0, out.out()) != 0);
    CHECK(std::string(mpspack::shim::last_error()) ==
          "aoti_torch_cuda__scaled_grouped_mm: _scaled_grouped_mm: scale must have the same length as mat for arg 0");
  }
}

// ---- the blocked attention over a batch of images -------------------------------------------------------------

namespace {

// softmax(q k^T / sqrt(E) + bias) v and each row's logsumexp in double: q [B, H, L, E], k [B, H, S, E] and
// v [B, H, S, Ev] row-major, out [B, H, L, Ev], lse [B, H, L]. The bias (null: none) is read at
// b bs[0] + h bs[1] + i bs[2] + j bs[3] (0 strides broadcast); causal hides key j from query i past i + offset.
struct BatchReference {
  std::vector<double> out, lse;
};
BatchReference batch_attention(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                               int64_t B, int64_t H, int64_t L, int64_t S, int64_t E, int64_t Ev,
                               const std::vector<double>* bias, std::array<int64_t, 4> bs, bool causal,
                               int64_t offset) {
  BatchReference r{std::vector<double>(size_t(B * H * L * Ev), 0.0), std::vector<double>(size_t(B * H * L), 0.0)};
  std::vector<double> w(static_cast<size_t>(S));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        const int64_t bh = b * H + h;
        double top = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          double x = -INFINITY;
          if (!causal || j <= i + offset) {
            double dot = 0;
            for (int64_t e = 0; e < E; ++e) dot += q[size_t((bh * L + i) * E + e)] * k[size_t((bh * S + j) * E + e)];
            x = dot / std::sqrt(double(E));
            if (bias) x += (*bias)[size_t(b * bs[0] + h * bs[1] + i * bs[2] + j * bs[3])];
          }
          w[size_t(j)] = x;
          top = std::max(top, x);
        }
        double sum = 0;
        for (double& x : w) sum += (x = std::exp(x - top));
        r.lse[size_t(bh * L + i)] = top + std::log(sum);
        for (int64_t j = 0; j < S; ++j)
          for (int64_t e = 0; e < Ev; ++e)
            r.out[size_t((bh * L + i) * Ev + e)] += w[size_t(j)] / sum * v[size_t((bh * S + j) * Ev + e)];
      }
  return r;
}

// The strides of a [B, H, T, E] view of [B, T, H, E] memory: how a model hands q, k and v over.
std::vector<int64_t> heads_inside(int64_t H, int64_t T, int64_t E) { return {T * H * E, E, H * E, 1}; }

// How many of the first `rows` of each of lse's [n, width] rows are far from want's [n, rows], and how many past
// them are not +inf.
size_t count_far_lse(const std::vector<double>& lse, const std::vector<double>& want, int64_t n, int64_t width,
                     int64_t rows, double tol) {
  size_t bad = 0;
  for (int64_t x = 0; x < n; ++x)
    for (int64_t i = 0; i < width; ++i) {
      const double got = lse[size_t(x * width + i)];
      if (i < rows)
        bad += !(std::abs(got - want[size_t(x * rows + i)]) <= tol * (1 + std::abs(want[size_t(x * rows + i)])));
      else bad += !(std::isinf(got) && got > 0);
    }
  return bad;
}

mpspack::Tuning blocked_with_budget(int64_t score_bytes) {
  mpspack::Tuning t;
  t.cuda_attention = "blocked";
  t.attention_score_bytes = score_bytes;
  return t;
}

}  // namespace

TEST_CASE("cuda blocked attention over a batch of images: [B, L, H, E] operands, a bias broadcast over heads, a "
          "[B, 1, 1, S] mask, causal, in steps of whole images or blocks of rows",
          "[cuda][attention_images]") {
  REQUIRE_GPU();
  // 5 images of 3 heads, 37 queries, 29 keys (1073 scores a head: not a multiple of the buffer's 8-element pairs),
  // keys of 16 values and values of 24. The efficient op's output is [B, L, H, Ev] memory too, so no operand's
  // (image, head) pairs are evenly spaced: the products go over arrays of addresses.
  const int64_t B = 5, H = 3, L = 37, S = 29, E = 16, Ev = 24, lpad = 64;
  const std::vector<double> qd = random_doubles(B * H * L * E, 41), kd = random_doubles(B * H * S * E, 42),
                            vd = random_doubles(B * H * S * Ev, 43), bd = random_doubles(B * L * S, 44);
  std::vector<double> md;  // [B, 1, 1, S]: every third key hidden, a different third in each image
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < S; ++j) md.push_back((j + b) % 3 == 0 ? -INFINITY : 0.0);
  // Score budgets: all five images in one step; two images a step (steps of 2, 2 and 1: each head's scores are
  // padded by at most 7 elements, and three images' take more than this); less than one image's scores (the
  // per-image path, blocks of 5 query rows).
  const int64_t all = int64_t(256) << 20, two = H * (2 * L * S + 16) * 4, rows = H * S * 4 * 5;
  for (int32_t dtype : {kF32, kBF16})
    for (const std::string what : {"mask", "bias", "causal"})
      for (int64_t budget : {all, two, rows}) {
        INFO("dtype " << dtype << ", " << what << ", score budget " << budget);
        const mpspack::ScopedTuning tuned(blocked_with_budget(budget));
        Handle q = upload(qd, {B, H, L, E}, heads_inside(H, L, E), dtype);
        Handle k = upload(kd, {B, H, S, E}, heads_inside(H, S, E), dtype);
        Handle v = upload(vd, {B, H, S, Ev}, heads_inside(H, S, Ev), dtype);
        const bool causal = what == "causal", mask = what == "mask";
        Handle bias = mask ? upload(md, {B, 1, 1, S}, contiguous({B, 1, 1, S}), dtype)
                           : upload(bd, {B, 1, L, S}, contiguous({B, 1, L, S}), dtype);
        AtenTensorHandle bh = bias.get();
        Handle o0, o1, o2, o3;
        REQUIRE(aoti_torch_cuda__scaled_dot_product_efficient_attention(q.get(), k.get(), v.get(),
                                                                        causal ? nullptr : &bh, 1, 0.0, causal, nullptr,
                                                                        o0.out(), o1.out(), o2.out(), o3.out()) == 0);
        REQUIRE(strides_of(o0.get()) == heads_inside(H, L, Ev));
        const std::vector<double> bias_values = doubles(bias.get());
        const std::array<int64_t, 4> bs =
            mask ? std::array<int64_t, 4>{S, 0, 0, 1} : std::array<int64_t, 4>{L * S, 0, S, 1};
        const BatchReference want = batch_attention(doubles(q.get()), doubles(k.get()), doubles(v.get()), B, H, L, S, E,
                                                    Ev, causal ? nullptr : &bias_values, bs, causal, 0);
        CHECK(count_far(doubles(o0.get()), want.out, dtype == kF32 ? 1e-5 : 2e-2) == 0);
        REQUIRE(sizes_of(o1.get()) == std::vector<int64_t>{B, H, lpad});
        CHECK(count_far_lse(doubles(o1.get()), want.lse, B * H, lpad, L, 1e-4) == 0);
      }
}

TEST_CASE("cuda blocked attention over a batch of images gives the per-image path's values",
          "[cuda][attention_images]") {
  REQUIRE_GPU();
  // The same products (float32 accumulation) and softmax per element: only cuBLAS's choice of kernel for a batch
  // of another size, or over pointer arrays, could move a value, by an ulp or so of float32.
  const int64_t B = 4, H = 3, L = 37, S = 29, E = 16, Ev = 24;
  const std::vector<double> qd = random_doubles(B * H * L * E, 71), kd = random_doubles(B * H * S * E, 72),
                            vd = random_doubles(B * H * S * Ev, 73), bd = random_doubles(B * L * S, 74);
  for (int32_t dtype : {kF32, kBF16})
    for (bool permuted : {true, false}) {
      INFO("dtype " << dtype << (permuted ? ", [B, L, H, E] operands" : ", dense [B, H, L, E] operands"));
      auto strides = [&](int64_t T, int64_t width) {
        return permuted ? heads_inside(H, T, width) : contiguous({B, H, T, width});
      };
      Handle q = upload(qd, {B, H, L, E}, strides(L, E), dtype), k = upload(kd, {B, H, S, E}, strides(S, E), dtype);
      Handle v = upload(vd, {B, H, S, Ev}, strides(S, Ev), dtype);
      Handle bias = upload(bd, {B, 1, L, S}, contiguous({B, 1, L, S}), dtype);
      AtenTensorHandle bh = bias.get();
      std::vector<double> outs[2], lses[2];
      // Every image in one step, then a budget of one image's scores (and its padding): one image at a time.
      for (int way = 0; way < 2; ++way) {
        const mpspack::ScopedTuning tuned(blocked_with_budget(way == 0 ? int64_t(256) << 20 : H * (L * S + 8) * 4));
        Handle c0, c1, c2, c3, c6, c7, c8;
        int64_t max_q = 0, max_k = 0;
        REQUIRE(aoti_torch_cuda__scaled_dot_product_cudnn_attention(q.get(), k.get(), v.get(), &bh, 1, 0.0, 0, 0,
                                                                    nullptr, c0.out(), c1.out(), c2.out(), c3.out(),
                                                                    &max_q, &max_k, c6.out(), c7.out(), c8.out()) == 0);
        outs[way] = doubles(c0.get());
        lses[way] = doubles(c1.get());
      }
      CHECK(count_far(outs[0], outs[1], dtype == kF32 ? 1e-6 : 1e-2) == 0);
      CHECK(count_far(lses[0], lses[1], 1e-6) == 0);
    }
}

TEST_CASE("cuda blocked attention over a batch of images: evenly spaced (image, head) pairs in one strided batch",
          "[cuda][attention_images]") {
  REQUIRE_GPU();
  const int64_t B = 5, L = 37, S = 29, E = 16, Ev = 24;
  const std::vector<double> qd = random_doubles(B * 3 * L * E, 51), kd = random_doubles(B * 3 * S * E, 52),
                            vd = random_doubles(B * 3 * S * Ev, 53), bd = random_doubles(B * L * S, 54);
  SECTION("cuDNN-named op on dense [B, H, L, E] operands: its output takes their layout") {
    const int64_t H = 3, two = H * (2 * L * S + 16) * 4;
    for (int32_t dtype : {kF32, kBF16})
      for (bool causal : {false, true})
        for (int64_t budget : {int64_t(256) << 20, two}) {
          INFO("dtype " << dtype << ", causal " << causal << ", score budget " << budget);
          const mpspack::ScopedTuning tuned(blocked_with_budget(budget));
          Handle q = upload(qd, {B, H, L, E}, contiguous({B, H, L, E}), dtype);
          Handle k = upload(kd, {B, H, S, E}, contiguous({B, H, S, E}), dtype);
          Handle v = upload(vd, {B, H, S, Ev}, contiguous({B, H, S, Ev}), dtype);
          Handle bias = upload(bd, {B, 1, L, S}, contiguous({B, 1, L, S}), dtype);
          AtenTensorHandle bh = bias.get();
          Handle c0, c1, c2, c3, c6, c7, c8;
          int64_t max_q = 0, max_k = 0;
          REQUIRE(aoti_torch_cuda__scaled_dot_product_cudnn_attention(
                      q.get(), k.get(), v.get(), causal ? nullptr : &bh, 1, 0.0, causal, 0, nullptr, c0.out(), c1.out(),
                      c2.out(), c3.out(), &max_q, &max_k, c6.out(), c7.out(), c8.out()) == 0);
          REQUIRE(strides_of(c0.get()) == contiguous({B, H, L, Ev}));
          const std::vector<double> bias_values = doubles(bias.get());
          const BatchReference want =
              batch_attention(doubles(q.get()), doubles(k.get()), doubles(v.get()), B, H, L, S, E, Ev,
                              causal ? nullptr : &bias_values, {L * S, 0, S, 1}, causal, 0);
          CHECK(count_far(doubles(c0.get()), want.out, dtype == kF32 ? 1e-5 : 2e-2) == 0);
          CHECK(count_far(doubles(c1.get()), want.lse, 1e-4) == 0);  // [B, H, L, 1]
        }
  }
  SECTION("efficient op with one head: the image stride is the pair stride") {
    const mpspack::ScopedTuning tuned(blocked_with_budget(int64_t(256) << 20));
    Handle q = upload(qd, {B, 1, L, E}, heads_inside(1, L, E), kF32);
    Handle k = upload(kd, {B, 1, S, E}, heads_inside(1, S, E), kF32);
    Handle v = upload(vd, {B, 1, S, Ev}, heads_inside(1, S, Ev), kF32);
    Handle bias = upload(bd, {B, 1, L, S}, contiguous({B, 1, L, S}), kF32);
    AtenTensorHandle bh = bias.get();
    Handle o0, o1, o2, o3;
    REQUIRE(aoti_torch_cuda__scaled_dot_product_efficient_attention(q.get(), k.get(), v.get(), &bh, 1, 0.0, 0, nullptr,
                                                                    o0.out(), o1.out(), o2.out(), o3.out()) == 0);
    const std::vector<double> bias_values = doubles(bias.get());
    const BatchReference want = batch_attention(doubles(q.get()), doubles(k.get()), doubles(v.get()), B, 1, L, S, E, Ev,
                                                &bias_values, {L * S, 0, S, 1}, false, 0);
    CHECK(count_far(doubles(o0.get()), want.out, 1e-5) == 0);
    CHECK(count_far_lse(doubles(o1.get()), want.lse, B, 64, L, 1e-4) == 0);
  }
}

TEST_CASE("cuda blocked attention over a batch of images: grouped-query flash attention reads a shared key and value "
          "head for each query head",
          "[cuda][attention_images]") {
  REQUIRE_GPU();
  // 3 images, 4 query heads on 2 key/value heads: each call of the blocked way takes one key/value head's 2 query
  // heads, whose key and value matrices are one address each image.
  const int64_t B = 3, Sq = 6, Sk = 8, Hq = 4, Hk = 2, E = 16;
  Handle q = upload(random_doubles(B * Hq * Sq * E, 61), {B, Hq, Sq, E}, heads_inside(Hq, Sq, E), kF16);
  Handle k = upload(random_doubles(B * Hk * Sk * E, 62), {B, Hk, Sk, E}, heads_inside(Hk, Sk, E), kF16);
  Handle v = upload(random_doubles(B * Hk * Sk * E, 63), {B, Hk, Sk, E}, heads_inside(Hk, Sk, E), kF16);
  const std::vector<double> kd = doubles(k.get()), vd = doubles(v.get());
  std::vector<double> kr, vr;  // [B, Hq, Sk, E]: query head h reads key/value head h / 2
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t x = 0; x < Sk * E; ++x) {
        kr.push_back(kd[size_t((b * Hk + h / 2) * Sk * E + x)]);
        vr.push_back(vd[size_t((b * Hk + h / 2) * Sk * E + x)]);
      }
  // Budgets: every image in one step; two images of a group's 2 heads of 6 x 8 scores a step (steps of 2 and 1).
  for (int64_t budget : {int64_t(256) << 20, int64_t(2 * 2 * Sq * Sk * 4)})
    for (int causal : {0, 1}) {
      INFO("score budget " << budget << ", causal " << causal);
      const mpspack::ScopedTuning tuned(blocked_with_budget(budget));
      Handle s0, s1, s2, s3, s6, s7, s8;
      int64_t mq = 0, mk = 0;
      REQUIRE(aoti_torch_cuda__scaled_dot_product_flash_attention(q.get(), k.get(), v.get(), 0.0, causal, 0, nullptr,
                                                                  s0.out(), s1.out(), s2.out(), s3.out(), &mq, &mk,
                                                                  s6.out(), s7.out(), s8.out()) == 0);
      // Flash attention's causal mask is aligned to the bottom right: query i sees keys up to i + Sk - Sq.
      const BatchReference want =
          batch_attention(doubles(q.get()), kr, vr, B, Hq, Sq, Sk, E, E, nullptr, {0, 0, 0, 0}, causal, Sk - Sq);
      CHECK(count_far(doubles(s0.get()), want.out, 1e-2) == 0);
      CHECK(count_far(doubles(s1.get()), want.lse, 1e-3) == 0);  // [B, Hq, Sq]
    }
}

TEST_CASE("cuda blocked attention over a batch of images is captured in a CUDA graph and replays its values",
          "[cuda][attention_images]") {
  REQUIRE_GPU();
  // The products over pointer arrays read addresses that a kernel writes on the stream, with no copy from the host:
  // the capture records that kernel too, so each replay writes them before the products read them.
  const int64_t B = 4, H = 3, L = 37, S = 29, E = 16;
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  CUDAStreamGuardHandle guard = nullptr;
  REQUIRE(aoti_torch_create_cuda_stream_guard(stream, 0, &guard) == 0);
  for (bool permuted : {true, false}) {
    INFO((permuted ? "[B, L, H, E] operands: pointer arrays" : "dense [B, H, L, E] operands: one strided batch"));
    const mpspack::ScopedTuning tuned(blocked_with_budget(int64_t(256) << 20));
    auto strides = [&](int64_t T) { return permuted ? heads_inside(H, T, E) : contiguous({B, H, T, E}); };
    Handle q = upload(random_doubles(B * H * L * E, 81), {B, H, L, E}, strides(L), kF32);
    Handle k = upload(random_doubles(B * H * S * E, 82), {B, H, S, E}, strides(S), kF32);
    Handle v = upload(random_doubles(B * H * S * E, 83), {B, H, S, E}, strides(S), kF32);
    // Uncaptured first: the values to match, and cuBLAS's handle made outside the capture.
    Handle w0, w1, w2, w3;
    REQUIRE(aoti_torch_cuda__scaled_dot_product_efficient_attention(
                q.get(), k.get(), v.get(), nullptr, 1, 0.0, 1, nullptr, w0.out(), w1.out(), w2.out(), w3.out()) == 0);
    Handle out = empty_on(aoti_torch_device_type_cuda(), sizes_of(w0.get()), strides_of(w0.get()));
    Handle lse = empty_on(aoti_torch_device_type_cuda(), sizes_of(w1.get()), strides_of(w1.get()));
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess);
    bool called = false;
    {  // the op's outputs are copied out and freed inside the capture: the graph frees what it allocates
      Handle o0, o1, o2, o3;
      called =
          aoti_torch_cuda__scaled_dot_product_efficient_attention(
              q.get(), k.get(), v.get(), nullptr, 1, 0.0, 1, nullptr, o0.out(), o1.out(), o2.out(), o3.out()) == 0 &&
          aoti_torch_copy_(out.get(), o0.get(), 0) == 0 && aoti_torch_copy_(lse.get(), o1.get(), 0) == 0;
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    REQUIRE(called);
    REQUIRE(ended == cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiateWithFlags(&exec, graph, 0);
    cudaGraphDestroy(graph);
    REQUIRE(made == cudaSuccess);
    void* out_ptr = nullptr;
    REQUIRE(aoti_torch_get_data_ptr(out.get(), &out_ptr) == 0);
    for (int replay = 0; replay < 2; ++replay) {
      INFO("replay " << replay);
      // NaN in every element first: a value the replay does not write shows.
      REQUIRE(cudaMemsetAsync(out_ptr, 0xFF, size_t(numel(sizes_of(out.get()))) * 4, stream) == cudaSuccess);
      REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
      REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
      CHECK(count_far(doubles(out.get()), doubles(w0.get()), 1e-6) == 0);
      // The logsumexp's rows are padded with +inf past L, which count_far would count as far.
      const std::vector<double> got_lse = doubles(lse.get()), want_lse = doubles(w1.get());
      size_t far = 0;
      for (size_t i = 0; i < want_lse.size(); ++i)
        far += !(got_lse[i] == want_lse[i] || std::abs(got_lse[i] - want_lse[i]) <= 1e-6 * (1 + std::abs(want_lse[i])));
      CHECK(far == 0);
    }
    cudaGraphExecDestroy(exec);
  }
  REQUIRE(aoti_torch_delete_cuda_stream_guard(guard) == 0);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}
