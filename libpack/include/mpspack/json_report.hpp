// The JSON reports mpspack writes (`inspect --json`, `verify --json`, `run --json`, `run --bench --json`), built in
// the library so that the CLI and the C API (mpspack.h) give the same documents. Needs nlohmann/json's header
// (Debian's nlohmann3-json-dev) where it is included.
#pragma once

#include "mpspack/format/container.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace mpspack {

// `j` with every string valid UTF-8, as JSON requires: a byte that is not part of well-formed UTF-8 becomes
// U+FFFD, and a top-level "invalid_utf8" array gives each such string's JSON Pointer and exact bytes in hex
// (docs/CLI.md, "Names in output"). Every JSON document mpspack prints goes through it.
nlohmann::json utf8_json(const nlohmann::json& j);

// The document as the CLI prints it: utf8_json, indented by 2, with a final newline.
std::string json_text(const nlohmann::json& j);

// `mpspack verify --json` of an open container and its verify() report.
nlohmann::json verify_json(const format::Container& c, const format::VerifyReport& report);
// ... and of a container that did not open (`problem`: the open error).
nlohmann::json verify_failure_json(const std::string& file, const std::string& problem);

}  // namespace mpspack
