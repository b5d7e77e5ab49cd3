// What a benchmark measures besides the model: the machine, peak memory, the page cache.
// (latency_stats() and ms_since_process_start() are public: bench.hpp.)
#pragma once

#include "mpspack/runtime/bench.hpp"

#include <cstdint>
#include <string>

namespace mpspack::runtime::pipeline {

// CPU model (/proc/cpuinfo), logical cores, OS (/etc/os-release PRETTY_NAME, else uname), kernel.
MachineInfo machine_info();

// Peak resident set of this process in bytes (VmHWM, else getrusage ru_maxrss).
uint64_t peak_rss_bytes();

// posix_fadvise(DONTNEED) on the whole file, then mincore() of a fresh mapping to see how much of it is still
// resident.
ColdCache drop_from_page_cache(const std::string& path);

}  // namespace mpspack::runtime::pipeline
