// Fields of JSON that came from outside (a signature envelope, a registry's answer, a report file). nlohmann's
// value() throws type_error when the field is there with another type; these give the fallback instead, so that a
// hostile document is refused with a message, never an uncaught exception.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace mpspack {

// j[key] when `j` is an object and the field is a string; "" otherwise.
inline std::string string_field(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return {};
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// j[key] when `j` is an object and the field is an integer; `fallback` otherwise.
inline int64_t integer_field(const nlohmann::json& j, std::string_view key, int64_t fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

}  // namespace mpspack
