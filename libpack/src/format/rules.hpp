// Every rule of docs/FORMAT.md has an id (H1..H11 header, M1..M6 metadata block, S1..S6 segments,
// L1..L8 libraries, W1..W2 weights, E1..E2 examples); a refusal names the rule that fired, so a
// message can be looked up in the spec and a test can assert which rule caught its input.
#pragma once

#include "mpspack/result.hpp"

#include <string_view>

namespace mpspack::format {

// "<what>: rule <id>: <message>", of kind Corrupt unless given.
inline Error rule_error(std::string_view what, std::string_view rule, std::string_view message,
                        Error::Kind kind = Error::Kind::Corrupt) {
  return Error{kind, fmt::format("{}: rule {}: {}", what, rule, message)};
}

}  // namespace mpspack::format
