// Pulls that start from the metadata layer alone: inspect oci:// (nothing more) and pull --library (then only
// the layers of the segments that library needs, written as a container of that library alone).
#include "mpspack/pack/subset.hpp"
#include "remote_artifact.hpp"

namespace mpspack::registry {
namespace {

Result<Layer> header_layer(const Client& client, const ArtifactConfig& config) {
  if (config.layers.empty() || config.layers[0].kind != "header" || config.layers[0].offset != 0)
    return make_error(Error::Kind::Corrupt, "{}: the first layer is not the container's header and metadata",
                      client.reference().to_string());
  return config.layers[0];
}

}  // namespace

Result<format::Container> inspect_remote(const Reference& ref, const ClientOptions& options) {
  Client client(ref, options, "pull");
  HttpSession session;
  MPK_TRY(RemoteArtifact artifact, open_artifact(client, session));
  MPK_TRY(Layer header, header_layer(client, artifact.config));
  return fetch_into_scratch(client, artifact, {header}, {}, 1, {});
}

Result<PullReport> pull_library(const Reference& ref, std::string_view library, const std::filesystem::path& output,
                                const ClientOptions& options, const TransferProgress& progress) {
  Client client(ref, options, "pull");
  HttpSession session;
  MPK_TRY(RemoteArtifact artifact, open_artifact(client, session));
  MPK_TRY(Layer header, header_layer(client, artifact.config));
  MPK_TRY(format::Container metadata, fetch_into_scratch(client, artifact, {header}, {}, 1, {}));
  MPK_TRY(uint32_t index, pack::find_library(metadata.manifest(), library, ref.to_string()));
  const std::set<uint32_t> wanted = pack::library_segments(metadata.manifest(), index);
  std::vector<Layer> chosen{header};
  for (const auto& l : artifact.config.layers)
    if (l.segment >= 0 && wanted.count(uint32_t(l.segment))) chosen.push_back(l);
  const auto folder = output.has_parent_path() ? output.parent_path() : std::filesystem::path(".");
  MPK_TRY(format::Container part, fetch_into_scratch(client, artifact, chosen, folder, options.parallel, progress));
  MPK_TRY(Manifest written, pack::write_library_subset(part, index, output));
  uint64_t fetched = 0;
  for (const auto& l : chosen) fetched += l.size;
  return PullReport{ref.to_string(), artifact.manifest.digest, std::filesystem::file_size(output), chosen, fetched, ""};
}

}  // namespace mpspack::registry
