// docs/CLI.md's "Option ranges" table as the contract it states: every row is read from the document and its
// option tried at and around its limits, without its needed option and with each option it excludes. A value the
// table allows must get past the command line; the runs then stop cheaply on a container that does not exist (or
// a reference that is not one), so that --warmup 1000000 is accepted without being run.
#include "cli_runner.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

struct Row {
  std::vector<std::string> commands;  // "run"; "push", "pull", "inspect"; "any"
  std::string option;                 // "--warmup"
  std::string takes;                  // whole number, number, name, one of, flag
  std::string range;                  // "0..1000000", "0..100 (both excluded)", "non-empty", "text, json", "-"
  std::string needs, excludes;        // an option, or ""
};

std::string trimmed(std::string s) {
  const auto first = s.find_first_not_of(' '), last = s.find_last_not_of(' ');
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

// The first `--name` in backticks in a cell, or "".
std::string option_in(const std::string& cell) {
  const auto open = cell.find("`--");
  return open == std::string::npos ? std::string() : cell.substr(open + 1, cell.find('`', open + 1) - open - 1);
}

std::vector<std::string> split(const std::string& s, const std::string& by) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t end = s.find(by, start);
    parts.push_back(trimmed(s.substr(start, end - start)));
    if (end == std::string::npos) return parts;
    start = end + by.size();
  }
}

std::vector<Row> table() {
  const std::string doc = slurp(fs::path(MPSPACK_SOURCE_DIR) / "docs" / "CLI.md");
  const size_t at = doc.find("\n## Option ranges\n");
  REQUIRE(at != std::string::npos);
  std::vector<Row> rows;
  std::istringstream in(doc.substr(at + 1, doc.find("\n## ", at + 1) - at));
  bool header = true;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| command |", 0) == 0 || line.rfind("|---", 0) == 0) {
      header = false;
      continue;
    }
    if (header || line.empty() || line[0] != '|') continue;
    const auto cells = split(line.substr(1, line.size() - 2), "|");
    REQUIRE(cells.size() == 7);
    rows.push_back(
        {split(cells[0], ", "), option_in(cells[1]), cells[2], cells[3], option_in(cells[5]), option_in(cells[6])});
  }
  return rows;
}

// The row of `option`, that of `command` where several commands have one (run's --library and pull's differ).
const Row& row_of(const std::vector<Row>& rows, const std::string& option, const std::string& command = "") {
  for (const Row& r : rows)
    if (r.option == option && std::find(r.commands.begin(), r.commands.end(), command) != r.commands.end()) return r;
  for (const Row& r : rows)
    if (r.option == option) return r;
  FAIL("no row for " << option);
  return rows.front();
}

// A command line of `command` that passes the command line and then fails at once, on a file or reference that
// is not there; `extra` goes before the file. Run's with --bench, unless `bench` is false.
std::vector<std::string> cheap(const std::string& command, const std::vector<std::string>& extra, bool bench = true) {
  const std::string missing = "/nonexistent/option-ranges.mpk";
  const bool gives_output = std::find(extra.begin(), extra.end(), "--output") != extra.end();
  std::vector<std::string> args = {command == "any" ? "verify" : command};  // a global option: with any command
  if ((command == "pull" || command == "unpack") && !gives_output) args.insert(args.end(), {"-o", "/nonexistent/out"});
  if (command == "run" && bench) args.push_back("--bench");
  args.insert(args.end(), extra.begin(), extra.end());
  if (command == "pull") args.push_back("not a reference");
  else args.push_back(missing);
  if (command == "push") args.push_back("localhost:1/repo:tag");
  if (command == "diff") args.push_back(missing);  // diff compares two containers
  return args;
}

// A usage error: exit 2 and exactly one line, "mpspack: <what> (see --help)".
std::string usage_error(const CliResult& r) {
  INFO(r.err);
  CHECK(r.exit_code == 2);
  REQUIRE(r.err_lines().size() == 1);
  const std::string line = r.err_lines()[0];
  CHECK(line.rfind("mpspack: ", 0) == 0);
  CHECK(line.size() > 13);
  CHECK(line.substr(line.size() - 13) == " (see --help)");
  CHECK(r.out.empty());
  return line;
}

// The command line took it: what stopped the run was the missing file or the bad reference, not a usage error.
void accepted(const CliResult& r) {
  INFO(r.err);
  CHECK(r.exit_code == 2);
  REQUIRE(!r.err_lines().empty());
  for (const std::string& line : r.err_lines()) CHECK(line.find("(see --help)") == std::string::npos);
}

// A name an option takes: a path in a folder that does not exist, so that an option naming a file to write
// (--junit, which writes an errored case when the run fails) leaves nothing behind.
const std::string kName = "/nonexistent/option-ranges-name";

struct Probe {
  std::string value;
  bool in_range;
};
std::vector<Probe> probes(const Row& r);

// A value the option takes (for trying its needs and excludes), none for a flag.
std::vector<std::string> valid(const Row& r) {
  if (r.takes == "flag") return {r.option};
  if (r.takes == "name") return {r.option, kName};
  if (r.takes == "one of") return {r.option, split(r.range, ", ").front()};
  return {r.option, probes(r)[2].value};  // just inside its lower limit
}

// "n", one whole number past or before `s` by `delta` (any size: 2^64 is past a uint64_t).
std::string whole_plus(const std::string& s, int delta) {
  __int128 v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  v += delta;
  if (v < 0) return "-" + whole_plus(std::to_string(-int64_t(v)), 0);
  std::string out;
  do out.insert(out.begin(), char('0' + int(v % 10)));
  while ((v /= 10) > 0);
  return out;
}

std::string real(double v) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// Each limit, a value just inside it and one just outside it.
std::vector<Probe> probes(const Row& r) {
  const size_t dots = r.range.find("..");
  const std::string lo = r.range.substr(0, dots);
  const std::string rest = r.range.substr(dots + 2);
  const std::string hi = rest.substr(0, rest.find(' '));
  if (r.takes == "whole number")
    return {{whole_plus(lo, -1), false}, {lo, true}, {whole_plus(lo, 1), true},
            {whole_plus(hi, -1), true},  {hi, true}, {whole_plus(hi, 1), false}};
  REQUIRE(r.takes == "number");
  const bool low_out = r.range.find("excluded") != std::string::npos;
  const bool high_out = r.range.find("(both excluded)") != std::string::npos;
  const double l = std::stod(lo), h = std::stod(hi);
  const double dl = std::max(std::abs(l), 1.0) * 1e-6, dh = std::max(std::abs(h), 1.0) * 1e-6;
  return {{real(l - dl), false}, {lo, !low_out},  {real(l + dl), true},
          {real(h - dh), true},  {hi, !high_out}, {real(h + dh), false}};
}

}  // namespace

TEST_CASE("Option ranges: every row of docs/CLI.md's table, at and around its limits", "[cli][options]") {
  const auto rows = table();
  REQUIRE(rows.size() >= 20);
  for (const Row& r : rows) {
    for (const std::string& command : r.commands) {
      INFO(command << " " << r.option << " (" << r.range << ")");
      const std::vector<std::string> needed =
          r.needs.empty() || r.needs == "--bench" ? std::vector<std::string>{} : valid(row_of(rows, r.needs, command));
      auto with = [&](std::vector<std::string> option) {
        option.insert(option.end(), needed.begin(), needed.end());
        return run_mpspack(cheap(command, option));
      };
      if (r.takes == "whole number" || r.takes == "number") {
        for (const Probe& p : probes(r)) {
          INFO(p.value);
          auto res = with({r.option, p.value});
          if (p.in_range) {
            accepted(res);
          } else {
            CHECK(usage_error(res) ==
                  "mpspack: " + r.option + ": " + p.value + " is outside " + r.range + " (see --help)");
          }
        }
        for (const char* junk : {"", "abc", "0x10", "1.5.2"}) {
          if (r.takes == "number" && std::string(junk) == "0x10") continue;  // a hexadecimal float is a number
          INFO("'" << junk << "'");
          const std::string line = usage_error(with({r.option, junk}));
          CHECK(line.rfind("mpspack: " + r.option + ": ", 0) == 0);
          CHECK(line.find(" is not a ") != std::string::npos);
        }
      } else if (r.takes == "name") {
        CHECK(usage_error(with({r.option, ""})) ==
              "mpspack: " + r.option + ": an empty value is not allowed (see --help)");
        accepted(with({r.option, kName}));
      } else if (r.takes == "one of") {
        for (const std::string& v : split(r.range, ", ")) {
          INFO(v);
          accepted(with({r.option, v}));
        }
        CHECK(usage_error(with({r.option, "bogus"})).rfind("mpspack: " + r.option + ": bogus", 0) == 0);
      } else {
        REQUIRE(r.takes == "flag");
        accepted(with({r.option}));
      }

      if (r.needs.empty() && command == "run") accepted(run_mpspack(cheap(command, valid(r), false)));  // no --bench
      if (!r.needs.empty()) {
        // Without what it needs (run without --bench, or the option missing from `needed`).
        const auto alone = run_mpspack(cheap(command, valid(r), r.needs != "--bench"));
        CHECK(usage_error(alone) == "mpspack: " + r.option + " requires " + r.needs + " (see --help)");
      }
      if (!r.excludes.empty()) {
        const Row& other = row_of(rows, r.excludes, command);
        CHECK(other.excludes == r.option);  // the table says it from both sides
        auto both = valid(r);
        for (const auto& a : valid(other)) both.push_back(a);
        const std::string line = usage_error(with(both));
        CHECK((line.find(r.option + " excludes " + r.excludes) != std::string::npos ||
               line.find(r.excludes + " excludes " + r.option) != std::string::npos));
      }
    }
  }
}

TEST_CASE("Option ranges: every number option --help shows has a row in the table, with its range", "[cli][options]") {
  const auto rows = table();
  for (const char* command : {"", "build", "inspect", "verify", "unpack", "diff", "run", "report", "push", "pull"}) {
    auto help =
        run_mpspack(*command ? std::vector<std::string>{command, "--help"} : std::vector<std::string>{"--help"});
    REQUIRE(help.exit_code == 0);
    std::istringstream in(help.out);
    for (std::string line; std::getline(in, line);) {
      // "  --warmup UINT:0..1000000 Needs: ...": a number option, and the range its check added.
      const auto name = line.find("  --"), type = line.find_first_of(' ', name + 4);
      if (name != 0 || type == std::string::npos) continue;
      const std::string option = line.substr(2, type - 2), rest = line.substr(type + 1);
      if (rest.rfind("UINT", 0) != 0 && rest.rfind("INT", 0) != 0 && rest.rfind("FLOAT", 0) != 0) continue;
      INFO(command << " " << option << ": " << line);
      const Row& r = row_of(rows, option);
      CHECK(rest.find(":" + r.range) != std::string::npos);
    }
  }
}

TEST_CASE("Option ranges: what used to wrap, do nothing or fight is refused in one line, exit 2", "[cli][options]") {
  TempDir tmp;
  const std::string mpk = (tmp / "absent.mpk").string();
  struct Case {
    std::vector<std::string> args;
    std::string line;
  };
  const std::vector<Case> cases = {
      {{"--bench", "--warmup", "-1"}, "--warmup: -1 is outside 0..1000000"},
      {{"--bench", "--warmup", "4294967296"}, "--warmup: 4294967296 is outside 0..1000000"},
      {{"--seed", "-1"}, "--seed: -1 is outside 0..18446744073709551615"},
      {{"--rtol", "-1"}, "--rtol: -1 is outside 0..1"},
      {{"--rtol", "nan"}, "--rtol: nan is outside 0..1"},
      {{"--device", ""}, "--device: an empty value is not allowed"},
      {{"--bench", "--iterations", "0"}, "--iterations: 0 is outside 1..1000000"},
      {{"--bench", "--duration", "0"}, "--duration: 0 is outside 0..86400 (0 excluded)"},
      {{"--bench", "--repetitions", "0"}, "--repetitions: 0 is outside 1..1000"},
      {{"--bench", "--threads", "0"}, "--threads: 0 is outside 1..1024"},
      {{"--format", "csv", "--export-times", (tmp / "t.json").string(), "--iterations", "5"},
       "--iterations requires --bench"},
      {{"--bench", "--warmup", "3", "--warmup-ms", "40"}, "--warmup excludes --warmup-ms"},
      {{"--bench", "--duration", "1", "--iterations", "5"}, "--iterations excludes --duration"},
      {{"--bench", "--json", "--format", "csv"}, "--json excludes --format csv"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"run", mpk};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = run_mpspack(args);
    INFO(r.err);
    CHECK(usage_error(r) == "mpspack: " + c.line + " (see --help)");
  }
  CHECK(tmp.entries().empty());  // no t.json: --export-times without --bench wrote nothing

  // A whole number is read as decimal, whatever CLI11 would make of a leading zero; --help shows the range.
  accepted(run_mpspack({"run", "--bench", mpk, "--warmup", "010"}));
  const auto help = run_mpspack({"run", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("0..1000000") != std::string::npos);
}
