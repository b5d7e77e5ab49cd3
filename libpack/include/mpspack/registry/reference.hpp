// A reference to an artifact in an OCI registry: host[:port]/repository[:tag] or host[:port]/repository@sha256:HEX.
#pragma once

#include "mpspack/result.hpp"

#include <string>
#include <string_view>

namespace mpspack::registry {

struct Reference {
  std::string host;        // "registry.example.com:5000": the first component, always named (no default registry)
  std::string repository;  // "team/model"
  std::string tag;         // "v1"; "latest" when neither a tag nor a digest is given
  std::string digest;      // "sha256:<64 hex>" when given; then it names the manifest instead of the tag

  // What the manifest URL names: the digest when there is one, else the tag.
  const std::string& manifest_name() const { return digest.empty() ? tag : digest; }
  std::string to_string() const;
};

// Parses with the rules of the OCI distribution spec (lowercase repository components, tags of at most 128
// word characters, dots and dashes); the first component must look like a host (a '.', a ':' or "localhost").
Result<Reference> parse_reference(std::string_view text);

}  // namespace mpspack::registry
