// pull: the manifest, the config that places each layer, then the layers in parallel into a temp file that is
// renamed into place only when every layer arrived whole and matched its digest (and, with a key, the file
// verified against a signature attached to the manifest).
#include "mpspack/file.hpp"
#include "mpspack/sign/signature.hpp"
#include "referrers.hpp"
#include "remote_artifact.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mpspack::registry {
namespace {

// The envelopes attached to the manifest that name `key` among their signers; an error when there are none.
Result<std::vector<std::string>> signatures_by(Client& client, HttpSession& session, const std::string& digest,
                                               const sign::PublicKey& key) {
  const std::string ref = client.reference().to_string();
  MPK_TRY(auto envelopes, fetch_signatures(client, session, digest));
  if (envelopes.empty())
    return make_error(Error::Kind::Corrupt, "{}: no signature is attached to {} (push --sign attaches one)", ref,
                      digest);
  std::vector<std::string> mine;
  std::string others;
  for (auto& e : envelopes) {
    auto summary = sign::summarize(std::span(reinterpret_cast<const uint8_t*>(e.data()), e.size()), ref);
    if (!summary.ok()) continue;
    bool by_key = false;
    for (const auto& id : summary->key_ids) {
      by_key = by_key || id == key.key_id();
      others += (others.empty() ? "" : ", ") + (id.empty() ? std::string("(none)") : id);
    }
    if (by_key) mine.push_back(std::move(e));
  }
  if (mine.empty())
    return make_error(Error::Kind::Corrupt, "{}: not signed by this key (key id {}); signed by key id {}", ref,
                      key.key_id(), others.empty() ? "none" : others);
  return mine;
}

// The pulled bytes in the temp file, as a container, checked against one of the envelopes.
Result<std::string> check_pulled(const AtomicWriter& writer, uint64_t file_size, const std::string& ref,
                                 const std::vector<std::string>& envelopes, const sign::PublicKey& key) {
  // The writer leaves the trailing zeros as a hole until commit; the container's size is set here to map it.
  if (::ftruncate(writer.fd(), off_t(file_size)) != 0)
    return make_error(Error::Kind::Io, "{}: cannot size the pulled file: {}", ref, std::strerror(errno));
  const int fd = ::dup(writer.fd());
  if (fd < 0) return make_error(Error::Kind::Io, "{}: cannot map the pulled file: {}", ref, std::strerror(errno));
  MPK_TRY(MappedFile file, MappedFile::from_fd(fd, ref));
  MPK_TRY(format::Container c, format::Container::parse(std::move(file)));
  Error last;
  for (const auto& e : envelopes) {
    auto v =
        sign::verify(c, std::span(reinterpret_cast<const uint8_t*>(e.data()), e.size()), ref + " (its signature)", key);
    if (v.ok()) return v->key_id;
    last = v.error();
  }
  return last;
}

}  // namespace

Result<PullReport> pull(const Reference& ref, const std::filesystem::path& output, const ClientOptions& options,
                        const TransferProgress& progress, const sign::PublicKey* key) {
  Client client(ref, options, "pull");
  HttpSession session;
  MPK_TRY(RemoteArtifact artifact, open_artifact(client, session));
  // The signatures before the layers: an unsigned container is refused before its bytes are fetched.
  std::vector<std::string> envelopes;
  if (key) { MPK_TRY(envelopes, signatures_by(client, session, artifact.manifest.digest, *key)); }
  MPK_TRY(AtomicWriter writer, AtomicWriter::create(output));
  MPK_CHECK(writer.write_zeros(artifact.config.file_size));  // the gaps between layers are zero: holes
  MPK_TRY(uint64_t fetched,
          fetch_layers(
              client, artifact.config.layers, options.parallel,
              [&](uint64_t at, const uint8_t* data, size_t n) { return writer.pwrite(at, data, n); }, progress));
  std::string signed_by;
  if (key) { MPK_TRY(signed_by, check_pulled(writer, artifact.config.file_size, ref.to_string(), envelopes, *key)); }
  MPK_CHECK(writer.commit());
  return PullReport{
      ref.to_string(), artifact.manifest.digest, artifact.config.file_size, artifact.config.layers, fetched, signed_by};
}

}  // namespace mpspack::registry
