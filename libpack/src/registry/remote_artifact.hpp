// An mpspack artifact in a registry: its manifest and config, and fetching some or all of its layers.
#pragma once

#include "blobs.hpp"
#include "oci_manifest.hpp"

namespace mpspack::registry {

struct RemoteArtifact {
  ArtifactManifest manifest;
  ArtifactConfig config;
};

// The manifest (refused unless it is mpspack's) and the config it names, checked against each other.
Result<RemoteArtifact> open_artifact(Client& client, HttpSession& session);

// Fetches `layers` on `parallel` threads, each checked against its digest, into `write(file offset, bytes)`
// (called from several threads at once, never for overlapping bytes). Returns the bytes fetched.
Result<uint64_t> fetch_layers(Client& client, const std::vector<Layer>& layers, unsigned parallel,
                              const std::function<Status(uint64_t, const uint8_t*, size_t)>& write,
                              const TransferProgress& progress);

// A sparse scratch file of `size` bytes holding only `layers` (the rest zero), mapped as a container named
// `name`: what inspect oci:// and pull --library read the metadata and the chosen segments from. Placed in
// `folder` (an unnamed file, gone when closed), in memory when `folder` is empty.
Result<format::Container> fetch_into_scratch(Client& client, const RemoteArtifact& artifact,
                                             const std::vector<Layer>& layers, const std::filesystem::path& folder,
                                             unsigned parallel, const TransferProgress& progress);

}  // namespace mpspack::registry
