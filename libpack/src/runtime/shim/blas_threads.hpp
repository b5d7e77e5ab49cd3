// OpenBLAS's threads, started when the first BLAS product needs them instead of at exec.
//
// The pthreads OpenBLAS linked into mpspack starts one thread per core from a constructor, in every process
// (`mpspack --version` and `inspect` included), and those threads spin for a while before they sleep. On the
// 16-core device machine that cost each command ~0.7-1 ms of wall time and ~10 ms of CPU time, and a tiny
// model's steady-state run took 1.1-1.6x as long beside them (docs/PERFORMANCE.md, "Start-up"). A constructor
// of higher priority than OpenBLAS's lets it start with one thread; the first product grows it to the cores.
#pragma once

namespace mpspack::shim {

// The CPUs this process may run on (its affinity mask), at least 1.
unsigned usable_cores();

// Call before every OpenBLAS call that may use threads: the first call gives OpenBLAS one thread per usable
// core, as it would have taken at start-up, unless the user chose a count (OPENBLAS_NUM_THREADS,
// GOTO_NUM_THREADS or OMP_NUM_THREADS set), which OpenBLAS then used from the start.
void start_blas_threads();

}  // namespace mpspack::shim
