// The OCI image manifest that names an mpspack artifact's config and layers.
#pragma once

#include "client.hpp"
#include "mpspack/registry/artifact.hpp"

namespace mpspack::registry {

struct Descriptor {
  std::string media_type;
  std::string digest;
  uint64_t size = 0;
};

struct ArtifactManifest {
  std::string digest;  // of the manifest's bytes, as the registry stores it
  Descriptor config;
  std::vector<Descriptor> layers;
};

std::string manifest_json(const Descriptor& config, const std::vector<Layer>& layers);

// PUTs the manifest under the reference's tag (or digest); returns its digest.
Result<std::string> put_manifest(Client& client, HttpSession& session, const std::string& json);

// GETs the reference's manifest and refuses anything but an OCI image manifest whose config is mpspack's.
Result<ArtifactManifest> get_manifest(Client& client, HttpSession& session);

// The layers a config lists must be the manifest's, in the same order.
Status check_config_matches(const Client& client, const ArtifactManifest& m, const ArtifactConfig& config);

}  // namespace mpspack::registry
