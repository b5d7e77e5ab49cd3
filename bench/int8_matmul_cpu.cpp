// The CPU shim's int8 weight-only product (aoti_torch_cpu__weight_int8pack_mm: float32 or bfloat16 activations,
// int8 weights [N, K], one scale per output channel) against the float32 product of the same shape on the
// OpenBLAS mpspack links, split over the same threads as the shim splits its own float32 products (SGEMM; at
// M = 1 SGEMV, which is what a batch-1 float32 Linear runs on and the honest floor: one pass over 4 bytes a
// weight where the int8 product reads 1). Shapes of a 7B Llama's projections at a decode step (M = 1), a few
// sequences (M = 8) and a 128-token prompt. Median of the timed calls, ms.
//
//   cmake -DMPSPACK_BUILD_BENCH=ON ... && ninja -C build int8_matmul_cpu && build/bin/int8_matmul_cpu [REPS=20 [M K N]]
// (M K N: that one shape instead of the table's.)
// OMP_NUM_THREADS sets the shim's threads (default: every core this process may use). MPSPACK_CPU_INT8MM=direct
// or =panel fixes the int8 product's path (int8_matmul.cpp), for comparisons.
#include "runtime/shim/aoti_shim.h"
#include "runtime/shim/blas.hpp"
#include "runtime/shim/int8_rows.hpp"
#include "runtime/shim/parallel.hpp"
#include "runtime/shim/tensor.hpp"
#include "runtime/tuning/tuning.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

using namespace mpspack::shim;

namespace {

const int32_t kF32 = static_cast<int32_t>(DType::f32), kBF16 = static_cast<int32_t>(DType::bf16),
              kI8 = static_cast<int32_t>(DType::i8);

// A contiguous tensor of `dtype` with values uniform in [lo, hi) (int8: whole numbers), through a float32 copy.
TensorPtr random_tensor(std::vector<int64_t> sizes, int32_t dtype, unsigned seed, float lo, float hi) {
  TensorPtr f(new_contiguous(sizes, kF32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  auto* p = reinterpret_cast<float*>(f->data());
  for (int64_t i = 0; i < f->numel(); ++i) p[i] = dtype == kI8 ? float(int(d(rng))) : d(rng);
  TensorPtr t(new_contiguous(sizes, dtype));
  if (aoti_torch_copy_(t.get(), f.get(), 0) != 0) std::exit(1);
  return t;
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

double int8_ms(int32_t dtype, int64_t M, int64_t K, int64_t N, const Tensor& w, int reps) {
  TensorPtr x = random_tensor({M, K}, dtype, 1, -1.f, 1.f), s = random_tensor({N}, dtype, 3, 0.001f, 0.02f);
  return median_ms(reps, [&] {
    AtenTensorHandle out = nullptr;
    if (aoti_torch_cpu__weight_int8pack_mm(x.get(), const_cast<Tensor*>(&w), s.get(), &out) != 0) std::exit(1);
    aoti_torch_delete_tensor_object(out);
  });
}

// out[M, N] = x[M, K] @ w[N, K]^T in float32 on OpenBLAS (MPSPACK_CPU_GEMM=openblas, set in main).
double f32_ms(int64_t M, int64_t K, int64_t N, int reps) {
  TensorPtr x = random_tensor({M, K}, kF32, 1, -1.f, 1.f), w = random_tensor({N, K}, kF32, 2, -1.f, 1.f);
  TensorPtr out(new_contiguous(std::vector<int64_t>{M, N}, kF32));
  const auto* X = reinterpret_cast<const float*>(x->data());
  const auto* W = reinterpret_cast<const float*>(w->data());
  auto* Y = reinterpret_cast<float*>(out->data());
  return median_ms(reps, [&] {
    if (M == 1) gemv<float>(false, N, K, 1.0f, W, K, X, 1, 0.0f, Y, 1);
    else gemm<float>(false, true, M, N, K, 1.0f, X, K, W, K, 0.0f, Y, N);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  mpspack::Tuning tuned = mpspack::tuning();
  tuned.cpu_gemm = "openblas";  // the float32 floor on OpenBLAS, not oneDNN
  const mpspack::ScopedTuning scoped(tuned);
  const char* omp = std::getenv("OMP_NUM_THREADS");
  const char* mode = tuned.cpu_int8mm.empty() ? nullptr : tuned.cpu_int8mm.c_str();
  std::printf("%u usable cores, shim threads: %s (%s), int8 kernels %s, OpenBLAS kernels %s, int8 path %s; "
              "median of %d calls, ms\n\n",
              usable_cores(), omp ? omp : "all", threads_on_openmp() ? "libgomp" : "mpspack's pool",
              int8mm::best_kernels().name, std::string(openblas_kernels()).c_str(), mode ? mode : "default", reps);
  std::printf("| M x K -> N | int8, f32 act. | f32 (OpenBLAS) | int8 / f32 | int8 weight GB/s | int8, bf16 act. | "
              "bf16 / f32 act. |\n|---|---|---|---|---|---|---|\n");
  std::vector<std::array<int64_t, 2>> kn = {{4096, 4096}, {4096, 11008}, {11008, 4096}};
  std::vector<int64_t> ms = {1, 8, 128};
  if (argc > 4) {
    ms = {std::atoll(argv[2])};
    kn = {{std::atoll(argv[3]), std::atoll(argv[4])}};
  }
  for (const auto& [K, N] : kn) {
    TensorPtr w = random_tensor({N, K}, kI8, 2, -128.f, 128.f);
    for (int64_t M : ms) {
      const int r = M == 128 ? std::max(3, reps / 4) : reps;
      const double i8 = int8_ms(kF32, M, K, N, *w, r), f32 = f32_ms(M, K, N, r);
      const double bf16 = int8_ms(kBF16, M, K, N, *w, r);
      std::printf("| %lld x %lld -> %lld | %.3f | %.3f%s | %.2fx | %.1f | %.3f | %.2fx |\n", (long long)M, (long long)K,
                  (long long)N, i8, f32, M == 1 ? " (gemv)" : "", i8 / f32, double(N) * double(K) / (i8 * 1e6), bf16,
                  bf16 / i8);
      std::fflush(stdout);
    }
  }
}
