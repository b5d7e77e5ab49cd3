// OpenBLAS starts with one thread and gets one per core at the first product (shim/blas_threads.hpp). Its own
// executable: what is checked is the state of a fresh process before any product. ctest runs it twice: as is,
// and with OPENBLAS_NUM_THREADS=1 (plus MPSPACK_TEST_USER_BLAS_THREADS=1, since inside the process the
// variable cannot tell the user's choice from the one made at start-up), where the one thread must stay one.
#include "blas_threads.hpp"
#include "shim_test_util.hpp"

#include <cblas.h>
#include <dirent.h>

#include <cstdlib>
#include <string>

using namespace mpspack::test;

namespace {

int threads_in_process() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

// C = A @ B for 64x64 float matrices through the shim (OpenBLAS's GEMM), checked against a plain loop.
void one_product() {
  const int64_t n = 64;
  auto a = random_floats(n * n, 1), b = random_floats(n * n, 2);
  const int32_t f32 = aoti_torch_dtype_float32();
  Handle A = from_blob(a.data(), {n, n}, {n, 1}, f32), B = from_blob(b.data(), {n, n}, {n, 1}, f32);
  Handle C = empty({n, n}, {n, 1}, f32);
  REQUIRE(aoti_torch_cpu_mm_out(C.get(), A.get(), B.get()) == 0);
  std::vector<double> want(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j) want[size_t(i * n + j)] += double(a[size_t(i * n + k)]) * b[size_t(k * n + j)];
  require_close(read_f32(C.get()), want);
}

}  // namespace

TEST_CASE("OpenBLAS starts with one thread and gets one per core at the first product", "[shim][blas]") {
  const unsigned cores = mpspack::shim::usable_cores();
  if (cores == 1) {
    WARN("skipped: one usable core, where one thread is also what OpenBLAS would have started with");
    return;
  }
  if (const char* user = std::getenv("MPSPACK_TEST_USER_BLAS_THREADS")) {
    const int chosen = std::atoi(user);
    INFO("OPENBLAS_NUM_THREADS=" << chosen << " set by the user");
    CHECK(openblas_get_num_threads() == chosen);
    one_product();
    CHECK(openblas_get_num_threads() == chosen);
    REQUIRE(std::getenv("OPENBLAS_NUM_THREADS") != nullptr);
    CHECK(std::string(std::getenv("OPENBLAS_NUM_THREADS")) == user);
    return;
  }
  for (const char* v : {"GOTO_NUM_THREADS", "OMP_NUM_THREADS"})
    if (std::getenv(v) != nullptr) {
      WARN("skipped: " << v << " is set in this environment, so OpenBLAS takes that count from the start");
      return;
    }
  CHECK(openblas_get_num_threads() == 1);
  CHECK(threads_in_process() == 1);  // nothing spinning beside the program
  one_product();
  CHECK(openblas_get_num_threads() > 1);
  CHECK(openblas_get_num_threads() <= int(cores));
  CHECK(std::getenv("OPENBLAS_NUM_THREADS") == nullptr);  // programs this one starts choose for themselves
}
