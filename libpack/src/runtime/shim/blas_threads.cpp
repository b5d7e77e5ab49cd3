#include "blas_threads.hpp"

#include <cblas.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace mpspack::shim {
namespace {

constexpr const char* kVariable = "OPENBLAS_NUM_THREADS";
bool g_deferred = false;  // written once before main, read after

// Priority 101 (the first a program may use) runs before OpenBLAS's own constructor, which has none and reads
// the variable to size its thread pool.
__attribute__((constructor(101))) void defer_blas_threads() {
  for (const char* chosen : {kVariable, "GOTO_NUM_THREADS", "OMP_NUM_THREADS"})
    if (std::getenv(chosen) != nullptr) return;
  g_deferred = ::setenv(kVariable, "1", 0) == 0;
}

}  // namespace

unsigned usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return unsigned(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

void start_blas_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!g_deferred) return;
    // Out of the environment again, so programs this one starts choose their own count. The first product
    // runs before any thread of the model's could read the environment concurrently.
    ::unsetenv(kVariable);
    openblas_set_num_threads(int(usable_cores()));  // grows OpenBLAS's pool to what it would have started with
  });
}

}  // namespace mpspack::shim
