// The pieces of `inspect`'s report that a container, a raw library and a .pt2 package share.
#pragma once

#include "mpspack/aoti/library.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/runtime/report_json.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mpspack::cli {

// The JSON parts are the library's (mpspack/runtime/report_json.hpp), which the C API's reports share.
using runtime::constants_json;
using runtime::container_json;
using runtime::kVersionFamilies;
using runtime::region_json;
using runtime::stored_version_needs;
using runtime::totals_by_dtype;
using runtime::totals_json;
using runtime::version_needs_json;
using runtime::VersionFamily;

void print_constants(const std::vector<ConstantInfo>& constants);
// "GLIBC_2.38 (glibc), GLIBCXX_3.4.30 (libstdc++), ..." or "(none)".
std::string version_needs_text(const std::vector<elf::VersionNeed>& needs);
nlohmann::json library_json(const std::string& file, uint64_t size, const aoti::LibraryAnalysis& a);
void print_library(const std::string& file, uint64_t size, const aoti::LibraryAnalysis& a);

// `inspect FILE.pt2`: its models, each library's analysis, its weights and its constants table by FQN.
int inspect_pt2(const std::string& file, bool json);

}  // namespace mpspack::cli
