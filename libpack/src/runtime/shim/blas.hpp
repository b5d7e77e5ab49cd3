// Every OpenBLAS call of the shim. Float32 GEMMs of at least kOnednnGemmMinMacs go to oneDNN's sgemm first
// (onednn_gemm.cpp says why); what follows is for the rest: smaller products, float64, matrix-vector products,
// and every product where the oneDNN plugin cannot be opened or MPSPACK_CPU_GEMM=openblas. One constructor, which
// runs before OpenBLAS's, sets up two of the three rules:
//
// - OpenBLAS runs single-threaded (OPENBLAS_NUM_THREADS=1), and products big enough to pay for waking threads are
//   split into blocks over the threads of parallel.hpp (the model's OpenMP team). Why: the pthreads OpenBLAS
//   linked into mpspack would start a thread per core from its constructor, in every process, and run its
//   products on them; beside a model's OpenMP team, whose threads spin for a while after each loop, those threads
//   wait for cores (a tiny CNN ran many times slower with them on 16 cores), and every command (inspect,
//   --version) would pay to start them (docs/PERFORMANCE.md, "CPU: OpenBLAS's kernels and threads", "inspect and
//   start-up"). A count the user chose for OpenBLAS (OPENBLAS_NUM_THREADS or GOTO_NUM_THREADS set) is left to
//   OpenBLAS as it is, and its products are not split.
// - The kernel set is named by what the CPU can run (OPENBLAS_CORETYPE, kernels_for_this_cpu), unless the user
//   named one. Why: OpenBLAS 0.3.21 (Debian 12's) picks its kernels by the CPU's model number, and a model it does
//   not know gets its oldest x86-64 kernels (Prescott: SSE3). The Xeon of our build machines (family 6, model 207)
//   is one: single-threaded SGEMMs run several times slower there than on the AVX-512 kernels
//   (docs/PERFORMANCE.md, "CPU: OpenBLAS's kernels and threads").
// - Matrix-vector products (batch-1 Linear layers) are split by rows over the same threads, each float32 block on
//   mpspack's own kernels (gemv_rows.hpp). Why: OpenBLAS's own threaded GEMV stops scaling after about four threads
//   on the device machine, and its single-threaded GEMV takes a buffer from a table shared under one lock at each
//   call, which a decode step's products split over 16 threads call at once (docs/PERFORMANCE.md, "Full-size zoo
//   models").
#pragma once

#include <cstdint>
#include <string_view>

namespace mpspack::shim {

// The OpenBLAS kernel set for this CPU's vector instructions, as OPENBLAS_CORETYPE names it: "SkylakeX" with
// AVX-512 (F, CD, BW, DQ, VL), "Haswell" with AVX2 and FMA; empty otherwise (OpenBLAS's own pick stands).
std::string_view kernels_for_this_cpu();

// The kernel set OpenBLAS runs ("SkylakeX", "Haswell", "Prescott", ...).
std::string_view openblas_kernels();

// GEMMs of at least this many multiply-adds are split over the threads; smaller ones run on the calling thread.
inline constexpr double kSplitGemmMinMacs = double(1 << 24);

// Matrix-vector products with a matrix this large or larger are split over the threads by rows; below it, waking
// the threads costs more than it saves. Where the threads spin for a while after each split (threads_wake_fast():
// an OpenMP team's, or mpspack's pool in a process without libgomp), a model's back-to-back products (a decode
// step's) reach them awake: from 1 MiB of float32. mpspack's pool beside a loaded libgomp sleeps between products,
// and a wake can cost milliseconds on a loaded machine: from 16 MiB (docs/PERFORMANCE.md, "Full-size zoo models").
inline constexpr double kSplitGemvMinElements = double(1 << 18);
inline constexpr double kSplitGemvMinElementsAsleep = double(1 << 22);

// How many blocks of matrix-vector products mpspack's own kernels have run in this process (tests check the route
// with it).
uint64_t own_gemv_calls();

// C[M,N] = alpha * op(A)[M,K] @ op(B)[K,N] + beta * C, row-major, as cblas_sgemm/cblas_dgemm (T float or
// double); ta/tb: op transposes. Sizes and leading dimensions must fit in an int.
template <class T>
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb,
          T beta, T* C, int64_t ldc);

// The same products on the calling thread, never split: for callers that split the work over the threads
// themselves.
template <class T>
void gemm_here(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
               int64_t ldb, T beta, T* C, int64_t ldc);
template <class T>
void gemv_here(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx,
               T beta, T* y, int64_t incy);

// y = alpha * op(A)[rows or cols] @ x + beta * y, row-major A [rows, cols], as cblas_sgemv/cblas_dgemv: the
// shape of a batch-1 Linear layer, bound by memory bandwidth, which one thread cannot use up.
template <class T>
void gemv(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx, T beta,
          T* y, int64_t incy);

}  // namespace mpspack::shim
