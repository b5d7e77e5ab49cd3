// Shared helpers for the ELF / AOTInductor tests: reading fixtures, listing every model.so.
#pragma once

#include "fixtures.hpp"

#include <mpspack/bytes.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace mpspack::test {

inline std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline ByteView view_of(const std::vector<uint8_t>& bytes, const std::string& name = "model.so") {
  return ByteView(std::span<const uint8_t>(bytes.data(), bytes.size()), name);
}

// Every fixture case folder that holds a model.so, under rebuilt-bookworm and torch-built.
inline std::vector<std::filesystem::path> all_fixture_libraries() {
  std::vector<std::filesystem::path> out;
  for (const char* set : {"rebuilt-bookworm", "torch-built"}) {
    auto dir = fixtures_dir() / set;
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (std::filesystem::exists(entry.path() / "model.so")) out.push_back(entry.path() / "model.so");
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "torch-built/cpu_mlp_mmap" for messages.
inline std::string case_name(const std::filesystem::path& so) {
  return so.parent_path().parent_path().filename().string() + "/" + so.parent_path().filename().string();
}

}  // namespace mpspack::test
