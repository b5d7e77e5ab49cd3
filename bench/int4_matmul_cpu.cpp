// The CPU shim's int4 weight-only product (aoti_torch_cpu__weight_int4pack_mm_cpu_tensor: float32 or bfloat16
// activations, 4-bit weights [N, K / 2] as torch packs them, a scale and a zero per output channel and group of K)
// at a 7B Llama's square projection, K = N = 4096: a decode step (M = 1), a few sequences (M = 8) and a short
// prompt (M = 64, the dequantized panels on OpenBLAS), at group sizes 32 and 128; and the zoo's int4_mlp's two
// shapes (8 tokens, 256 -> 512 and 512 -> 256, group 64), products small enough that what a call costs beside its
// multiply-adds shows. Median of the timed calls, ms; the weights' GB/s (N * K / 2 bytes a call) beside them.
// bench/device/int4_torch.py runs it against torch.
//
//   cmake -DMPSPACK_BUILD_BENCH=ON ... && ninja -C build int4_matmul_cpu && build/bin/int4_matmul_cpu [REPS=20 [M K N
//   G]]
// (M K N G: that one shape and group size instead of the table's.)
// OMP_NUM_THREADS sets the shim's threads (default: every core this process may use). MPSPACK_CPU_INT4MM=direct
// or =panel fixes the product's path (int4_matmul.cpp), for comparisons.
#include "runtime/shim/aoti_shim.h"
#include "runtime/shim/int4_rows.hpp"
#include "runtime/shim/parallel.hpp"
#include "runtime/shim/tensor.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

using namespace mpspack::shim;

namespace {

const int32_t kF32 = static_cast<int32_t>(DType::f32), kBF16 = static_cast<int32_t>(DType::bf16),
              kU8 = static_cast<int32_t>(DType::u8), kI64 = static_cast<int32_t>(DType::i64);

// A contiguous tensor of `dtype` with values uniform in [lo, hi), through a float32 copy.
TensorPtr random_tensor(std::vector<int64_t> sizes, int32_t dtype, unsigned seed, float lo, float hi) {
  TensorPtr f(new_contiguous(sizes, kF32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  auto* p = reinterpret_cast<float*>(f->data());
  for (int64_t i = 0; i < f->numel(); ++i) p[i] = d(rng);
  TensorPtr t(new_contiguous(sizes, dtype));
  if (aoti_torch_copy_(t.get(), f.get(), 0) != 0) std::exit(1);
  return t;
}

// Random packed weights: every byte two 4-bit values (the layout does not change the work).
TensorPtr random_weights(int64_t N, int64_t K) {
  TensorPtr w(new_contiguous(std::vector<int64_t>{N, K / 2}, kU8));
  std::mt19937 rng(2);
  auto* p = reinterpret_cast<uint8_t*>(w->data());
  for (int64_t i = 0; i < w->numel(); ++i) p[i] = uint8_t(rng());
  return w;
}

double median_ms(int reps, const std::function<void()>& call) {
  std::vector<double> ms;
  for (int r = 0; r < reps + 2; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    if (r >= 2) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double int4_ms(int32_t dtype, int64_t M, int64_t K, int64_t N, int64_t group, Tensor& w, int reps) {
  TensorPtr x = random_tensor({M, K}, dtype, 1, -1.f, 1.f);
  TensorPtr sz = random_tensor({K / group, N, 2}, dtype, 3, 0.001f, 0.02f);
  TensorPtr g(new_contiguous(std::vector<int64_t>{}, kI64));
  std::memcpy(g->data(), &group, sizeof group);
  return median_ms(reps, [&] {
    AtenTensorHandle out = nullptr;
    if (aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x.get(), &w, g.get(), sz.get(), &out) != 0) std::exit(1);
    aoti_torch_delete_tensor_object(out);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  const char* omp = std::getenv("OMP_NUM_THREADS");
  const char* mode = std::getenv("MPSPACK_CPU_INT4MM");
  std::printf("%u usable cores, shim threads: %s (%s), int4 kernels %s, int4 path %s; median of %d calls, ms\n\n",
              usable_cores(), omp ? omp : "all", threads_on_openmp() ? "libgomp" : "mpspack's pool",
              int4mm::best_kernels().name, mode ? mode : "default", reps);
  std::printf("| M x K -> N, group | int4, f32 act. | int4, bf16 act. | weight GB/s (f32 act.) |\n|---|---|---|---|\n");
  std::vector<std::array<int64_t, 4>> shapes = {{1, 4096, 4096, 32},  {1, 4096, 4096, 128},  {8, 4096, 4096, 32},
                                                {8, 4096, 4096, 128}, {64, 4096, 4096, 128}, {8, 256, 512, 64},
                                                {8, 512, 256, 64}};
  if (argc > 5) shapes = {{std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]), std::atoll(argv[5])}};
  for (const auto& [M, K, N, G] : shapes) {
    TensorPtr w = random_weights(N, K);
    // Ten times the calls for products of a few microseconds, whose median a few calls leave to chance.
    const bool small = double(M) * double(K) * double(N) < double(1 << 22);
    const int r = M >= 64 ? std::max(3, reps / 4) : small ? reps * 10 : reps;
    const double f32 = int4_ms(kF32, M, K, N, G, *w, r), bf16 = int4_ms(kBF16, M, K, N, G, *w, r);
    std::printf("| %lld x %lld -> %lld, %lld | %.3f | %.3f | %.1f |\n", (long long)M, (long long)K, (long long)N,
                (long long)G, f32, bf16, double(N) * double(K) / 2 / (f32 * 1e6));
    std::fflush(stdout);
  }
}
