// Every byte the loader executes or feeds the model is checked against the container's recorded hashes: the
// library segment and its kernel files before they are written to memory (always), the weights segment on every
// core beside the load and the first run (LoadOptions::verify_weights), awaited before the first run's outputs
// are handed back. A zero-copy load reads only the weight pages the model touches, so this is the read of every
// weight byte that the load itself no longer makes (docs/PERFORMANCE.md, "Verified loads").
#include "model_impl.hpp"

#include "mpspack/format/hash.hpp"

#include <sched.h>

#include <algorithm>

namespace mpspack::runtime::loader {
namespace {

// The CPUs this process may run on: the check's threads, one per CPU.
unsigned usable_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return 1;
  return unsigned(std::max(1, CPU_COUNT(&allowed)));
}

}  // namespace

Status check_library_segments(const Model::Impl& m) {
  std::vector<uint32_t> segments{m.lib.segment};
  segments.insert(segments.end(), m.lib.cubins.begin(), m.lib.cubins.end());
  return format::check_segments(*m.container, segments, usable_cpus());
}

Status start_weights_check(Model::Impl& m, const LoadOptions& o) {
  if (!o.verify_weights || m.lib.weights < 0) return {};
  const uint32_t segment = m.container->manifest().weights[size_t(m.lib.weights)].segment;
  // A segment of one chunk or less is hashed here and now: at 16 MiB that is a few milliseconds, less than a
  // thread of its own costs on a busy machine (the model's OpenMP team spins on the cores after each region).
  if (m.container->manifest().segments[segment].size <= format::kHashChunkBytes) {
    const auto t0 = Clock::now();
    Status s = format::check_segments(*m.container, std::span(&segment, 1), 1);
    m.t.verify_ms = ms_since(t0);
    return s;
  }
  // The thread touches nothing of the model but the container; its time comes back with its answer, so that the
  // timings are written by the model's own thread only.
  const format::Container* c = m.container;
  m.weights_check = std::async(std::launch::async, [c, segment]() -> Model::Impl::WeightsCheck {
    const auto t0 = Clock::now();
    Status s = format::check_segments(*c, std::span(&segment, 1), usable_cpus());
    return {std::move(s), ms_since(t0)};
  });
  return {};
}

Status await_weights_check(Model::Impl& m) {
  if (m.weights_check.valid()) {
    const auto t0 = Clock::now();
    Model::Impl::WeightsCheck done = m.weights_check.get();
    m.t.verify_wait_ms = ms_since(t0);
    m.t.verify_ms = done.ms;
    m.weights_status = std::move(done.status);
  }
  return m.weights_status;
}

}  // namespace mpspack::runtime::loader
