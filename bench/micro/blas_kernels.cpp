// One thread of OpenBLAS on the products mpspack's CPU shim hands it, for the kernel set it runs; run it under
// OPENBLAS_CORETYPE=Prescott, Haswell, SkylakeX and unset (OpenBLAS's own pick) to see why shim/blas.hpp names the
// kernel set by what the CPU can run (docs/PERFORMANCE.md, "CPU: OpenBLAS's kernels and threads").
//   g++ -O2 blas_kernels.cpp -I/usr/include/x86_64-linux-gnu/openblas-pthread .../libopenblas.a -pthread
//   OPENBLAS_NUM_THREADS=1 [OPENBLAS_CORETYPE=...] ./blas_kernels
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

// Best of `reps` runs of f, in ms.
template <class F>
double best_ms(int reps, F f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

std::vector<float> filled(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(int((i * 2654435761u + unsigned(seed)) % 1000) - 500) * 1e-3f;
  return v;
}

// C[M,N] = A[M,K] @ B[N,K]^T: a Linear layer's product (B its weights, stored by rows).
void gemm(const char* what, int M, int N, int K) {
  auto a = filled(size_t(M) * K, 1), b = filled(size_t(N) * K, 2);
  std::vector<float> c(size_t(M) * N);
  const double ms = best_ms(20, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.f, a.data(), K, b.data(), K, 0.f, c.data(), N);
  });
  std::printf("%-10s sgemm %-34s %4dx%4dx%4d %8.3f ms %6.1f GFLOP/s\n", openblas_get_corename(), what, M, N, K, ms,
              2.0 * M * N * K / ms * 1e-6);
}

void gemv(const char* what, int rows, int cols) {
  auto a = filled(size_t(rows) * cols, 1), x = filled(size_t(cols), 2);
  std::vector<float> y(static_cast<size_t>(rows));
  const double ms = best_ms(50, [&] {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, rows, cols, 1.f, a.data(), cols, x.data(), 1, 0.f, y.data(), 1);
  });
  std::printf("%-10s sgemv %-34s %4dx%4d      %8.3f ms %6.1f GFLOP/s\n", openblas_get_corename(), what, rows, cols, ms,
              2.0 * rows * cols / ms * 1e-6);
}

}  // namespace

int main() {
  gemm("batch-32 Linear(4096), 1/16 of N", 32, 256, 4096);
  gemm("im2col of a 3x3 conv, 64 channels", 1024, 64, 576);
  gemm("batch-8 Linear(64) (MLP fixture)", 8, 64, 64);
  gemv("batch-1 Linear(2048), 16 MiB", 2048, 2048);
  gemv("batch-1 Linear(512), 1 MiB", 512, 512);
}
