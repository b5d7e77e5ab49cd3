// What opening a container costs the first time in a fresh process against the second and third time in the same
// process: the first pays for running the code for the first time (its pages mapped by faults, caches and the
// branch predictor cold), the later ones only for the work. One line per process:
//   cold_open CONTAINER             open #0, #1, #2: ms and minor page faults of each
//   cold_open CONTAINER --populate  the same after madvise(MADV_POPULATE_READ) of every file-backed mapping of the
//                                   process (the program's and its libraries' code and data), whose time is printed
//                                   first: how much of the first open's extra is those page faults
// Built against libpack by section 7 of bench/micro/run.sh, which runs it in fresh processes, alternating.
#include "mpspack/format/container.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace {

using Clock = std::chrono::steady_clock;

long minor_faults() {
  rusage r{};
  ::getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Every mapping /proc/self/maps names a file for: the executable, the shared libraries, the loader.
void populate_file_mappings() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    unsigned long begin = 0, end = 0;
    if (line.find('/') == std::string::npos || std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) != 2) continue;
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (argc == 3 && std::strcmp(argv[2], "--populate") != 0) || argc > 3)
    return std::fprintf(stderr, "usage: cold_open CONTAINER [--populate]\n"), 2;
  if (argc == 3) {
    const long f0 = minor_faults();
    const auto t0 = Clock::now();
    populate_file_mappings();
    std::printf("populate %.3f ms %ld faults | ", ms_since(t0), minor_faults() - f0);
  }
  for (int i = 0; i < 3; ++i) {
    const long f0 = minor_faults();
    const auto t0 = Clock::now();
    auto container = mpspack::format::Container::open(argv[1]);
    const double ms = ms_since(t0);
    if (!container.ok()) return std::fprintf(stderr, "cold_open: %s\n", container.error().message.c_str()), 1;
    std::printf("open%d %.3f ms %ld faults%s", i, ms, minor_faults() - f0, i < 2 ? " | " : "\n");
  }
}
