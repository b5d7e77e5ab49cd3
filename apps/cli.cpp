#include "cli.hpp"

#include "mpspack/format/header.hpp"
#include "mpspack/text.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <vector>

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

std::string printable(std::string_view s) { return text::printable(s); }

namespace {

constexpr std::string_view kElfMagic = "\x7f"
                                       "ELF";
constexpr std::string_view kZipMagic = "PK\x03\x04";

// "an mpspack container", "an ELF shared library or a .pt2 package", ...
std::string kinds_text(unsigned kinds) {
  std::vector<std::string_view> names;
  if (kinds & kContainerInput) names.push_back("an mpspack container");
  if (kinds & kLibraryInput) names.push_back("an ELF shared library");
  if (kinds & kPt2Input) names.push_back("a .pt2 package");
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += fmt::format("{}{}", i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", names[i]);
  return out;
}

}  // namespace

std::optional<Error> unknown_input(const std::string& path, std::string_view command, unsigned kinds) {
  // O_NONBLOCK: a FIFO is not waited on; it is left to the command's open, which refuses it by name.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  uint8_t head[format::kMagic.size()] = {};
  ssize_t n = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) n = ::pread(fd, head, sizeof head, 0);
  ::close(fd);
  if (n < 0) return std::nullopt;
  const std::string_view bytes(reinterpret_cast<const char*>(head), size_t(n));
  unsigned found = 0;
  if (bytes.size() == format::kMagic.size() && std::equal(format::kMagic.begin(), format::kMagic.end(), head))
    found = kContainerInput;
  else if (bytes.starts_with(kElfMagic)) found = kLibraryInput;
  else if (bytes.starts_with(kZipMagic)) found = kPt2Input;
  if (found & kinds) return std::nullopt;
  std::string what = found ? "it is " + kinds_text(found) + ", not " + kinds_text(kinds)
                           : (n == 0 ? "an empty file, not " : "not ") + kinds_text(kinds);
  return Error{Error::Kind::NotThisFormat, fmt::format("{}: not a file mpspack {} reads ({})", path, command, what)};
}

void print_json(const nlohmann::json& j) { std::cout << json_text(j); }

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

// A bound as people write it: 86400, 0.001, never 8.64e+04.
std::string plain(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v) : fmt::format("{}", v);
}

std::string shown(const std::string& typed) { return typed.empty() ? "an empty value" : typed; }

}  // namespace

CLI::Validator whole_number(uint64_t lo, uint64_t hi) {
  const std::string range = fmt::format("{}..{}", lo, hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        const bool negative = !s.empty() && s[0] == '-';
        const char* first = s.data() + (negative ? 1 : 0);
        const char* last = s.data() + s.size();
        if (first == last || std::find_if_not(first, last, [](char c) { return c >= '0' && c <= '9'; }) != last)
          return fmt::format("{} is not a whole number in {}", shown(s), range);
        uint64_t v = 0;
        const bool too_large = std::from_chars(first, last, v).ec == std::errc::result_out_of_range;
        if (too_large || (negative && v != 0) || v < lo || v > hi) return fmt::format("{} is outside {}", s, range);
        s = std::to_string(v);
        return {};
      },
      range);
}

CLI::Validator real_number(double lo, double hi, Excluded excluded) {
  const std::string range = fmt::format("{}..{}{}", plain(lo), plain(hi),
                                        excluded == Excluded::both  ? " (both excluded)"
                                        : excluded == Excluded::low ? fmt::format(" ({} excluded)", plain(lo))
                                                                    : std::string());
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        char* end = nullptr;
        const double v =
            s.empty() || std::isspace(static_cast<unsigned char>(s[0])) ? NAN : std::strtod(s.c_str(), &end);
        if (end != s.c_str() + s.size()) return fmt::format("{} is not a number in {}", shown(s), range);
        const bool above_low = excluded == Excluded::none ? v >= lo : v > lo;
        const bool below_high = excluded == Excluded::both ? v < hi : v <= hi;
        if (!(above_low && below_high)) return fmt::format("{} is outside {}", s, range);  // NaN too
        return {};
      },
      range);
}

CLI::Validator non_empty() {
  return CLI::Validator(
      [](std::string& s) { return s.empty() ? std::string("an empty value is not allowed") : std::string(); }, "");
}

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
    std::fprintf(stderr, "\r%s %5.1f%%  %.2f / %.2f GiB  %.2f GB/s", label.c_str(), 100.0 * done / total, done / gib,
                 total / gib, secs > 0 ? done / secs / 1e9 : 0.0);
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
