// The pieces of `inspect`'s report that a container, a raw library and a .pt2 package share.
#pragma once

#include "mpspack/aoti/library.hpp"
#include "mpspack/manifest.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mpspack::cli {

nlohmann::json constants_json(const std::vector<ConstantInfo>& constants);
nlohmann::json totals_json(const std::vector<ConstantInfo>& constants);  // count, parameters, bytes by dtype
void print_constants(const std::vector<ConstantInfo>& constants);
// The symbol versions a library needs (DT_VERNEED): the highest of glibc, libstdc++ (GLIBCXX_, CXXABI_) and
// libgcc_s (GCC_), and every version by file.
nlohmann::json version_needs_json(const std::vector<elf::VersionNeed>& needs);
// "GLIBC_2.38 (glibc), GLIBCXX_3.4.30 (libstdc++), ..." or "(none)".
std::string version_needs_text(const std::vector<elf::VersionNeed>& needs);
nlohmann::json library_json(const std::string& file, uint64_t size, const aoti::LibraryAnalysis& a);
void print_library(const std::string& file, uint64_t size, const aoti::LibraryAnalysis& a);

// `inspect FILE.pt2`: its models, each library's analysis, its weights and its constants table by FQN.
int inspect_pt2(const std::string& file, bool json);

}  // namespace mpspack::cli
