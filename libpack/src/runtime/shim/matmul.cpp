// addmm / mm / bmm / baddbmm. float32 and float64 go to BLAS (blas.hpp: oneDNN for large float32 products, else
// OpenBLAS; a Linear layer's bias added in oneDNN's pass); operands whose strides BLAS cannot take are packed to
// contiguous first. bfloat16 on oneDNN or widened, other dtypes a plain loop.
#include "aoti_shim.h"
#include "blas.hpp"
#include "element.hpp"
#include "onednn_plugin.hpp"
#include "parallel.hpp"
#include "runtime/tuning/tuning.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace mpspack::shim;

namespace {

// A [rows, cols] matrix at `p` with element strides (s0, s1).
struct Mat {
  char* p;
  int64_t rows, cols, s0, s1;
  Mat t() const { return {p, cols, rows, s1, s0}; }
};

// How BLAS (row-major) can read a matrix without a copy: as is, or as the transpose of a row-major one.
struct BlasOperand {
  bool ok = false;
  bool trans = false;
  int64_t ld = 0;
};

BlasOperand blas_view(const Mat& m) {
  const int64_t r = m.rows, c = m.cols;
  // A size-1 dim's stride is arbitrary; any value that satisfies BLAS's ld >= max(1, n) works.
  const int64_t s0 = r == 1 ? std::max<int64_t>(c, 1) : m.s0;
  const int64_t s1 = c == 1 ? 1 : m.s1;
  if (s1 == 1 && s0 >= std::max<int64_t>(c, 1)) return {true, false, s0};
  const int64_t t0 = c == 1 ? std::max<int64_t>(r, 1) : m.s1;
  const int64_t t1 = r == 1 ? 1 : m.s0;
  if (t1 == 1 && t0 >= std::max<int64_t>(r, 1)) return {true, true, t0};
  return {};
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT32_MAX; }

template <class T>
void product(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
             int64_t ldb, T beta, T* C, int64_t ldc) {
  for (int64_t v : {M, N, K, lda, ldb, ldc})
    if (!fits_int(v)) fail("matrix dimension " + std::to_string(v) + " is too large for BLAS");
  // A single row or column is a matrix-vector product. OpenBLAS's GEMM (0.3.21) does not hand these to its GEMV,
  // which reads the matrix once (and which gemv() splits over threads): a batch-1 Linear of 1 GiB of weights took
  // 4x torch's time through GEMM (docs/PERFORMANCE.md, "CPU: external-blob weights from 1 MiB to 8 GiB").
  if ((M == 1 || N == 1) && K > 0) {  // K == 0 stays with GEMM, which still applies beta
    const bool row = M == 1;          // C[1,N] = x[1,K] @ op(B): y = op(B)^T x; else C[M,1] = op(A) @ x: y = op(A) x
    const T* mat = row ? B : A;
    const int64_t ld = row ? ldb : lda;
    // The stored matrix is row-major [K,N] (row, B as is), [N,K] (row, B transposed), [M,K] or [K,M] (column).
    const bool stored_trans = row ? tb : ta;
    const bool trans = row != stored_trans;
    const int64_t rows = row ? (tb ? N : K) : (ta ? K : M), cols = row ? (tb ? K : N) : (ta ? M : K);
    const T* x = row ? A : B;
    const int64_t incx = row ? (ta ? lda : 1) : (tb ? 1 : ldb);
    const int64_t incy = row ? 1 : ldc;  // all of these are among the sizes checked above
    gemv(trans, rows, cols, alpha, mat, ld, x, incx, beta, C, incy);
    return;
  }
  gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

// Packs m into a row-major contiguous buffer.
template <class T>
std::vector<T> pack(const Mat& m) {
  std::vector<T> buf(static_cast<std::size_t>(std::max<int64_t>(m.rows * m.cols, 1)));
  const T* src = reinterpret_cast<const T*>(m.p);
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j) buf[i * m.cols + j] = src[i * m.s0 + j * m.s1];
  return buf;
}

// C = alpha * A @ B + beta * C, C already holding its beta term's input (beta is 0 or 1 here).
template <class T>
void matmul_blas(Mat C, Mat A, Mat B, T alpha, T beta) {
  const int64_t M = C.rows, N = C.cols, K = A.cols;
  if (M == 0 || N == 0) return;
  BlasOperand oc = blas_view(C);
  if (oc.ok && oc.trans) {  // C column-major: compute C^T = B^T A^T instead
    std::swap(A, B);
    A = A.t();
    B = B.t();
    C = C.t();
    oc = blas_view(C);
  }
  const int64_t m = C.rows, n = C.cols;
  std::vector<T> cbuf;
  T* cp;
  int64_t ldc;
  if (oc.ok) {
    cp = reinterpret_cast<T*>(C.p);
    ldc = oc.ld;
  } else {
    cbuf = pack<T>(C);
    cp = cbuf.data();
    ldc = n;
  }
  std::vector<T> abuf, bbuf;
  BlasOperand oa = blas_view(A), ob = blas_view(B);
  const T* ap = reinterpret_cast<const T*>(A.p);
  const T* bp = reinterpret_cast<const T*>(B.p);
  if (!oa.ok) {
    abuf = pack<T>(A);
    ap = abuf.data();
    oa = {true, false, std::max<int64_t>(K, 1)};
  }
  if (!ob.ok) {
    bbuf = pack<T>(B);
    bp = bbuf.data();
    ob = {true, false, std::max<int64_t>(n, 1)};
  }
  product<T>(oa.trans, ob.trans, m, n, K, alpha, ap, oa.ld, bp, ob.ld, beta, cp, ldc);
  if (!oc.ok) {
    T* dst = reinterpret_cast<T*>(C.p);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) dst[i * C.s0 + j * C.s1] = cbuf[i * n + j];
  }
  (void)M;
  (void)N;
}

// The loop for dtypes BLAS does not have: accumulate in double, store converted.
void matmul_loop(const Mat& C, const Mat& A, const Mat& B, int32_t dtype, double alpha, double beta) {
  const std::size_t isz = element_size(dtype);
  for (int64_t i = 0; i < C.rows; ++i)
    for (int64_t j = 0; j < C.cols; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < A.cols; ++k)
        acc += load_as_double(A.p + (i * A.s0 + k * A.s1) * isz, dtype) *
               load_as_double(B.p + (k * B.s0 + j * B.s1) * isz, dtype);
      char* c = C.p + (i * C.s0 + j * C.s1) * isz;
      const double prev = beta != 0 ? beta * load_as_double(c, dtype) : 0.0;
      store_from_double(c, dtype, prev + alpha * acc);
    }
}

// Elements below which converting on one thread is cheaper than waking the thread team.
constexpr int64_t kParallelConvert = int64_t(1) << 16;

// Calls rows(r0, r1) over [0, n_rows) split into row blocks on the shim's threads, or on this one when the matrix
// is small.
template <class Rows>
void over_rows(int64_t n_rows, int64_t n_elements, const Rows& rows) {
  if (n_elements < kParallelConvert) return rows(int64_t(0), n_rows);
  run_parts([&](unsigned t, unsigned parts) { rows(n_rows * t / parts, n_rows * (t + 1) / parts); });
}

// m (float16 or bfloat16, element type S) widened into `buf` as dense float, in the layout it is stored in: row-major,
// or column-major for a transposed view (a Linear's weight^T), so the conversion reads memory in order and BLAS
// takes the result as a transpose. Returns the dense matrix.
template <class S>
Mat widen(const Mat& m, std::vector<float>& buf) {
  buf.resize(static_cast<std::size_t>(std::max<int64_t>(m.rows * m.cols, 1)));
  const bool column_major = m.s0 == 1 && m.s1 != 1 && m.rows > 1;
  const Mat src = column_major ? m.t() : m;  // read along its unit stride
  const auto* p = reinterpret_cast<const S*>(src.p);
  float* out = buf.data();
  over_rows(src.rows, src.rows * src.cols, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      const S* row = p + i * src.s0;
      float* d = out + i * src.cols;
      if (src.s1 == 1)
        for (int64_t j = 0; j < src.cols; ++j) d[j] = typed::load(row + j);
      else
        for (int64_t j = 0; j < src.cols; ++j) d[j] = typed::load(row + j * src.s1);
    }
  });
  auto* q = reinterpret_cast<char*>(out);
  return column_major ? Mat{q, m.rows, m.cols, 1, m.rows} : Mat{q, m.rows, m.cols, m.cols, 1};
}

// float16 and bfloat16, as torch's CPU kernels do them: products accumulated in float, rounded once into C. A is
// widened to dense float once (the activations: a few rows); B (the weights, which the model stores in 16 bits) is
// widened a block of columns at a time into a buffer that stays in cache, and each block's product runs on float
// BLAS right after its conversion; the blocks are split over the shim's threads. Widening all of B first would
// cost a fresh float copy of the weights at every call, whose page faults are most of a bf16 model's time
// (bench/matmul_cpu.cpp, docs/PERFORMANCE.md, "CPU: float16 and bfloat16 products").
template <class S>
void matmul_widened(const Mat& C, const Mat& A, const Mat& B, double alpha, bool has_acc) {
  const int64_t M = C.rows, N = C.cols, K = A.cols;
  for (int64_t v : {M, N, K})
    if (!fits_int(v)) fail("matrix dimension " + std::to_string(v) + " is too large for BLAS");
  std::vector<float> a;
  const Mat wa = widen<S>(A, a);
  const BlasOperand oa = blas_view(wa);  // dense: always a BLAS view
  // Columns per block: the block of B (K floats per column) in about 256 KiB, at least 16 columns.
  const int64_t per_block = std::clamp<int64_t>((int64_t(64) << 10) / std::max<int64_t>(K, 1), 16, 4096);
  const int64_t blocks = (N + per_block - 1) / per_block;
  const auto* b = reinterpret_cast<const S*>(B.p);
  auto* c = reinterpret_cast<S*>(C.p);
  auto run_blocks = [&](int64_t first, int64_t last) {
    std::vector<float> wb, wc;
    for (int64_t blk = first; blk < last; ++blk) {
      const int64_t j0 = blk * per_block, nb = std::min(per_block, N - j0);
      // The block as nb rows of K (column j of B is row j - j0): read along B's columns when they are its unit
      // stride (a Linear's weight^T), else along its rows.
      wb.resize(static_cast<std::size_t>(nb * K));
      if (B.s0 == 1 || B.s1 != 1) {
        for (int64_t j = 0; j < nb; ++j)
          for (int64_t k = 0; k < K; ++k) wb[j * K + k] = typed::load(b + k * B.s0 + (j0 + j) * B.s1);
      } else {
        for (int64_t k = 0; k < K; ++k)
          for (int64_t j = 0; j < nb; ++j) wb[j * K + k] = typed::load(b + k * B.s0 + (j0 + j));
      }
      wc.resize(static_cast<std::size_t>(M * nb));
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < nb; ++j)
          wc[i * nb + j] = has_acc ? float(typed::load(c + i * C.s0 + (j0 + j) * C.s1)) : 0.0f;
      const float beta = has_acc ? 1.0f : 0.0f;
      if (K == 0) {
        // Nothing to add: wc already holds C's accumulated term or zeros.
      } else if (M == 1) {  // a row: y[nb] = block[nb, K] @ x, a matrix-vector product (see product())
        gemv_here<float>(false, nb, K, float(alpha), wb.data(), K, reinterpret_cast<const float*>(wa.p), 1, beta,
                         wc.data(), 1);
      } else {
        gemm_here<float>(oa.trans, true, M, nb, K, float(alpha), reinterpret_cast<const float*>(wa.p), oa.ld, wb.data(),
                         K, beta, wc.data(), nb);
      }
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < nb; ++j) typed::store(c + i * C.s0 + (j0 + j) * C.s1, wc[i * nb + j]);
    }
  };
  // Under 2^20 multiply-adds (16 times the conversion threshold) the whole product stays on this thread.
  if (double(M) * double(N) * double(K) < double(kParallelConvert) * 16 || blocks == 1) return run_blocks(0, blocks);
  run_parts([&](unsigned t, unsigned parts) { run_blocks(blocks * t / parts, blocks * (t + 1) / parts); });
}

// bfloat16 on oneDNN's matmul (the CPU's bf16 instructions; accumulated in float32 as torch's kernels do), then
// alpha, the accumulated term and one rounding here. False when oneDNN does not run it: below the size where
// threads pay (onednn_plugin.hpp), no plugin, or no bf16 kernel on this CPU.
template <class S>
bool matmul16_on_onednn(const Mat& C, const Mat& A, const Mat& B, double alpha, bool has_acc) {
  const int64_t M = C.rows, N = C.cols, K = A.cols;
  if (!product_for_onednn(M, N, K)) return false;
  std::vector<float> acc(static_cast<std::size_t>(M * N));
  const OnednnMatmul16Call call{.dtype = static_cast<int32_t>(DType::bf16),
                                .M = M,
                                .N = N,
                                .K = K,
                                .a = A.p,
                                .a_s0 = A.s0,
                                .a_s1 = A.s1,
                                .b = B.p,
                                .b_s0 = B.s0,
                                .b_s1 = B.s1,
                                .c = acc.data()};
  if (!matmul16_onednn(call)) return false;
  auto* c = reinterpret_cast<S*>(C.p);
  over_rows(M, M * N, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < N; ++j) {
        S* e = c + i * C.s0 + j * C.s1;
        const float product = float(alpha) * acc[std::size_t(i * N + j)];
        typed::store(e, has_acc ? float(typed::load(e)) + product : product);
      }
  });
  return true;
}

Mat mat_of(const Tensor& t, int64_t batch_dim) {
  // For 3-D tensors, the matrix of batch 0; callers add the batch stride.
  const int64_t o = batch_dim;
  return {t.data(), t.sizes[o], t.sizes[o + 1], t.strides[o], t.strides[o + 1]};
}

void check_mm(const Tensor& out, const Tensor& a, const Tensor& b, int64_t nd, const char* op) {
  for (const Tensor* t : {&out, &a, &b}) {
    require_cpu(*t, op);
    if (t->dim() != nd) fail(std::string(op) + ": expected " + std::to_string(nd) + "-D tensors");
  }
  if (a.dtype != b.dtype || a.dtype != out.dtype)
    fail(std::string(op) + ": dtypes differ (" + dtype_name(a.dtype) + ", " + dtype_name(b.dtype) + ", out " +
         dtype_name(out.dtype) + ")");
  if (a.dtype == static_cast<int32_t>(DType::boolean)) fail(std::string(op) + ": bool is not supported");
  const int64_t o = nd - 2;
  if (a.sizes[o + 1] != b.sizes[o] || out.sizes[o] != a.sizes[o] || out.sizes[o + 1] != b.sizes[o + 1])
    fail(std::string(op) + ": shapes do not match: [" + std::to_string(a.sizes[o]) + "x" +
         std::to_string(a.sizes[o + 1]) + "] @ [" + std::to_string(b.sizes[o]) + "x" + std::to_string(b.sizes[o + 1]) +
         "] -> [" + std::to_string(out.sizes[o]) + "x" + std::to_string(out.sizes[o + 1]) + "]");
  if (nd == 3 && (a.sizes[0] != b.sizes[0] || out.sizes[0] != a.sizes[0]))
    fail(std::string(op) + ": batch sizes differ");
}

// out = alpha * a @ b + (has_acc ? out : 0): out already holds beta * self when has_acc.
void run_matmul(const Mat& C, const Mat& A, const Mat& B, int32_t dtype, double alpha, bool has_acc) {
  if (C.rows == 0 || C.cols == 0) return;
  switch (static_cast<DType>(dtype)) {
    case DType::f32: matmul_blas<float>(C, A, B, static_cast<float>(alpha), has_acc ? 1.0f : 0.0f); break;
    case DType::f64: matmul_blas<double>(C, A, B, alpha, has_acc ? 1.0 : 0.0); break;
    case DType::f16: matmul_widened<typed::Half>(C, A, B, alpha, has_acc); break;
    case DType::bf16:
      if (!matmul16_on_onednn<typed::BF16>(C, A, B, alpha, has_acc))
        matmul_widened<typed::BF16>(C, A, B, alpha, has_acc);
      break;
    default: matmul_loop(C, A, B, dtype, alpha, has_acc ? 1.0 : 0.0);
  }
}

// Writes beta * self (broadcast to out) into out; returns whether out now holds a term to accumulate onto.
bool prepare_beta_term(Tensor& out, const Tensor* self, double beta) {
  if (self == nullptr || beta == 0.0) return false;  // torch: beta == 0 ignores self (NaNs included)
  require_cpu(*self, "addmm");
  // out may be self itself (addmm_): copying onto itself is skipped by copy_into.
  copy_into(out, *self);
  if (beta != 1.0) {
    const std::size_t isz = out.itemsize();
    // Scale in place, element by element, over out's (possibly strided) layout.
    std::vector<int64_t> idx(out.sizes.size(), 0);
    const int64_t n = out.numel();
    for (int64_t e = 0; e < n; ++e) {
      int64_t off = 0;
      for (std::size_t d = 0; d < idx.size(); ++d) off += idx[d] * out.strides[d];
      char* p = out.data() + off * static_cast<int64_t>(isz);
      store_from_double(p, out.dtype, beta * load_as_double(p, out.dtype));
      for (std::size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < out.sizes[d]) break;
        idx[d] = 0;
      }
    }
  }
  return true;
}

// A Linear layer's addmm on oneDNN with its bias added in the product's own pass: float32, beta and alpha 1, self
// a bias row broadcast over out's rows ([N], or [M or 1, N] with row stride 0), out with dense rows, operands BLAS
// can read. Copying the bias into every row first and accumulating onto it costs a second pass over the output:
// 10-50% of a 128-200-row product (bench/matmul_cpu.cpp). False, with nothing written, for any other addmm, and
// where oneDNN cannot add the bias in its pass (no kernel of this CPU's own, or its plan cache full).
bool linear_on_onednn(Tensor& out, const Tensor* self, const Tensor& a, const Tensor& b, double beta, double alpha) {
  if (self == nullptr || beta != 1.0 || alpha != 1.0 || cpu_gemm_mode() == "sgemm") return false;
  const auto f32 = static_cast<int32_t>(DType::f32);
  if (out.dtype != f32 || self->dtype != f32) return false;
  require_cpu(*self, "addmm");
  const int64_t M = out.sizes[0], N = out.sizes[1], K = a.sizes[1];
  if (M < 2 || N < 2 || !product_for_onednn(M, N, K)) return false;  // one row or column: a GEMV (product())
  const Tensor& s = *self;
  const bool bias_row = s.dim() == 1   ? s.sizes[0] == N && s.strides[0] == 1
                        : s.dim() == 2 ? s.sizes[1] == N && s.strides[1] == 1 &&
                                             (s.sizes[0] == 1 || (s.sizes[0] == M && s.strides[0] == 0))
                                       : false;
  if (!bias_row || out.strides[1] != 1 || out.strides[0] < N) return false;
  const auto* bias = reinterpret_cast<const float*>(s.data());
  const auto* c = reinterpret_cast<float*>(out.data());
  if (bias + N > c && bias < c + (M - 1) * out.strides[0] + N) return false;  // the bias inside out (addmm_)
  const Mat A = mat_of(a, 0), B = mat_of(b, 0);
  const BlasOperand oa = blas_view(A), ob = blas_view(B);
  if (!oa.ok || !ob.ok) return false;
  for (int64_t v : {M, N, K, oa.ld, ob.ld, out.strides[0]})
    if (!fits_int(v)) return false;
  return sgemm_onednn(oa.trans, ob.trans, M, N, K, 1.f, reinterpret_cast<const float*>(A.p), oa.ld,
                      reinterpret_cast<const float*>(B.p), ob.ld, 0.f, reinterpret_cast<float*>(out.data()),
                      out.strides[0], bias);
}

// A product's multiply-adds a thread below which splitting it over the team costs more than it gains, so that a batch
// of such products runs better as whole matrices (or blocks of their rows) a thread each: DeBERTa's disentangled
// attention multiplies 4 heads of [64 x 64] @ [64 x 128], 32K a thread on 16 cores, which one head after another on
// oneDNN's team took 54 us a call, 0.86 ms of the model's 2.8 (docs/PERFORMANCE.md, "Architectures a new user tried").
constexpr double kBatchThreadMacs = double(1 << 16);

// A float product batch at once on the threads when each product is too small to split well alone (above), and the
// batch is large enough to pay for waking them (kOnednnGemmMinMacs, where a lone product goes to oneDNN's team).
// Where the batch has fewer matrices than the team has threads, each is cut into blocks of rows (16 or more) to fill
// it. Each block is one product on its thread. False, with nothing done, for other dtypes, matrix-vector shapes,
// larger products, matrices BLAS cannot read as they are, or MPSPACK_CPU_BMM=one: those go one product at a time.
template <class T>
bool batch_over_threads(Tensor& out, const Tensor& a, const Tensor& b, T alpha, bool has_acc) {
  const int64_t batch = out.sizes[0], M = out.sizes[1], N = out.sizes[2], K = a.sizes[2];
  const double macs = double(M) * double(N) * double(K);
  const unsigned threads = thread_count();
  if (!mpspack::tuning().cpu_bmm_threads || batch < 2 || M < 2 || N < 2 || K < 1 || threads < 2 ||
      macs >= kBatchThreadMacs * threads || macs * double(batch) < kOnednnGemmMinMacs)
    return false;
  const Mat C = mat_of(out, 1), A = mat_of(a, 1), B = mat_of(b, 1);
  const BlasOperand oc = blas_view(C), oa = blas_view(A), ob = blas_view(B);
  if (!oc.ok || oc.trans || !oa.ok || !ob.ok) return false;
  for (int64_t v : {M, N, K, oa.ld, ob.ld, oc.ld})
    if (!fits_int(v)) return false;
  const int64_t blocks = std::clamp<int64_t>((int64_t(threads) + batch - 1) / batch, 1, std::max<int64_t>(M / 16, 1));
  const int64_t tasks = batch * blocks;
  const T beta = has_acc ? T(1) : T(0);
  run_parts([&](unsigned t, unsigned parts) {
    for (int64_t task = t; task < tasks; task += parts) {
      const int64_t z = task / blocks, block = task % blocks;
      const int64_t r0 = M * block / blocks, r1 = M * (block + 1) / blocks;
      const T* ap = reinterpret_cast<const T*>(A.p) + z * a.strides[0] + r0 * A.s0;
      const T* bp = reinterpret_cast<const T*>(B.p) + z * b.strides[0];
      T* cp = reinterpret_cast<T*>(C.p) + z * out.strides[0] + r0 * C.s0;
      gemm_here<T>(oa.trans, ob.trans, r1 - r0, N, K, alpha, ap, oa.ld, bp, ob.ld, beta, cp, oc.ld);
    }
  });
  return true;
}

void batched(Tensor& out, const Tensor& a, const Tensor& b, double alpha, bool has_acc) {
  if (out.dtype == static_cast<int32_t>(DType::f32) &&
      batch_over_threads<float>(out, a, b, static_cast<float>(alpha), has_acc))
    return;
  if (out.dtype == static_cast<int32_t>(DType::f64) && batch_over_threads<double>(out, a, b, alpha, has_acc)) return;
  const std::size_t isz = out.itemsize();
  for (int64_t i = 0; i < out.sizes[0]; ++i) {
    Mat C = mat_of(out, 1), A = mat_of(a, 1), B = mat_of(b, 1);
    C.p += i * out.strides[0] * static_cast<int64_t>(isz);
    A.p += i * a.strides[0] * static_cast<int64_t>(isz);
    B.p += i * b.strides[0] * static_cast<int64_t>(isz);
    run_matmul(C, A, B, out.dtype, alpha, has_acc);
  }
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                        AtenTensorHandle mat2, double beta, double alpha) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    const Tensor& a = deref(mat1, "mat1");
    const Tensor& b = deref(mat2, "mat2");
    check_mm(o, a, b, 2, "addmm");
    if (linear_on_onednn(o, self, a, b, beta, alpha)) return;
    const bool acc = prepare_beta_term(o, self, beta);
    run_matmul(mat_of(o, 0), mat_of(a, 0), mat_of(b, 0), o.dtype, alpha, acc);
  });
}

AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    const Tensor& a = deref(self, "self");
    const Tensor& b = deref(mat2, "mat2");
    check_mm(o, a, b, 2, "mm");
    run_matmul(mat_of(o, 0), mat_of(a, 0), mat_of(b, 0), o.dtype, 1.0, false);
  });
}

AOTITorchError aoti_torch_cpu_bmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    const Tensor& a = deref(self, "self");
    const Tensor& b = deref(mat2, "mat2");
    check_mm(o, a, b, 3, "bmm");
    batched(o, a, b, 1.0, false);
  });
}

AOTITorchError aoti_torch_cpu_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle batch1,
                                          AtenTensorHandle batch2, double beta, double alpha) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    const Tensor& a = deref(batch1, "batch1");
    const Tensor& b = deref(batch2, "batch2");
    check_mm(o, a, b, 3, "baddbmm");
    const bool acc = prepare_beta_term(o, self, beta);
    batched(o, a, b, alpha, acc);
  });
}

// torch::inductor::_mm_plus_mm_out: mm_out(out, a, b), then out.addmm_(c, d).
AOTITorchError aoti_torch__mm_plus_mm_out(AtenTensorHandle out, AtenTensorHandle a, AtenTensorHandle b,
                                          AtenTensorHandle c, AtenTensorHandle d) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    const Tensor& ta = deref(a, "a");
    const Tensor& tb = deref(b, "b");
    const Tensor& tc = deref(c, "c");
    const Tensor& td = deref(d, "d");
    check_mm(o, ta, tb, 2, "_mm_plus_mm");
    check_mm(o, tc, td, 2, "_mm_plus_mm");
    run_matmul(mat_of(o, 0), mat_of(ta, 0), mat_of(tb, 0), o.dtype, 1.0, false);
    run_matmul(mat_of(o, 0), mat_of(tc, 0), mat_of(td, 0), o.dtype, 1.0, true);
  });
}

}  // extern "C"
