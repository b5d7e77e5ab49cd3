#include "call_profile.hpp"
#include "runtime/tuning/tuning.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mpspack::shim::call_profile {
namespace {

struct Totals {
  long long calls = 0;
  std::chrono::steady_clock::duration spent{};
};

struct Table {
  std::mutex mutex;
  bool paused = false;
  std::unordered_map<const char*, Totals> by_function;  // keyed by the __func__ address: one per function
};

Table& table() {
  static Table* t = new Table;  // never destroyed: calls may still arrive from other threads while exit runs
  return *t;
}

void print_table() {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  std::vector<std::pair<const char*, Totals>> rows(t.by_function.begin(), t.by_function.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.spent > b.second.spent; });
  double all_ms = 0;
  for (const auto& r : rows) all_ms += std::chrono::duration<double, std::milli>(r.second.spent).count();
  std::fprintf(stderr, "shim calls (MPSPACK_PROFILE_SHIM), %.3f ms in all:\n%12s %12s %12s %7s  %s\n", all_ms, "calls",
               "total ms", "mean us", "share", "function");
  for (const auto& [func, totals] : rows) {
    const double ms = std::chrono::duration<double, std::milli>(totals.spent).count();
    std::fprintf(stderr, "%12lld %12.3f %12.2f %6.1f%%  %s\n", totals.calls, ms, 1000.0 * ms / double(totals.calls),
                 all_ms > 0 ? 100.0 * ms / all_ms : 0.0, func);
  }
}

}  // namespace

bool enabled() noexcept {
  static const bool on = [] {
    if (!tuning().profile_shim) return false;
    std::atexit(print_table);
    return true;
  }();
  return on;
}

void record(const char* func, std::chrono::steady_clock::duration spent) noexcept {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  if (t.paused) return;
  Totals& totals = t.by_function[func];
  ++totals.calls;
  totals.spent += spent;
}

void start_over() noexcept {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.by_function.clear();
}

void pause(bool paused) noexcept {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.paused = paused;
}

}  // namespace mpspack::shim::call_profile
