// push: upload the blobs the registry lacks, then the manifest that names them all.
#include "blobs.hpp"
#include "manifest.hpp"
#include "mpspack/format/hash.hpp"
#include "parallel.hpp"

#include <set>

namespace mpspack::registry {

Result<PushReport> push(const format::Container& c, const Reference& ref, const ClientOptions& options,
                        const TransferProgress& progress) {
  Client client(ref, options, "pull,push");
  std::vector<Layer> layers = plan_layers(c);
  digest_layers(c, layers, options.parallel);
  const std::string config = config_json(c.file().size(), layers);
  const auto config_bytes = std::span(reinterpret_cast<const uint8_t*>(config.data()), config.size());
  const Descriptor config_descriptor{kConfigMediaType, "sha256:" + format::sha256_hex(config_bytes), config.size()};

  // Each distinct blob once: identical constants in one container are one blob.
  struct Blob {
    std::string digest;
    std::span<const uint8_t> bytes;
    bool sent = false;
  };
  std::vector<Blob> blobs{{config_descriptor.digest, config_bytes}};
  std::set<std::string> seen{config_descriptor.digest};
  uint64_t total = 0;
  for (const auto& l : layers)
    if (seen.insert(l.digest).second) {
      blobs.push_back({l.digest, {c.file().data() + l.offset, l.size}});
      total += l.size;
    }
  SharedProgress shared(progress, total);
  MPK_CHECK(for_each_parallel(blobs.size(), options.parallel, [&](HttpSession& session, size_t i) -> Status {
    Blob& b = blobs[i];
    MPK_TRY(bool present, blob_exists(client, session, b.digest));
    if (present) {
      shared.add(b.bytes.size());
      return {};
    }
    b.sent = true;
    return upload_blob(client, session, b.digest, b.bytes, options.upload_chunk_bytes, [&](uint64_t n) { shared.add(n); });
  }));
  HttpSession session;
  PushReport report;
  MPK_TRY(report.manifest_digest, put_manifest(client, session, manifest_json(config_descriptor, layers)));
  report.reference = ref.to_string();
  report.config_digest = config_descriptor.digest;
  std::set<std::string> sent, counted;
  for (const auto& b : blobs)
    if (b.sent) sent.insert(b.digest);
  for (const auto& l : layers) {
    const bool was_sent = sent.count(l.digest) > 0;
    // A blob sent once counts once; its repeats in the same container were not sent again.
    const bool first = counted.insert(l.digest).second;
    report.layers.push_back({l, was_sent && first});
    (was_sent && first ? report.bytes_sent : report.bytes_skipped) += l.size;
  }
  return report;
}

}  // namespace mpspack::registry
