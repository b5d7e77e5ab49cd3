// The bash completion and the man page are made from the command line's own definitions: every subcommand and
// every option --help shows is in them, and the options hidden from --help are not.
#include "cli_runner.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <regex>
#include <sstream>

using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> subcommands() {
  auto r = run_mpspack({"--help"});
  REQUIRE(r.exit_code == 0);
  const std::string listing = r.out.substr(r.out.find("Subcommands:"));
  std::vector<std::string> names;
  std::istringstream lines(listing);
  for (std::string l; std::getline(lines, l);)
    if (std::smatch m; std::regex_search(l, m, std::regex("^  ([a-z]+) "))) names.push_back(m[1]);
  REQUIRE(names.size() >= 7);
  return names;
}

// The option names (-o, --output) of the lines under "Options:" in `mpspack CMD --help`.
std::vector<std::string> help_options(const std::string& cmd) {
  auto r = run_mpspack({cmd, "--help"});
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> names;
  std::istringstream lines(r.out.substr(r.out.find("Options:")));
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("  -", 0) != 0) continue;
    const std::string spec = l.substr(2, l.find(' ', 2) - 2);  // "-o,--output"
    std::istringstream parts(spec);
    for (std::string p; std::getline(parts, p, ',');) names.push_back(p);
  }
  return names;
}

}  // namespace

TEST_CASE("the bash completion lists every subcommand and every option of --help, no hidden one", "[cli][completion]") {
  auto r = run_mpspack({"--bash-completion"});
  REQUIRE(r.exit_code == 0);
  const std::string script = r.out;
  for (const std::string& cmd : subcommands()) {
    INFO(cmd);
    std::smatch m;
    REQUIRE(std::regex_search(script, m, std::regex("\n    " + cmd + "\\) opts=\"([^\"]*)\"")));
    const std::string opts = " " + std::string(m[1]) + " ";
    for (const std::string& o : help_options(cmd)) {
      INFO(o);
      CHECK(opts.find(" " + o + " ") != std::string::npos);
    }
  }
  CHECK(script.find("--upload-chunk-bytes") == std::string::npos);        // hidden: for the registry tests
  CHECK(script.find("\"text json jsonl csv md\"") != std::string::npos);  // --format's values
  // It is bash.
  TempDir tmp;
  write_bytes(tmp / "mpspack.bash", script);
  CHECK(std::system(("bash -n '" + (tmp / "mpspack.bash").string() + "'").c_str()) == 0);
}

TEST_CASE("the man page has a section for every subcommand with its options", "[cli][completion]") {
  const fs::path man = binary_dir() / "share" / "mpspack.1";
  if (!fs::exists(man)) {
    if (running_in_ci()) FAIL("CI=true, and the man page was not built (help2man missing?)");
    WARN("skipped: " << man.string() << " was not built (help2man not installed)");
    return;
  }
  const std::string page = slurp(man);
  for (const std::string& cmd : subcommands()) {
    INFO(cmd);
    CHECK(page.find(".SS " + cmd + "\n") != std::string::npos);
    CHECK(page.find("Usage: mpspack " + cmd) != std::string::npos);
  }
  CHECK(page.find("  --iterations ") != std::string::npos);  // run's options are in it
}
