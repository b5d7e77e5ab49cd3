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
  std::unordered_map<const char*, Totals> within;       // record_within's steps, keyed by their names' addresses
};

Table& table() {
  static Table* t = new Table;  // never destroyed: calls may still arrive from other threads while exit runs
  return *t;
}

using Rows = std::vector<std::pair<const char*, Totals>>;

Rows slowest_first(const std::unordered_map<const char*, Totals>& totals) {
  Rows rows(totals.begin(), totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.spent > b.second.spent; });
  return rows;
}

double ms_of(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void print_rows(const Rows& rows, double all_ms) {
  for (const auto& [name, totals] : rows) {
    const double ms = ms_of(totals.spent);
    std::fprintf(stderr, "%12lld %12.3f %12.2f %6.1f%%  %s\n", totals.calls, ms, 1000.0 * ms / double(totals.calls),
                 all_ms > 0 ? 100.0 * ms / all_ms : 0.0, name);
  }
}

// One call of `key` into one of the table's two maps, unless paused.
void add(std::unordered_map<const char*, Totals> Table::*map, const char* key,
         std::chrono::steady_clock::duration spent) noexcept {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  if (t.paused) return;
  Totals& totals = (t.*map)[key];
  ++totals.calls;
  totals.spent += spent;
}

void print_table() {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  const Rows rows = slowest_first(t.by_function);
  double all_ms = 0;
  for (const auto& r : rows) all_ms += ms_of(r.second.spent);
  std::fprintf(
      stderr,
      "shim calls and the model's OpenMP loops (MPSPACK_PROFILE_SHIM), %.3f ms in all:\n%12s %12s %12s %7s  %s\n",
      all_ms, "calls", "total ms", "mean us", "share", "function");
  print_rows(rows, all_ms);
  if (t.within.empty()) return;
  std::fprintf(stderr, "steps within those calls (shares of the same total):\n");
  print_rows(slowest_first(t.within), all_ms);
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
  add(&Table::by_function, func, spent);
}

void record_within(const char* step, std::chrono::steady_clock::duration spent) noexcept {
  add(&Table::within, step, spent);
}

void start_over() noexcept {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.by_function.clear();
  t.within.clear();
}

void pause(bool paused) noexcept {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.paused = paused;
}

}  // namespace mpspack::shim::call_profile
