// push and pull: a container to and from an OCI registry (the layout is artifact.hpp's).
#pragma once

#include "mpspack/format/container.hpp"
#include "mpspack/registry/artifact.hpp"
#include "mpspack/registry/reference.hpp"
#include "mpspack/sign/keys.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mpspack::registry {

struct ClientOptions {
  bool plain_http = false;  // http:// instead of https:// (a registry on this machine)
  // Credentials; when empty, those docker login saved for the host (~/.docker/config.json) are used, if any.
  std::optional<std::string> username;
  std::optional<std::string> password;
  unsigned parallel = 4;  // transfers at once
  // Blobs larger than this go up in PATCH chunks of this size (no single request holds GiBs).
  uint64_t upload_chunk_bytes = 64ull << 20;
};

// Bytes done out of total across all layers, and the layer that moved.
using TransferProgress = format::Progress;

struct LayerTransfer {
  Layer layer;
  bool sent = false;  // push: uploaded (else the registry had it); pull: always fetched
};

struct PushReport {
  std::string reference;
  std::string manifest_digest;
  uint64_t manifest_size = 0;
  std::string config_digest;
  std::vector<LayerTransfer> layers;
  // The layers' bytes, each counted once: sent by this run, uploaded by an earlier run that died midway and
  // resumed by this one (blobs.hpp), or already in the registry.
  uint64_t bytes_sent = 0;
  uint64_t bytes_resumed = 0;
  uint64_t bytes_skipped = 0;
};

Result<PushReport> push(const format::Container& c, const Reference& ref, const ClientOptions& options,
                        const TransferProgress& progress = {});

// Attaches a signature (the envelope sign::sign() made of the container pushed as `manifest_digest`) to that
// manifest as an OCI referrer (docs/SIGNING.md, "In a registry"). Returns the signature manifest's digest.
Result<std::string> push_signature(const Reference& ref, const std::string& manifest_digest, uint64_t manifest_size,
                                   std::string_view envelope, const ClientOptions& options);

struct PullReport {
  std::string reference;
  std::string manifest_digest;
  uint64_t file_size = 0;
  std::vector<Layer> layers;
  uint64_t bytes_fetched = 0;
  std::string signed_by;  // with a key: its key id, once the signature verified
};

// Rebuilds the container at `output` (atomically: nothing is left there on failure), checking each layer's
// SHA-256 as it streams in. With `key`, the container must carry a signature by that key among its referrers,
// fetched before the layers, and the rebuilt file must verify against it before it is renamed into place.
Result<PullReport> pull(const Reference& ref, const std::filesystem::path& output, const ClientOptions& options,
                        const TransferProgress& progress = {}, const sign::PublicKey* key = nullptr);

// pull --library: a container of the named library alone, with its weights, cubins and examples (pack/subset.hpp),
// fetching only the layers of the segments it needs.
Result<PullReport> pull_library(const Reference& ref, std::string_view library, const std::filesystem::path& output,
                                const ClientOptions& options, const TransferProgress& progress = {});

// The container's header and metadata, fetched alone (its segments read as zero): what inspect oci:// shows.
Result<format::Container> inspect_remote(const Reference& ref, const ClientOptions& options);

}  // namespace mpspack::registry
