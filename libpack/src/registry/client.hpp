// Requests to one repository of a registry, authenticated as the registry asks (Basic or a Bearer token).
#pragma once

#include "http.hpp"
#include "mpspack/registry/reference.hpp"
#include "mpspack/registry/transfer.hpp"

#include <mutex>

namespace mpspack::registry {

class Client {
 public:
  // `actions`: what the token must allow ("pull" or "pull,push").
  Client(Reference ref, const ClientOptions& options, std::string actions);

  const Reference& reference() const { return ref_; }
  // scheme://host/v2/repository
  std::string repository_url() const;

  // Sends with the current authorization; on a 401 answers the challenge once and sends again. Thread-safe as
  // long as each thread brings its own session.
  Result<HttpResponse> send(HttpSession& session, HttpRequest request);

  // "<reference>: <what>: HTTP <status> <registry's error code and message>"
  Error http_error(const HttpResponse& r, std::string_view what) const;

 private:
  Status answer_challenge(HttpSession& session, const std::string& challenge);

  Reference ref_;
  ClientOptions options_;
  std::string actions_;
  std::mutex mutex_;
  std::string authorization_;  // "Authorization: ..." header, once known
};

// user:password for `host` from docker's config ($DOCKER_CONFIG/config.json or ~/.docker/config.json), if saved.
std::optional<std::pair<std::string, std::string>> docker_credentials(const std::string& host);

}  // namespace mpspack::registry
