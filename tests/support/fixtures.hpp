// Where the shared fixtures are, and what a test does when one is missing: under CI=true (what CI sets) it
// fails, since a CI run without ../shared tests nothing; elsewhere it stops the test case with a warning
// and the test executable exits with kSkipReturnCode, which CTest reports as "Skipped" (SKIP_RETURN_CODE,
// tests/CMakeLists.txt): Catch2 v2 has no skip of its own, and a green "Passed" would hide the gap.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace mpspack::test {

// MPSPACK_SHARED_DIR in the environment overrides the configured folder (test_fixture_skip.cpp points it
// at a folder that does not exist).
inline std::filesystem::path shared_dir() {
  const char* env = std::getenv("MPSPACK_SHARED_DIR");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env) : std::filesystem::path(MPSPACK_SHARED_DIR);
}
inline std::filesystem::path fixtures_dir() { return shared_dir() / "fixtures" / "aoti-2.11"; }
inline std::filesystem::path binary_dir() { return MPSPACK_BINARY_DIR; }
inline std::filesystem::path source_dir() { return MPSPACK_SOURCE_DIR; }

// The exit code of a test executable that skipped a case for a missing fixture and failed none (Automake's).
inline constexpr int kSkipReturnCode = 77;

inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// Set when a test case stopped for a missing fixture (test_main.cpp turns it into kSkipReturnCode).
inline bool& fixture_was_missing() {
  static bool missing = false;
  return missing;
}

}  // namespace mpspack::test

// Stops the test case because a fixture is missing: a failure under CI=true, else a visible skip.
#define MPK_SKIP_FOR_MISSING_FIXTURE(why)                                                   \
  do {                                                                                      \
    if (mpspack::test::running_in_ci()) FAIL("CI=true, and a fixture is missing: " << why); \
    WARN("skipped: " << why);                                                               \
    mpspack::test::fixture_was_missing() = true;                                            \
    return;                                                                                 \
  } while (0)

// Skips (or, in CI, fails) the rest of the test case when `path` does not exist.
#define MPK_REQUIRE_FIXTURE(path)                                                                                     \
  do {                                                                                                                \
    if (!std::filesystem::exists(path)) MPK_SKIP_FOR_MISSING_FIXTURE("fixture " << (path).string() << " is missing"); \
  } while (0)
