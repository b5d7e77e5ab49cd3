// Where the shared fixtures are, and a visible skip when one is missing.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

namespace mpspack::test {

inline std::filesystem::path shared_dir() { return MPSPACK_SHARED_DIR; }
inline std::filesystem::path fixtures_dir() { return shared_dir() / "fixtures" / "aoti-2.11"; }
inline std::filesystem::path binary_dir() { return MPSPACK_BINARY_DIR; }
inline std::filesystem::path source_dir() { return MPSPACK_SOURCE_DIR; }

}  // namespace mpspack::test

// Skips the rest of the test case, saying why, when `path` does not exist.
#define MPK_REQUIRE_FIXTURE(path)                                                   \
  do {                                                                              \
    if (!std::filesystem::exists(path)) {                                           \
      WARN("skipped: fixture " << (path).string() << " is missing");                \
      return;                                                                       \
    }                                                                               \
  } while (0)
