// The fixture cases under ../shared/fixtures/aoti-2.11, as the tests walk them.
#pragma once

#include "fixtures.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace mpspack::test {

struct FixtureCase {
  std::string set;   // "rebuilt-bookworm" or "torch-built"
  std::string name;  // folder name, e.g. "cpu_mlp_blob"
  std::filesystem::path dir;
  bool blob() const { return std::filesystem::exists(dir / "weights.blob"); }
  std::filesystem::path so() const { return dir / "model.so"; }
};

// Every case folder that exists (empty when ../shared is missing: callers then skip visibly).
inline std::vector<FixtureCase> fixture_cases() {
  std::vector<FixtureCase> cases;
  for (std::string set : {"rebuilt-bookworm", "torch-built"}) {
    auto root = fixtures_dir() / set;
    if (!std::filesystem::is_directory(root)) continue;
    std::vector<std::filesystem::path> dirs;
    for (const auto& e : std::filesystem::directory_iterator(root))
      if (e.is_directory()) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) cases.push_back({set, d.filename().string(), d});
  }
  return cases;
}

}  // namespace mpspack::test
