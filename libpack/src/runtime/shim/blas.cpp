#include "blas.hpp"

#include "parallel.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <type_traits>

namespace mpspack::shim {
namespace {

constexpr const char* kVariable = "OPENBLAS_NUM_THREADS";
bool g_split = false;  // mpspack made OpenBLAS single-threaded (before main; read after): split big products

// Priority 101 (the first a program may use) runs before OpenBLAS's own constructor, which has none and reads
// the variable to size its thread pool.
__attribute__((constructor(101))) void single_threaded_openblas() {
  // OpenBLAS's own variables: the user's choice for OpenBLAS. OMP_NUM_THREADS (which OpenBLAS also reads, after
  // these) sizes the model's OpenMP team, which the split products then run on.
  for (const char* chosen : {kVariable, "GOTO_NUM_THREADS"})
    if (std::getenv(chosen) != nullptr) return;
  g_split = ::setenv(kVariable, "1", 0) == 0;
}

// The first call takes the variable out of the environment again (OpenBLAS read it at start-up), so programs
// this one starts choose their own count. It runs on the thread that calls the model, between its loops.
void settle() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (g_split) ::unsetenv(kVariable);
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

}  // namespace

template <class T>
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
          int64_t ldb, T beta, T* C, int64_t ldc) {
  settle();
  if (!g_split || double(M) * double(N) * double(K) < kSplitGemmMinMacs) {
    blas_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  // Blocks of the longer side of C, in whole groups of 16 (a cache line of floats), one per thread; the last
  // block takes whatever is left.
  const bool by_columns = N >= M;
  const int64_t extent = by_columns ? N : M;
  run_parts([&](unsigned t, unsigned parts) {
    const int64_t per = (extent / parts + 15) / 16 * 16;
    const int64_t begin = std::min(extent, int64_t(t) * per);
    const int64_t end = t + 1 == parts ? extent : std::min(extent, begin + per);
    if (begin >= end) return;
    if (by_columns)  // op(B)[:, begin:end]: columns of a stored [K,N] B, rows of a stored [N,K] one
      blas_gemm(ta, tb, M, end - begin, K, alpha, A, lda, tb ? B + begin * ldb : B + begin, ldb, beta, C + begin,
                ldc);
    else  // op(A)[begin:end, :]: rows of a stored [M,K] A, columns of a stored [K,M] one
      blas_gemm(ta, tb, end - begin, N, K, alpha, ta ? A + begin : A + begin * lda, lda, B, ldb, beta,
                C + begin * ldc, ldc);
  });
}

template <class T>
void gemv(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx,
          T beta, T* y, int64_t incy) {
  settle();
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, op(trans), int(rows), int(cols), alpha, a, int(lda), x, int(incx), beta, y, int(incy));
  else
    cblas_dgemv(CblasRowMajor, op(trans), int(rows), int(cols), alpha, a, int(lda), x, int(incx), beta, y, int(incy));
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                           int64_t, double, double*, int64_t);
template void gemv<float>(bool, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float, float*,
                          int64_t);
template void gemv<double>(bool, int64_t, int64_t, double, const double*, int64_t, const double*, int64_t, double,
                           double*, int64_t);

}  // namespace mpspack::shim
