// push: upload the blobs the registry lacks, then the manifest that names them all.
#include "blobs.hpp"
#include "manifest.hpp"
#include "mpspack/format/hash.hpp"
#include "parallel.hpp"

#include <map>
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
    uint64_t resumed = 0;  // of those sent, the bytes an earlier run had uploaded
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
      forget_upload(client, b.digest);
      shared.add(b.bytes.size());
      return {};
    }
    b.sent = true;
    MPK_TRY(b.resumed, upload_blob(client, session, b.digest, b.bytes, options.upload_chunk_bytes,
                                   [&](uint64_t n) { shared.add(n); }));
    return {};
  }));
  HttpSession session;
  PushReport report;
  MPK_TRY(report.manifest_digest, put_manifest(client, session, manifest_json(config_descriptor, layers)));
  report.reference = ref.to_string();
  report.config_digest = config_descriptor.digest;
  std::map<std::string, uint64_t> sent;  // digest -> bytes resumed
  std::set<std::string> counted;
  for (const auto& b : blobs)
    if (b.sent) sent[b.digest] = b.resumed;
  for (const auto& l : layers) {
    const auto was_sent = sent.find(l.digest);
    // A blob sent once counts once; its repeats in the same container were not sent again.
    const bool first = counted.insert(l.digest).second;
    report.layers.push_back({l, was_sent != sent.end() && first});
    if (was_sent == sent.end() || !first) {
      report.bytes_skipped += l.size;
      continue;
    }
    report.bytes_resumed += was_sent->second;
    report.bytes_sent += l.size - was_sent->second;
  }
  return report;
}

}  // namespace mpspack::registry
