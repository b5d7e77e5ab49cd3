// What the oneDNN plugin's own files (onednn_conv.cpp, onednn_gemm.cpp) share: its one engine, scratch memory for
// a call, and how an entry point turns an exception into the message the shim reports. Not seen by the shim.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>  // libgomp, oneDNN's threading runtime: omp_get_max_threads

#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <string>

namespace mpspack::shim {

inline dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The team a primitive made now would run its loops on: the calling thread's OpenMP nthreads-var. A primitive
// fixes its thread count when it is made, so each plan cache keys on this too. The shim changes it while a process
// runs (parallel.hpp, model_parallel: one thread where the model's own teams oversubscribe the cores), and a
// primitive made before that opened teams of the old size: on a model compiled for 16 threads on 2 cores, a team of
// 2 between the model's teams of 16 made libgomp end 14 threads and start them again at every run.
inline int team_size() { return omp_get_max_threads(); }

// A 64-byte-aligned scratch block for one call.
struct Buffer {
  std::unique_ptr<void, decltype(&std::free)> bytes{nullptr, &std::free};
  explicit Buffer(std::size_t n) {
    if (n > 0) bytes.reset(std::aligned_alloc(64, (n + 63) / 64 * 64));
    if (n > 0 && !bytes) throw std::bad_alloc();
  }
  void* get() const { return bytes.get(); }
};

// Runs an entry point's work, which returns an empty string or why it did not run; an exception becomes the one
// line saying why.
template <class Work>
std::string reporting_errors(Work work) {
  try {
    return work();
  } catch (const dnnl::error& e) { return std::string("oneDNN: ") + e.what(); } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace mpspack::shim
