// pull: the manifest, the config that places each layer, then the layers in parallel into a temp file that is
// renamed into place only when every layer arrived whole and matched its digest.
#include "mpspack/file.hpp"
#include "remote_artifact.hpp"

namespace mpspack::registry {

Result<PullReport> pull(const Reference& ref, const std::filesystem::path& output, const ClientOptions& options,
                        const TransferProgress& progress) {
  Client client(ref, options, "pull");
  HttpSession session;
  MPK_TRY(RemoteArtifact artifact, open_artifact(client, session));
  MPK_TRY(AtomicWriter writer, AtomicWriter::create(output));
  MPK_CHECK(writer.write_zeros(artifact.config.file_size));  // the gaps between layers are zero: holes
  MPK_TRY(uint64_t fetched,
          fetch_layers(client, artifact.config.layers, options.parallel,
                       [&](uint64_t at, const uint8_t* data, size_t n) { return writer.pwrite(at, data, n); },
                       progress));
  MPK_CHECK(writer.commit());
  return PullReport{ref.to_string(), artifact.manifest.digest, artifact.config.file_size, artifact.config.layers,
                    fetched};
}

}  // namespace mpspack::registry
