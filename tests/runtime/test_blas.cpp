// The shim's OpenBLAS (blas.hpp): single-threaded from the start, big GEMMs split over mpspack's threads (the
// float32 products oneDNN takes by default are in test_shim_ops.cpp). Its
// own executable, since what is checked is the state of a fresh process. ctest runs it twice: as is, and with
// OPENBLAS_NUM_THREADS=1 (plus MPSPACK_TEST_USER_BLAS_THREADS=1, since inside the process the variable cannot
// tell the user's choice from the one made at start-up), where the user's setting must be left alone; on x86-64
// with OPENBLAS_CORETYPE=Prescott too (plus MPSPACK_TEST_USER_BLAS_KERNELS), the same for OpenBLAS's kernels.
#include "runtime/shim/blas.hpp"
#include "runtime/shim/parallel.hpp"
#include "shim_test_util.hpp"

#include <cblas.h>
#include <dirent.h>

#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

using namespace mpspack::test;

namespace {

// This file checks the OpenBLAS path, the one float32 GEMMs take where the oneDNN plugin cannot be opened (and
// float64 always): chosen before the shim reads the variable at its first product.
const bool kOnOpenblas = ::setenv("MPSPACK_CPU_GEMM", "openblas", 1) == 0;

int threads_in_process() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

// op(A)[M,K] @ op(B)[K,N] through shim::gemm with every transpose, against a plain loop in double.
void check_gemm(int64_t M, int64_t N, int64_t K) {
  const auto a = random_floats(size_t(M * K), 1), b = random_floats(size_t(K * N), 2),
             c0 = random_floats(size_t(M * N), 3);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("M " << M << " N " << N << " K " << K << " ta " << ta << " tb " << tb);
      auto A = [&](int64_t i, int64_t k) { return double(ta ? a[size_t(k * M + i)] : a[size_t(i * K + k)]); };
      auto B = [&](int64_t k, int64_t j) { return double(tb ? b[size_t(j * K + k)] : b[size_t(k * N + j)]); };
      std::vector<double> want(size_t(M * N));
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double s = 0;
          for (int64_t k = 0; k < K; ++k) s += A(i, k) * B(k, j);
          want[size_t(i * N + j)] = 2.0 * s + 0.5 * c0[size_t(i * N + j)];
        }
      std::vector<float> c = c0;
      mpspack::shim::gemm<float>(ta, tb, M, N, K, 2.0f, a.data(), ta ? M : K, b.data(), tb ? K : N, 0.5f, c.data(), N);
      Handle C = from_blob(c.data(), {M, N}, {N, 1}, aoti_torch_dtype_float32());
      require_close(read_f32(C.get()), want, 1e-4, 1e-4);
    }
}

// y = alpha * op(A) @ x + beta * y through shim::gemv, A stored [rows, cols], both ways round, x and y strided,
// against a plain loop in double.
void check_gemv(int64_t rows, int64_t cols, int64_t incx, int64_t incy) {
  const auto a = random_floats(size_t(rows * cols), 4);
  for (bool trans : {false, true}) {
    INFO("rows " << rows << " cols " << cols << " trans " << trans << " incx " << incx << " incy " << incy);
    const int64_t n_in = trans ? rows : cols, n_out = trans ? cols : rows;
    const auto x = random_floats(size_t(n_in * incx), 5), y0 = random_floats(size_t(n_out * incy), 6);
    std::vector<double> want(static_cast<size_t>(n_out));
    for (int64_t o = 0; o < n_out; ++o) {
      double s = 0;
      for (int64_t i = 0; i < n_in; ++i)
        s += double(trans ? a[size_t(i * cols + o)] : a[size_t(o * cols + i)]) * double(x[size_t(i * incx)]);
      want[size_t(o)] = 2.0 * s + 0.5 * y0[size_t(o * incy)];
    }
    std::vector<float> y = y0;
    mpspack::shim::gemv<float>(trans, rows, cols, 2.0f, a.data(), cols, x.data(), incx, 0.5f, y.data(), incy);
    std::vector<float> got(static_cast<size_t>(n_out));
    for (int64_t o = 0; o < n_out; ++o) got[size_t(o)] = y[size_t(o * incy)];
    Handle Y = from_blob(got.data(), {n_out}, {1}, aoti_torch_dtype_float32());
    require_close(read_f32(Y.get()), want, 1e-4, 1e-4);
  }
}

}  // namespace

TEST_CASE("OpenBLAS stays single-threaded and big GEMMs are split over mpspack threads", "[shim][blas]") {
  REQUIRE(kOnOpenblas);
  const unsigned cores = mpspack::shim::usable_cores();
  if (cores == 1) {
    WARN("skipped: one usable core, where OpenBLAS would have started one thread anyway and nothing is split");
    return;
  }
  static_assert(64 * 1024 * 256 >= mpspack::shim::kSplitGemmMinMacs, "the products below must be split");
  if (const char* user = std::getenv("MPSPACK_TEST_USER_BLAS_THREADS")) {
    INFO("OPENBLAS_NUM_THREADS=" << user << " set by the user");
    CHECK(openblas_get_num_threads() == std::atoi(user));
    check_gemm(64, 1024, 256);
    const uint64_t own_before = mpspack::shim::own_gemv_calls();
    check_gemv(int64_t(mpspack::shim::kSplitGemvMinElements) / 64 + 3, 64, 1, 1);
    CHECK(mpspack::shim::own_gemv_calls() == own_before);  // whole to OpenBLAS, on its threads
    CHECK(threads_in_process() == 1);                      // left to OpenBLAS as the user set it: not split
    REQUIRE(std::getenv("OPENBLAS_NUM_THREADS") != nullptr);
    CHECK(std::string(std::getenv("OPENBLAS_NUM_THREADS")) == user);
    return;
  }
  if (std::getenv("GOTO_NUM_THREADS") != nullptr) {
    WARN("skipped: GOTO_NUM_THREADS is set in this environment, so OpenBLAS takes that count from the start");
    return;
  }
  CHECK(openblas_get_num_threads() == 1);
  CHECK(threads_in_process() == 1);  // nothing spinning beside the program
  check_gemm(64, 1024, 256);         // split by columns
  check_gemm(1024, 64, 256);         // split by rows
  // A side one longer than the threads' whole 16-element groups cover: the last block must take the rest.
  const int64_t odd = int64_t(cores) * 64 + 1, k = int64_t(mpspack::shim::kSplitGemmMinMacs) / (64 * odd) + 1;
  check_gemm(64, odd, k);
  check_gemm(odd, 64, k);
  check_gemm(7, 9, 5);  // too small to split
  // Matrix-vector products from the pool's threshold: split by rows, or by columns when transposed; the odd side
  // leaves the last block the rest, and strided x and y must land in their own elements.
  // Contiguous vectors run on mpspack's kernels, block by block (more than one block each way round); strided ones on
  // OpenBLAS's GEMV.
  const int64_t gemv_rows = int64_t(mpspack::shim::kSplitGemvMinElements) / odd + 3;
  uint64_t own = mpspack::shim::own_gemv_calls();
  check_gemv(gemv_rows, odd, 1, 1);
  CHECK(mpspack::shim::own_gemv_calls() > own + 2);
  own = mpspack::shim::own_gemv_calls();
  check_gemv(odd, gemv_rows, 3, 2);
  CHECK(mpspack::shim::own_gemv_calls() == own);
  check_gemv(9, 40, 1, 1);  // too small to split: one block each way round
  CHECK(mpspack::shim::own_gemv_calls() == own + 2);
  CHECK(openblas_get_num_threads() == 1);
  REQUIRE_FALSE(mpspack::shim::threads_on_openmp());  // no libgomp here: the split ran on mpspack's pool
  CHECK(threads_in_process() == int(cores));
  CHECK(std::getenv("OPENBLAS_NUM_THREADS") == nullptr);  // programs this one starts choose for themselves
}

TEST_CASE("run_parts inside a part of mpspack's pool runs on that part's thread", "[shim][blas]") {
  // The pool takes one job at a time: a split product inside attention's parts must not wait for it.
  REQUIRE_FALSE(mpspack::shim::threads_on_openmp());  // no libgomp here: run_parts uses mpspack's pool
  const unsigned parts = mpspack::shim::thread_count();
  // Recorded on the pool's threads, checked here: Catch2's assertions are not thread-safe.
  std::vector<std::atomic<unsigned>> inner(parts);
  std::atomic<unsigned> outer_parts{0}, wrong_outer_count{0}, wrong_inner_part{0};
  mpspack::shim::run_parts([&](unsigned t, unsigned n) {
    outer_parts += 1;
    if (n != parts) wrong_outer_count += 1;
    mpspack::shim::run_parts([&](unsigned u, unsigned m) {
      if (u != 0 || m != 1) wrong_inner_part += 1;
      inner[t] += 1;
    });
  });
  CHECK(outer_parts == parts);
  CHECK(wrong_outer_count == 0);
  CHECK(wrong_inner_part == 0);
  for (unsigned t = 0; t < parts; ++t) CHECK(inner[t] == 1);
}

TEST_CASE("mpspack's pool runs every part of every job once, back to back and after its threads slept",
          "[shim][blas]") {
  // Back to back, the workers find each job while they spin after the last; after a pause longer than the spin they
  // are asleep on the condition variable and the job must wake them (shim/parallel.cpp, Pool).
  REQUIRE_FALSE(mpspack::shim::threads_on_openmp());  // no libgomp here: run_parts uses mpspack's pool
  const unsigned parts = mpspack::shim::thread_count();
  std::vector<std::atomic<unsigned>> ran(parts);
  std::atomic<unsigned> wrong_count{0};
  unsigned jobs = 0, returned_early = 0;
  auto job = [&] {
    mpspack::shim::run_parts([&](unsigned t, unsigned n) {
      if (n != parts || t >= parts) wrong_count += 1;
      else ran[t] += 1;
    });
    ++jobs;
    for (unsigned t = 0; t < parts; ++t)
      if (ran[t] != jobs) ++returned_early;  // a part not yet run (or run twice) when run_parts returned
  };
  for (int i = 0; i < 2000; ++i) job();
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    job();
  }
  CHECK(wrong_count == 0);
  CHECK(returned_early == 0);
}

TEST_CASE("OpenBLAS runs the kernels of the CPU's vector instructions unless the user named others", "[shim][blas]") {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string running = lower(mpspack::shim::openblas_kernels());
  const std::string_view want = mpspack::shim::kernels_for_this_cpu();
  // The user's choice: the one CTest's second run sets, or one the environment this test runs in already had
  // (some machines set OPENBLAS_CORETYPE for every program). mpspack would have named exactly `want`, so another
  // value there is the user's.
  std::string user;
  if (const char* named = std::getenv("MPSPACK_TEST_USER_BLAS_KERNELS")) user = named;
  else if (const char* env = std::getenv("OPENBLAS_CORETYPE"); env && lower(env) != lower(want)) user = env;
  if (!user.empty()) {
    INFO("OPENBLAS_CORETYPE=" << user << " set by the user");
    CHECK(running == lower(user));
    check_gemm(7, 9, 5);
    REQUIRE(std::getenv("OPENBLAS_CORETYPE") != nullptr);
    CHECK(std::string(std::getenv("OPENBLAS_CORETYPE")) == user);
    return;
  }
  if (want.empty()) {
    WARN("skipped: this CPU has neither AVX-512 nor AVX2 with FMA; OpenBLAS's own pick (" << running << ") stands");
    return;
  }
  CHECK(running == lower(want));
  check_gemm(7, 9, 5);
  CHECK(std::getenv("OPENBLAS_CORETYPE") == nullptr);  // programs this one starts choose for themselves
}
