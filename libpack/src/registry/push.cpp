// push: upload the blobs the registry lacks, then the manifest that names them all.
#include "referrers.hpp"
#include "blobs.hpp"
#include "oci_manifest.hpp"
#include "mpspack/format/hash.hpp"
#include "parallel_transfers.hpp"

#include <map>
#include <set>

namespace mpspack::registry {
namespace {

struct Blob {
  std::string digest;
  std::span<const uint8_t> bytes;
  bool sent = false;
  uint64_t resumed = 0;  // of those sent, the bytes an earlier run had uploaded
};

// Each distinct blob once, the config first: identical constants in one container are one blob. `total` is
// the bytes of the layer blobs, for the progress.
std::vector<Blob> distinct_blobs(const format::Container& c, const std::vector<Layer>& layers, const Descriptor& config,
                                 std::span<const uint8_t> config_bytes, uint64_t& total) {
  std::vector<Blob> blobs{{config.digest, config_bytes}};
  std::set<std::string> seen{config.digest};
  total = 0;
  for (const auto& l : layers)
    if (seen.insert(l.digest).second) {
      blobs.push_back({l.digest, {c.file().data() + l.offset, l.size}});
      total += l.size;
    }
  return blobs;
}

// Uploads the blobs the registry lacks, in parallel; a blob already there counts as done.
Status upload_missing(Client& client, std::vector<Blob>& blobs, const ClientOptions& options,
                      const TransferProgress& progress, uint64_t total) {
  SharedProgress shared(progress, total);
  return for_each_parallel(blobs.size(), options.parallel, [&](HttpSession& session, size_t i) -> Status {
    Blob& b = blobs[i];
    MPK_TRY(bool present, blob_exists(client, session, b.digest));
    if (present) {
      forget_upload(client, b.digest);
      shared.add(b.bytes.size());
      return {};
    }
    b.sent = true;
    MPK_TRY(b.resumed, upload_blob(client, session, b.digest, b.bytes, options.upload_chunk_bytes,
                                   [&](uint64_t n) { shared.add(n); }));
    return {};
  });
}

// Per layer: sent, resumed or skipped. A blob sent once counts once; its repeats in the same container were
// not sent again.
void tally_layers(PushReport& report, const std::vector<Layer>& layers, const std::vector<Blob>& blobs) {
  std::map<std::string, uint64_t> sent;  // digest -> bytes resumed
  std::set<std::string> counted;
  for (const auto& b : blobs)
    if (b.sent) sent[b.digest] = b.resumed;
  for (const auto& l : layers) {
    const auto was_sent = sent.find(l.digest);
    const bool first = counted.insert(l.digest).second;
    report.layers.push_back({l, was_sent != sent.end() && first});
    if (was_sent == sent.end() || !first) {
      report.bytes_skipped += l.size;
      continue;
    }
    report.bytes_resumed += was_sent->second;
    report.bytes_sent += l.size - was_sent->second;
  }
}

}  // namespace

Result<PushReport> push(const format::Container& c, const Reference& ref, const ClientOptions& options,
                        const TransferProgress& progress) {
  Client client(ref, options, "pull,push");
  std::vector<Layer> layers = plan_layers(c);
  digest_layers(c, layers, options.parallel);
  const std::string config = config_json(c.file().size(), layers);
  const auto config_bytes = std::span(reinterpret_cast<const uint8_t*>(config.data()), config.size());
  const Descriptor config_descriptor{kConfigMediaType, "sha256:" + format::sha256_hex(config_bytes), config.size()};

  uint64_t total = 0;
  std::vector<Blob> blobs = distinct_blobs(c, layers, config_descriptor, config_bytes, total);
  MPK_CHECK(upload_missing(client, blobs, options, progress, total));
  // The manifest last: a registry accepts it only once every blob it names is there.
  HttpSession session;
  PushReport report;
  const std::string manifest = manifest_json(config_descriptor, layers);
  MPK_TRY(report.manifest_digest, put_manifest(client, session, manifest));
  report.manifest_size = manifest.size();
  report.reference = ref.to_string();
  report.config_digest = config_descriptor.digest;
  tally_layers(report, layers, blobs);
  return report;
}

Result<std::string> push_signature(const Reference& ref, const std::string& manifest_digest, uint64_t manifest_size,
                                   std::string_view envelope, const ClientOptions& options) {
  Client client(ref, options, "pull,push");
  HttpSession session;
  return attach_signature(client, session, Descriptor{kManifestMediaType, manifest_digest, manifest_size}, envelope);
}

}  // namespace mpspack::registry
