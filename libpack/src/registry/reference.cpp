#include "mpspack/registry/reference.hpp"

#include <regex>

namespace mpspack::registry {
namespace {

const std::regex& repository_pattern() {
  static const std::regex re("[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*");
  return re;
}
const std::regex& tag_pattern() {
  static const std::regex re("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
  return re;
}
const std::regex& digest_pattern() {
  static const std::regex re("sha256:[a-f0-9]{64}");
  return re;
}
const std::regex& host_pattern() {
  static const std::regex re("[A-Za-z0-9.-]+(?::[0-9]{1,5})?|\\[[0-9A-Fa-f:.]+\\](?::[0-9]{1,5})?");
  return re;
}

Error bad(std::string_view text, std::string_view why) {
  return make_error(Error::Kind::Invalid, "{}: not a registry reference: {}", text, why);
}

}  // namespace

std::string Reference::to_string() const {
  std::string s = host + "/" + repository;
  return digest.empty() ? s + ":" + tag : s + "@" + digest;
}

Result<Reference> parse_reference(std::string_view text) {
  Reference r;
  std::string rest(text);
  const auto slash = rest.find('/');
  if (slash == std::string::npos) return bad(text, "expected host[:port]/repository[:tag|@sha256:...]");
  r.host = rest.substr(0, slash);
  if (r.host.find_first_of(".:[") == std::string::npos && r.host != "localhost")
    return bad(text, "the first component must name the registry host (with a '.', a port or 'localhost')");
  if (!std::regex_match(r.host, host_pattern())) return bad(text, "the host is not a host name[:port]");
  rest = rest.substr(slash + 1);
  if (const auto at = rest.find('@'); at != std::string::npos) {
    r.digest = rest.substr(at + 1);
    rest = rest.substr(0, at);
    if (!std::regex_match(r.digest, digest_pattern())) return bad(text, "the digest is not sha256:<64 lowercase hex>");
  }
  // A ':' after the last '/' starts the tag.
  if (const auto colon = rest.rfind(':'); colon != std::string::npos && rest.find('/', colon) == std::string::npos) {
    r.tag = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (!std::regex_match(r.tag, tag_pattern())) return bad(text, "the tag is not 1-128 word characters, '.' or '-'");
  }
  if (r.tag.empty() && r.digest.empty()) r.tag = "latest";
  r.repository = rest;
  if (r.repository.empty() || r.repository.size() > 255 || !std::regex_match(r.repository, repository_pattern()))
    return bad(text, "the repository must be lowercase letters, digits and separators ('.', '_', '-', '/')");
  return r;
}

}  // namespace mpspack::registry
