// Where the shim's threaded products run: the model library's OpenMP team when it brought one (torch's CPU
// kernels are OpenMP loops, libgomp), else a pool of mpspack's own. One team for everything: threads of a second
// runtime beside the team's (which spin for a while after each loop) oversubscribe the cores
// (docs/PERFORMANCE.md, "CPU: OpenBLAS's kernels and threads"). The exception is a model whose own teams are larger
// than the machine's cores (model_parallel below): then the pool.
#pragma once

#include <functional>
#include <string_view>

namespace mpspack::shim {

// MPSPACK_CPU_GEMV, for measurements: "blas" leaves matrix-vector products whole to OpenBLAS's GEMV, "pool" always
// uses mpspack's own pool, "openblas" computes the float32 ones, split or not, on OpenBLAS's GEMV instead of
// mpspack's kernels (gemv_rows.hpp); empty by default.
std::string_view gemv_mode();

// The CPUs this process may run on (its affinity mask), at least 1.
unsigned usable_cores();

// Whether run_parts uses an OpenMP team now (a model library brought libgomp) rather than the pool.
bool threads_on_openmp();

// Whether run_parts' threads spin for a while after each call, so that back-to-back calls find them awake: an
// OpenMP team's, or mpspack's pool where the process has no libgomp. Beside a loaded libgomp (a model whose teams
// are larger than the cores) the pool's threads sleep between calls, since libgomp's spin already.
bool threads_wake_fast();

// How many parts run_parts would run now: the OpenMP team's size, else the pool's.
unsigned thread_count();

// Runs part(t, parts) for every t in [0, parts), in parallel, and returns when all have.
void run_parts(const std::function<void(unsigned t, unsigned parts)>& part);

// A model library's own parallel regions (its GOMP_parallel import, routed here by the loader), passed on
// unchanged. Inductor's generated code asks for a fixed team, the compiling machine's thread count
// (`#pragma omp parallel num_threads(16)`), and libgomp ends the threads a smaller team leaves idle and starts them
// again for the next larger one. So the shim's own teams, and oneDNN's, follow the largest team the model asked
// for: that size up to this machine's cores; beyond them (a model compiled on a larger machine) none, the calling
// thread and mpspack's pool instead. A model compiled for 16 threads otherwise starts threads around each of its
// shim calls on a smaller machine, and runs many times slower (docs/PERFORMANCE.md, "CPU: the model's OpenMP teams").
// Only once openmp_available(): libgomp is loaded and its API found.
void model_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
// The largest team a model's regions asked for so far in this process, 0 before any.
unsigned model_team();
bool openmp_available();

}  // namespace mpspack::shim
