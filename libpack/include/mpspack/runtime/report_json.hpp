// The JSON reports of `mpspack run --json`, `run --bench --json` and `inspect --json` of a container, built in the
// runtime so that the CLI and the C API (mpspack.h) give the same documents (docs/CLI.md, ## run, lists their keys).
// Needs nlohmann/json's header where it is included; print them with json_text() (mpspack/json_report.hpp).
#pragma once

#include "mpspack/elf/elf_file.hpp"
#include "mpspack/json_report.hpp"
#include "mpspack/runtime/bench.hpp"
#include "mpspack/runtime/verify.hpp"

#include <map>
#include <string>
#include <vector>

namespace mpspack::runtime {

nlohmann::json run_json(const VerifyReport& r);

// The bench report's schema_version: 2 added latency_ms_repetitions (each repetition's statistics), which
// `mpspack report --baseline` needs to tell a slowdown from noise.
inline constexpr int kBenchSchemaVersion = 2;

// export_times: the file the iteration times went to (--export-times), "" for none.
nlohmann::json bench_json(const BenchReport& r, const std::string& export_times = {});

// The load phases by the names both reports give them, with the two sums load_total_ms and
// load_to_first_result_ms (the bench report's "load_ms").
nlohmann::json load_json(const PhaseTimings& t);

// "p99.9" for 99.9: the key an extra percentile has in the bench report.
std::string percentile_key(double p);

// --- `mpspack inspect --json` of a container, and the parts `inspect` shares with its reports of a raw library and
// a .pt2 package.

// The symbol-version families `inspect` reports the highest needed version of.
struct VersionFamily {
  const char* key;      // in JSON
  const char* prefix;   // of the version names
  const char* library;  // in text
};
inline constexpr VersionFamily kVersionFamilies[] = {{"glibc", "GLIBC_", "glibc"},
                                                     {"glibcxx", "GLIBCXX_", "libstdc++"},
                                                     {"cxxabi", "CXXABI_", "libstdc++"},
                                                     {"gcc", "GCC_", "libgcc_s"}};

// Each dtype's constants: how many, their elements and bytes.
struct DtypeTotals {
  uint64_t count = 0, parameters = 0, bytes = 0;
};
std::map<std::string, DtypeTotals> totals_by_dtype(const std::vector<ConstantInfo>& constants);

nlohmann::json region_json(const ConstantsRegion& r);
nlohmann::json constants_json(const std::vector<ConstantInfo>& constants);
nlohmann::json totals_json(const std::vector<ConstantInfo>& constants);  // count, parameters, bytes by dtype
// The symbol versions a library needs (DT_VERNEED): the highest of glibc, libstdc++ (GLIBCXX_, CXXABI_) and
// libgcc_s (GCC_), and every version by file.
nlohmann::json version_needs_json(const std::vector<elf::VersionNeed>& needs);
// A stored library's version needs, read from its ELF tables in the container (the manifest does not record them).
Result<std::vector<elf::VersionNeed>> stored_version_needs(const format::Container& c, const LibraryInfo& l);
// The container: header, producer, sources, segments, libraries (with the shim functions this build lacks and, with
// `library_bytes`, their version needs; false for a registry's metadata alone), weights and examples.
nlohmann::json container_json(const format::Container& c, bool library_bytes = true);

}  // namespace mpspack::runtime
