// The CPU team's size for a benchmark (BenchOptions::threads): what sizes it, set; or what sized it, read.
#pragma once

#include "mpspack/result.hpp"
#include "mpspack/runtime/bench.hpp"

#include <optional>

namespace mpspack::runtime::pipeline {

// With a count: narrows this process to that many of the CPUs it may use and sizes the OpenMP team and
// OpenBLAS's own pool to it (bench.hpp, BenchOptions::threads); an error when it may use fewer. Without: the
// size the team takes by itself (OMP_NUM_THREADS when set, else the CPUs this process may use).
Result<CpuThreads> use_cpu_threads(std::optional<unsigned> count);

}  // namespace mpspack::runtime::pipeline
