#include "registry_options.hpp"

#include "cli.hpp"

#include <nlohmann/json.hpp>

#include <iostream>

namespace mpspack::cli {

void add_registry_options(CLI::App& app, RegistryArgs& a) {
  app.add_flag("--plain-http", a.plain_http, "Talk HTTP, not HTTPS (a registry on this machine or a test network)");
  CLI::Option* username =
      app.add_option("--username", a.username,
                     "User name for the registry (default: the credentials docker login saved for its host)")
          ->check(non_empty());
  app.add_flag("--password-stdin", a.password_stdin, "Read the password (or token) for --username from stdin")
      ->needs(username);
  app.add_option("--parallel", a.parallel, "Layers transferred at once (default 4)")->check(whole_number(1, 64));
  // Small chunks make the tests take the chunked upload path with small containers.
  app.add_option("--upload-chunk-bytes", a.upload_chunk_bytes, "Upload blobs above this size in PATCH chunks of it")
      ->check(whole_number(uint64_t(1) << 12, uint64_t(1) << 32))
      ->group(kHiddenGroup);
}

Result<registry::ClientOptions> client_options(const RegistryArgs& a) {
  registry::ClientOptions o;
  o.plain_http = a.plain_http;
  o.parallel = a.parallel;
  o.upload_chunk_bytes = a.upload_chunk_bytes;
  if (!a.username.empty()) {
    o.username = a.username;
    std::string password;
    if (a.password_stdin) std::getline(std::cin, password);
    if (!password.empty() && password.back() == '\r') password.pop_back();
    o.password = password;
  }
  return o;
}

nlohmann::json layer_json(const registry::Layer& l) {
  nlohmann::json j = {{"digest", l.digest}, {"kind", l.kind}, {"offset", l.offset}, {"size", l.size}};
  if (l.segment >= 0) j["segment"] = l.segment;
  if (!l.name.empty()) j["name"] = l.name;
  return j;
}

}  // namespace mpspack::cli
