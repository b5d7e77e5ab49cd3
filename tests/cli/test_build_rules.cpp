// `build` runs the readers' rules on what it is about to write: an input it cannot store as a valid
// container is refused with one line naming the rule, exit 2, and no output or temp file.
#include "cli_runner.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace mpspack::test;
namespace fs = std::filesystem;

TEST_CASE("build refuses library names its readers would refuse, naming the rule", "[cli][bad-input]") {
  const fs::path so = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded" / "model.so";
  MPK_REQUIRE_FIXTURE(so);
  TempDir tmp;
  // The library's stored name is the input's stem: a backslash, a newline, 252 bytes.
  for (const std::string& stem : {std::string("a\\b"), std::string("a\nb"), std::string(252, 'n')}) {
    INFO("stem of " << stem.size() << " bytes");
    const fs::path input = tmp / (stem + ".so");
    fs::copy_file(so, input, fs::copy_options::overwrite_existing);
    const fs::path out = tmp / "out.mpk";
    const auto r = run_mpspack({"build", input.string(), "-o", out.string()});
    CHECK(r.exit_code == 2);
    const auto lines = r.err_lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind("mpspack: ", 0) == 0);
    CHECK(lines[0].find("rule L1: library name") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
    for (const auto& e : tmp.entries()) CHECK(e.find("out.mpk") == std::string::npos);
    fs::remove(input);
  }
}
