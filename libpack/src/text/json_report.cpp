// The JSON reports shared by the CLI and the C API (mpspack/json_report.hpp): UTF-8 repair, and verify's report.
#include "mpspack/json_report.hpp"

#include "mpspack/text.hpp"

#include <fmt/format.h>

namespace mpspack {
namespace {

// RFC 6901: '~' and '/' in a member name are escaped as ~0 and ~1.
std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// Our own documents, a few levels deep: the recursion is bounded by what the commands build, never by input.
nlohmann::json replaced_strings(const nlohmann::json& j, const std::string& pointer, nlohmann::json& invalid) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (text::is_valid_utf8(s)) return j;
    invalid.push_back({{"pointer", pointer}, {"hex", text::hex_bytes(s)}});
    return text::utf8_with_replacements(s);
  }
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < j.size(); ++i)
      out.push_back(replaced_strings(j[i], pointer + "/" + std::to_string(i), invalid));
    return out;
  }
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : j.items()) {
      // Member names are mpspack's own, or dtype names: replaced, not recorded.
      const std::string name = text::utf8_with_replacements(key);
      out[name] = replaced_strings(value, pointer + "/" + pointer_token(name), invalid);
    }
    return out;
  }
  return j;
}

}  // namespace

nlohmann::json utf8_json(const nlohmann::json& j) {
  nlohmann::json invalid = nlohmann::json::array();
  nlohmann::json out = replaced_strings(j, "", invalid);
  if (!invalid.empty() && out.is_object()) out["invalid_utf8"] = std::move(invalid);
  return out;
}

std::string json_text(const nlohmann::json& j) { return utf8_json(j).dump(2) + "\n"; }

nlohmann::json verify_json(const format::Container& c, const format::VerifyReport& report) {
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : report.segments) {
    const auto& info = c.manifest().segments[s.index];
    segs.push_back({{"index", s.index},
                    {"name", info.name},
                    {"ok", s.ok},
                    {"xxh3", fmt::format("{:016x}", info.xxh3)},
                    {"computed_xxh3", fmt::format("{:016x}", s.computed_xxh3)}});
  }
  return {{"schema_version", 1},
          {"file", c.name()},
          {"ok", report.ok()},
          {"header_checksum", true},
          {"bytes_checked", report.bytes_checked},
          {"segments", segs},
          {"problems", report.problems}};
}

nlohmann::json verify_failure_json(const std::string& file, const std::string& problem) {
  return {{"schema_version", 1}, {"file", file}, {"ok", false}, {"problems", {problem}}};
}

}  // namespace mpspack
