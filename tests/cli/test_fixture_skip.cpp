// A missing ../shared is never a silent pass: this executable runs one of its own fixture cases with
// MPSPACK_SHARED_DIR pointing at a folder that does not exist, and checks the exit code CTest sees.
#include "cli_runner.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace mpspack::test;

namespace {

// Runs this test executable on `test_name` with the given environment only; returns its exit code.
int run_self(const std::string& test_name, std::vector<std::string> env) {
  std::vector<std::string> args = {"/proc/self/exe", test_name};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int code = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0) code = wait_for_exit(pid, 60);
  posix_spawn_file_actions_destroy(&fa);
  return code;
}

}  // namespace

TEST_CASE("a missing fixture folder skips visibly (exit 77) and fails under CI=true", "[cli][fixtures-missing]") {
  const std::string missing = "MPSPACK_SHARED_DIR=/nonexistent/mpspack-shared";
  const std::string bin = "MPSPACK_BIN=" + mpspack_binary();
  // One case that needs two fixtures and one that walks the fixture sets (test_roundtrip.cpp).
  // (Names without commas: Catch reads a comma in a test spec as "or".)
  for (std::string name : {"several libraries share one container and identical weights are stored once",
                           "every fixture library goes build -> verify -> unpack byte for byte"}) {
    DYNAMIC_SECTION(name) {
      CHECK(run_self(name, {missing, bin}) == kSkipReturnCode);
      const int in_ci = run_self(name, {missing, bin, "CI=true"});
      CHECK(in_ci != 0);
      CHECK(in_ci != kSkipReturnCode);
    }
  }
}
