#pragma once
// Where a model's time goes among the shim functions it calls: with MPSPACK_PROFILE_SHIM set, every call through
// guarded() is timed and, at process exit, one table per function (calls, total, mean, share) goes to stderr,
// slowest first. `run --bench` keeps only its timed runs in it (start_over, Paused around the warm-up). Times are
// the host's wall time inside the call, inclusive of shim functions it calls; on CUDA that is the time to enqueue,
// not the kernel's. Off, the cost is one load of a static flag per call.
#include <chrono>

namespace mpspack::shim::call_profile {

bool enabled() noexcept;
void record(const char* func, std::chrono::steady_clock::duration spent) noexcept;
// A step inside the recorded calls (`step`: a string literal, one address each), in a table of its own below the
// calls' one: it is already part of their time.
void record_within(const char* step, std::chrono::steady_clock::duration spent) noexcept;
// Drops what was recorded so far.
void start_over() noexcept;
// While paused, calls are not recorded.
void pause(bool paused) noexcept;

// Pauses recording for its lifetime.
class Paused {
 public:
  Paused() noexcept { pause(true); }
  ~Paused() { pause(false); }
  Paused(const Paused&) = delete;
  Paused& operator=(const Paused&) = delete;
};

// Records the time from its construction to its destruction against `func` (a __func__, so one address each).
class Scope {
 public:
  explicit Scope(const char* func) noexcept : func_(func), start_(std::chrono::steady_clock::now()) {}
  ~Scope() { record(func_, std::chrono::steady_clock::now() - start_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* func_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace mpspack::shim::call_profile
