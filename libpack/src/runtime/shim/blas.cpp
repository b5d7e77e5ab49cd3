#include "blas.hpp"

#include "gemv_rows.hpp"
#include "onednn_plugin.hpp"
#include "parallel.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

namespace mpspack::shim {
namespace {

constexpr const char* kThreadsVariable = "OPENBLAS_NUM_THREADS";
constexpr const char* kKernelsVariable = "OPENBLAS_CORETYPE";
bool g_split = false;        // mpspack made OpenBLAS single-threaded (before main; read after): split big products
bool g_kernels_set = false;  // mpspack named OpenBLAS's kernels (before main)

// OpenBLAS's own variables: the user's choice for OpenBLAS. OMP_NUM_THREADS (which OpenBLAS also reads, after
// these) sizes the model's OpenMP team, which the split products then run on.
bool single_threaded_openblas() {
  for (const char* chosen : {kThreadsVariable, "GOTO_NUM_THREADS"})
    if (std::getenv(chosen) != nullptr) return false;
  return ::setenv(kThreadsVariable, "1", 0) == 0;
}

bool name_openblas_kernels() {
  const std::string_view kernels = kernels_for_this_cpu();
  if (kernels.empty() || std::getenv(kKernelsVariable) != nullptr) return false;
  return ::setenv(kKernelsVariable, std::string(kernels).c_str(), 0) == 0;
}

// Priority 101 (the first a program may use) runs before OpenBLAS's own constructor, which has none and reads
// both variables: one to size its thread pool, the other to pick its kernels.
__attribute__((constructor(101))) void configure_openblas() {
  g_split = single_threaded_openblas();
  g_kernels_set = name_openblas_kernels();
}

// The first call takes the variables out of the environment again (OpenBLAS read them at start-up), so programs
// this one starts choose for themselves. It runs on the thread that calls the model, between its loops.
void settle() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (g_split) ::unsetenv(kThreadsVariable);
    if (g_kernels_set) ::unsetenv(kKernelsVariable);
  });
}

CBLAS_TRANSPOSE op(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

template <class T>
void blas_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
               int64_t ldb, T beta, T* C, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, op(ta), op(tb), int(M), int(N), int(K), alpha, A, int(lda), B, int(ldb), beta, C,
                int(ldc));
  else
    cblas_dgemm(CblasRowMajor, op(ta), op(tb), int(M), int(N), int(K), alpha, A, int(lda), B, int(ldb), beta, C,
                int(ldc));
}

template <class T>
void blas_gemv(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx,
               T beta, T* y, int64_t incy) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, op(trans), int(rows), int(cols), alpha, a, int(lda), x, int(incx), beta, y, int(incy));
  else
    cblas_dgemv(CblasRowMajor, op(trans), int(rows), int(cols), alpha, a, int(lda), x, int(incx), beta, y, int(incy));
}

// Part t of [0, extent) cut in `parts` blocks of whole groups of 16 (a cache line of floats); the last block takes
// whatever is left, and a block may be empty.
std::pair<int64_t, int64_t> part_of(int64_t extent, unsigned t, unsigned parts) {
  const int64_t per = (extent / parts + 15) / 16 * 16;
  const int64_t begin = std::min(extent, int64_t(t) * per);
  return {begin, t + 1 == parts ? extent : std::min(extent, begin + per)};
}

}  // namespace

std::string_view kernels_for_this_cpu() {
#if defined(__x86_64__)
  __builtin_cpu_init();  // needed before __builtin_cpu_supports in a constructor
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return {};
}

std::string_view openblas_kernels() { return openblas_get_corename(); }

template <class T>
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb,
          T beta, T* C, int64_t ldc) {
  settle();
  if constexpr (std::is_same_v<T, float>)
    if (product_for_onednn(M, N, K) && sgemm_onednn(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
  if (!g_split || double(M) * double(N) * double(K) < kSplitGemmMinMacs) {
    blas_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  // Blocks of the longer side of C.
  const bool by_columns = N >= M;
  run_parts([&](unsigned t, unsigned parts) {
    const auto [begin, end] = part_of(by_columns ? N : M, t, parts);
    if (begin >= end) return;
    if (by_columns)  // op(B)[:, begin:end]: columns of a stored [K,N] B, rows of a stored [N,K] one
      blas_gemm(ta, tb, M, end - begin, K, alpha, A, lda, tb ? B + begin * ldb : B + begin, ldb, beta, C + begin, ldc);
    else  // op(A)[begin:end, :]: rows of a stored [M,K] A, columns of a stored [K,M] one
      blas_gemm(ta, tb, end - begin, N, K, alpha, ta ? A + begin : A + begin * lda, lda, B, ldb, beta, C + begin * ldc,
                ldc);
  });
}

namespace {

// One block of a matrix-vector product: float32 with contiguous vectors on mpspack's own kernels (gemv_rows.hpp),
// anything else, or everything under MPSPACK_CPU_GEMV=openblas, on OpenBLAS's GEMV. Why not OpenBLAS's for all:
// it takes a buffer from a table shared by every thread under one lock at each call, and a decode step's products
// split over 16 threads make that many calls at once; on mpspack's kernels the Llama 0.5B decode step took 0.72x
// and 0.84x the time, GPT-2's 0.89x (docs/PERFORMANCE.md, "Full-size zoo models").
std::atomic<uint64_t> g_own_gemv_calls{0};

template <class T>
void gemv_block(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx,
                T beta, T* y, int64_t incy) {
  if constexpr (std::is_same_v<T, float>) {
    static const bool openblas = gemv_mode() == "openblas";
    if (!openblas && incx == 1 && incy == 1) {
      const gemv_rows::Kernels& k = gemv_rows::best_kernels();
      (trans ? k.columns : k.rows)(rows, cols, alpha, a, lda, x, beta, y);
      g_own_gemv_calls.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  blas_gemv(trans, rows, cols, alpha, a, lda, x, incx, beta, y, incy);
}

}  // namespace

uint64_t own_gemv_calls() { return g_own_gemv_calls.load(std::memory_order_relaxed); }

template <class T>
void gemv(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx, T beta,
          T* y, int64_t incy) {
  settle();
  // Whole to OpenBLAS, on its own threads: where the user chose their number, or MPSPACK_CPU_GEMV=blas.
  if (!g_split || gemv_mode() == "blas") {
    blas_gemv(trans, rows, cols, alpha, a, lda, x, incx, beta, y, incy);
    return;
  }
  const double split_from = threads_wake_fast() ? kSplitGemvMinElements : kSplitGemvMinElementsAsleep;
  if (double(rows) * double(cols) < split_from) {
    gemv_block(trans, rows, cols, alpha, a, lda, x, incx, beta, y, incy);
    return;
  }
  // Each thread writes its own block of y. y = A x: blocks of A's rows, each streamed whole. y = A^T x (a Linear
  // whose weight is stored [in, out], as GPT-2's Conv1D): blocks of A's columns, a strip of every row each, in one
  // pass and with no buffer, where blocks of rows would each give a partial sum of all of y.
  run_parts([&](unsigned t, unsigned parts) {
    const auto [begin, end] = part_of(trans ? cols : rows, t, parts);
    if (begin >= end) return;
    if (trans) gemv_block(true, rows, end - begin, alpha, a + begin, lda, x, incx, beta, y + begin * incy, incy);
    else gemv_block(false, end - begin, cols, alpha, a + begin * lda, lda, x, incx, beta, y + begin * incy, incy);
  });
}

template <class T>
void gemm_here(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
               int64_t ldb, T beta, T* C, int64_t ldc) {
  settle();
  blas_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
void gemv_here(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx,
               T beta, T* y, int64_t incy) {
  settle();
  blas_gemv(trans, rows, cols, alpha, a, lda, x, incx, beta, y, incy);
}

template void gemm_here<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                               int64_t, float, float*, int64_t);
template void gemm_here<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                                int64_t, double, double*, int64_t);
template void gemv_here<float>(bool, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float,
                               float*, int64_t);
template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                           int64_t, double, double*, int64_t);
template void gemv<float>(bool, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float, float*,
                          int64_t);
template void gemv<double>(bool, int64_t, int64_t, double, const double*, int64_t, const double*, int64_t, double,
                           double*, int64_t);

}  // namespace mpspack::shim
