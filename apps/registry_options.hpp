// Options push, pull and inspect oci:// share: how to reach the registry and as whom.
#pragma once

#include "mpspack/registry/transfer.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace mpspack::cli {

struct RegistryArgs {
  bool plain_http = false;
  std::string username;
  bool password_stdin = false;
  unsigned parallel = 4;
  uint64_t upload_chunk_bytes = 64ull << 20;
};

void add_registry_options(CLI::App& app, RegistryArgs& a);

// The options, with the password read from stdin when asked for.
Result<registry::ClientOptions> client_options(const RegistryArgs& a);

// A layer as the JSON reports list it.
nlohmann::json layer_json(const registry::Layer& l);

}  // namespace mpspack::cli
