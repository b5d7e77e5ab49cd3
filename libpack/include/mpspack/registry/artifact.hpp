// How a container is laid out as an OCI artifact (docs/CLI.md, "Registry artifacts"): the file cut into layers,
// each a byte range whose digest is the SHA-256 of its bytes. Every byte outside the layers is zero.
#pragma once

#include "mpspack/format/container.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mpspack::registry {

inline constexpr const char* kManifestMediaType = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* kConfigMediaType = "application/vnd.mpspack.config.v1+json";
inline constexpr const char* kLayerMediaType = "application/vnd.mpspack.layer.v1";

// Weights whose constants are not known, other segments and non-zero filler are cut into pieces this large.
inline constexpr uint64_t kChunkBytes = 64ull << 20;
// In a weights segment of more than kGroupConstantsAbove constants, runs of neighbours smaller than
// kSmallConstantBytes travel as one layer (a request each would cost more than their bytes); every other constant
// is a layer of its own, so the same tensor is the same blob in every container.
inline constexpr uint64_t kSmallConstantBytes = 4096;
inline constexpr size_t kGroupConstantsAbove = 256;

struct Layer {
  std::string kind;     // "header" (header + metadata), "library", "constant", "constants" (a run of small
                        // ones), "chunk" (a piece of a segment), "filler" (non-zero bytes outside the above)
  uint64_t offset = 0;  // in the container file
  uint64_t size = 0;
  int64_t segment = -1;  // the segment it lies in; -1 for the header and filler
  std::string name;      // library, constant or segment name; empty for the header
  std::string digest;    // "sha256:<hex>", filled in by digest_layers() or read from a config
};

// The layers of `c`, in file order, without digests.
std::vector<Layer> plan_layers(const format::Container& c);

// Fills in each layer's digest, hashing on `threads` threads.
void digest_layers(const format::Container& c, std::vector<Layer>& layers, unsigned threads);

// The config blob: {schema_version, file_size, layers[{digest, offset, size, kind, segment, name}]}.
std::string config_json(uint64_t file_size, const std::vector<Layer>& layers);

struct ArtifactConfig {
  uint64_t file_size = 0;
  std::vector<Layer> layers;  // in file order, checked not to overlap and to lie inside the file
};

// Parses and checks a config blob; `what` names it in errors.
Result<ArtifactConfig> parse_config(std::string_view json, std::string_view what);

}  // namespace mpspack::registry
