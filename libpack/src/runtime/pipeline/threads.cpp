#include "threads.hpp"

#include <cblas.h>
#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>

namespace mpspack::runtime::pipeline {
namespace {

constexpr const char* kOpenMpVariable = "OMP_NUM_THREADS";

// OMP_NUM_THREADS as one positive count ("4"); not a list of counts per nesting level, nor anything else.
std::optional<unsigned> openmp_variable() {
  const char* v = std::getenv(kOpenMpVariable);
  if (v == nullptr) return std::nullopt;
  const std::string_view s(v);
  unsigned n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n == 0) return std::nullopt;
  return n;
}

// The first `count` CPUs of the affinity mask: the shim's pool and OpenMP's default team are as large as the
// mask, and threads started from now on inherit it.
Status narrow_affinity(unsigned count) {
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
    return make_error(Error::Kind::Io, "--threads {}: cannot read this process's CPU affinity", count);
  const unsigned usable = unsigned(CPU_COUNT(&allowed));
  if (count > usable)
    return make_error(Error::Kind::Invalid, "--threads {}: this process may run on {} CPU{} only", count, usable,
                      usable == 1 ? "" : "s");
  cpu_set_t chosen;
  CPU_ZERO(&chosen);
  for (int cpu = 0, taken = 0; cpu < CPU_SETSIZE && unsigned(taken) < count; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    CPU_SET(cpu, &chosen);
    ++taken;
  }
  if (::sched_setaffinity(0, sizeof(chosen), &chosen) != 0)
    return make_error(Error::Kind::Io, "--threads {}: cannot set this process's CPU affinity", count);
  return {};
}

// An OpenMP runtime reads OMP_NUM_THREADS when it starts (with the model library that brings it); one already
// started takes the count from omp_set_num_threads, for the parallel regions this thread starts.
void size_openmp_team(unsigned count) {
  ::setenv(kOpenMpVariable, std::to_string(count).c_str(), 1);
  void* gomp = ::dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (gomp == nullptr) return;
  if (auto set = reinterpret_cast<void (*)(int)>(::dlsym(gomp, "omp_set_num_threads"))) set(int(count));
  ::dlclose(gomp);
}

// OpenBLAS has a pool of its own only when the user gave it one (OPENBLAS_NUM_THREADS); otherwise mpspack keeps
// it single-threaded and splits large products over the team (shim/blas.cpp), which the two above size.
void size_openblas_pool(unsigned count) {
  if (openblas_get_num_threads() > 1) openblas_set_num_threads(int(count));
}

unsigned usable_cpus() {
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return 1;
  return unsigned(std::max(1, CPU_COUNT(&allowed)));
}

}  // namespace

Result<CpuThreads> use_cpu_threads(std::optional<unsigned> count) {
  if (!count) {
    if (auto n = openmp_variable()) return CpuThreads{*n, kOpenMpVariable, usable_cpus()};
    return CpuThreads{usable_cpus(), "cores", usable_cpus()};
  }
  if (*count == 0) return make_error(Error::Kind::Invalid, "--threads 0: the team needs at least one thread");
  MPK_CHECK(narrow_affinity(*count));
  size_openmp_team(*count);
  size_openblas_pool(*count);
  return CpuThreads{*count, "option", usable_cpus()};
}

}  // namespace mpspack::runtime::pipeline
