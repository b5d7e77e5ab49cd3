#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

namespace mpspack::cli {

Globals& mutable_globals() {
  static Globals g;
  return g;
}
const Globals& globals() { return mutable_globals(); }

int fail(const Error& e, int code) {
  std::fprintf(stderr, "mpspack: %s\n", printable(e.message).c_str());
  return code;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char ch : s) {
    if (ch < 0x20 || ch == 0x7f) out += fmt::format("\\x{:02x}", ch);
    else out += char(ch);
  }
  return out;
}

void print_json(const nlohmann::json& j) { std::cout << j.dump(2) << "\n"; }

namespace {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override {
    if (group == kHiddenGroup) return {};
    return CLI::Formatter::make_group(std::move(group), is_positional, std::move(opts));
  }
};

}  // namespace

std::shared_ptr<CLI::FormatterBase> help_formatter() { return std::make_shared<HelpFormatter>(); }

namespace {

struct Bar {
  std::string label;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last{};
  bool drawn = false;
  ~Bar() {
    if (drawn) std::fputs("\n", stderr);
  }
  void draw(uint64_t done, uint64_t total) {
    // Small jobs finish before a bar helps; redraw at most ~10 times a second.
    if (total < (64ull << 20)) return;
    auto now = std::chrono::steady_clock::now();
    if (done < total && now - last < std::chrono::milliseconds(100)) return;
    last = now;
    double secs = std::chrono::duration<double>(now - start).count();
    double gib = 1024.0 * 1024 * 1024;
    std::fprintf(stderr, "\r%s %5.1f%%  %.2f / %.2f GiB  %.2f GB/s", label.c_str(), 100.0 * done / total,
                 done / gib, total / gib, secs > 0 ? done / secs / 1e9 : 0.0);
    drawn = true;
  }
};

}  // namespace

format::Progress progress_bar(std::string label) {
  if (globals().quiet || !isatty(STDERR_FILENO)) return {};
  auto bar = std::make_shared<Bar>();
  bar->label = std::move(label);
  return [bar](uint64_t done, uint64_t total) { bar->draw(done, total); };
}

}  // namespace mpspack::cli
