// Where the shim's threaded products run: the model library's OpenMP team when it brought one (torch's CPU
// kernels are OpenMP loops, libgomp), else a pool of mpspack's own. One team for everything: threads of a second
// runtime beside the team's (which spin for a while after each loop) oversubscribe the cores
// (docs/PERFORMANCE.md, "CPU: GEMMs and OpenBLAS's threads").
#pragma once

#include <functional>
#include <string_view>

namespace mpspack::shim {

// MPSPACK_CPU_GEMV, for measurements: "blas" leaves matrix-vector products to OpenBLAS's GEMV, "pool" always
// uses mpspack's own pool; empty by default.
std::string_view gemv_mode();

// The CPUs this process may run on (its affinity mask), at least 1.
unsigned usable_cores();

// Whether run_parts uses an OpenMP team now (a model library brought libgomp) rather than the pool.
bool threads_on_openmp();

// How many parts run_parts would run now: the OpenMP team's size, else the pool's.
unsigned thread_count();

// Runs part(t, parts) for every t in [0, parts), in parallel, and returns when all have.
void run_parts(const std::function<void(unsigned t, unsigned parts)>& part);

}  // namespace mpspack::shim
