// Signatures attached to containers in a registry (referrers.hpp; docs/SIGNING.md, "In a registry").
#include "referrers.hpp"

#include "blobs.hpp"
#include "mpspack/format/hash.hpp"
#include "mpspack/json_fields.hpp"
#include "mpspack/sign/signature.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace mpspack::registry {
namespace {

constexpr const char* kIndexMediaType = "application/vnd.oci.image.index.v1+json";
// The OCI 1.1 empty descriptor: the config of an artifact that has none ("{}").
constexpr const char* kEmptyMediaType = "application/vnd.oci.empty.v1+json";
constexpr std::string_view kEmptyConfig = "{}";
constexpr uint64_t kMaxIndexBytes = 4u << 20;
constexpr size_t kMaxSignatures = 32;  // read of the referrers listed, newest registries list few

std::span<const uint8_t> bytes_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string digest_of(std::string_view s) { return "sha256:" + format::sha256_hex(bytes_of(s)); }

// The referrers tag of a digest: "sha256:<hex>" -> "sha256-<hex>".
std::string referrers_tag(const std::string& digest) {
  std::string tag = digest;
  std::replace(tag.begin(), tag.end(), ':', '-');
  return tag;
}

Status upload_if_missing(Client& client, HttpSession& session, std::string_view bytes) {
  const std::string digest = digest_of(bytes);
  MPK_TRY(bool there, blob_exists(client, session, digest));
  if (there) return {};
  MPK_TRY(uint64_t resumed, upload_blob(client, session, digest, bytes_of(bytes), 64ull << 20, [](uint64_t) {}));
  (void)resumed;
  return {};
}

Result<HttpResponse> put(Client& client, HttpSession& session, const std::string& name, const char* type,
                         const std::string& body) {
  HttpRequest req{.method = "PUT",
                  .url = client.repository_url() + "/manifests/" + name,
                  .headers = {std::string("Content-Type: ") + type},
                  .body = bytes_of(body)};
  MPK_TRY(HttpResponse r, client.send(session, req));
  if (r.status != 201) return client.http_error(r, "PUT " + name);
  return r;
}

Result<HttpResponse> get(Client& client, HttpSession& session, const std::string& url, const std::string& accept) {
  HttpRequest req{.url = url, .headers = {"Accept: " + accept}};
  return client.send(session, req);
}

// The referrers tag's index with `entry` added (a new index when the tag does not exist yet).
Result<std::string> index_with(Client& client, HttpSession& session, const std::string& tag,
                               const nlohmann::json& entry) {
  MPK_TRY(HttpResponse r, get(client, session, client.repository_url() + "/manifests/" + tag, kIndexMediaType));
  nlohmann::json index{{"schemaVersion", 2}, {"mediaType", kIndexMediaType}, {"manifests", nlohmann::json::array()}};
  if (r.status == 200) {
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_object() && j.contains("manifests") && j["manifests"].is_array()) index = j;
  } else if (r.status != 404) {
    return client.http_error(r, "GET the referrers tag " + tag);
  }
  index["manifests"].push_back(entry);
  return index.dump();
}

// The descriptors of `index` (a referrers answer or tag) whose artifactType is the envelope's.
std::vector<std::string> signature_digests(const std::string& body) {
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("manifests") || !j["manifests"].is_array()) return out;
  for (const auto& d : j["manifests"])
    if (string_field(d, "artifactType") == sign::kEnvelopeMediaType && d.contains("digest") &&
        d["digest"].is_string() && out.size() < kMaxSignatures)
      out.push_back(d["digest"].get<std::string>());
  return out;
}

// The envelope a signature manifest names (its one layer), checked against the manifest's digest and the layer's.
Result<std::string> fetch_envelope(Client& client, HttpSession& session, const std::string& digest) {
  const std::string ref = client.reference().to_string();
  MPK_TRY(HttpResponse r, get(client, session, client.repository_url() + "/manifests/" + digest, kManifestMediaType));
  if (r.status != 200) return client.http_error(r, "GET signature manifest " + digest);
  if (digest_of(r.body) != digest)
    return make_error(Error::Kind::Corrupt, "{}: the signature manifest received has not digest {}", ref, digest);
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("layers") || !j["layers"].is_array() || j["layers"].size() != 1 ||
      !j["layers"][0].is_object() || string_field(j["layers"][0], "mediaType") != sign::kEnvelopeMediaType ||
      !j["layers"][0].contains("digest") || !j["layers"][0]["digest"].is_string() || !j["layers"][0].contains("size") ||
      !j["layers"][0]["size"].is_number_unsigned())
    return make_error(Error::Kind::Corrupt, "{}: signature manifest {} does not hold one DSSE envelope layer", ref,
                      digest);
  return fetch_small_blob(client, session, j["layers"][0]["digest"].get<std::string>(),
                          j["layers"][0]["size"].get<uint64_t>(), sign::kEnvelopeBytes);
}

}  // namespace

Result<std::string> attach_signature(Client& client, HttpSession& session, const Descriptor& subject,
                                     std::string_view envelope) {
  MPK_CHECK(upload_if_missing(client, session, kEmptyConfig));
  MPK_CHECK(upload_if_missing(client, session, envelope));
  const nlohmann::json manifest{
      {"schemaVersion", 2},
      {"mediaType", kManifestMediaType},
      {"artifactType", sign::kEnvelopeMediaType},
      {"config", {{"mediaType", kEmptyMediaType}, {"digest", digest_of(kEmptyConfig)}, {"size", kEmptyConfig.size()}}},
      {"layers",
       {{{"mediaType", sign::kEnvelopeMediaType}, {"digest", digest_of(envelope)}, {"size", envelope.size()}}}},
      {"subject", {{"mediaType", subject.media_type}, {"digest", subject.digest}, {"size", subject.size}}},
  };
  const std::string body = manifest.dump(), digest = digest_of(body);
  MPK_TRY(HttpResponse r, put(client, session, digest, kManifestMediaType, body));
  // A registry with the referrers API says so with OCI-Subject; for the others the tag schema lists the manifest.
  if (r.headers.count("oci-subject")) return digest;
  const nlohmann::json entry{{"mediaType", kManifestMediaType},
                             {"digest", digest},
                             {"size", body.size()},
                             {"artifactType", sign::kEnvelopeMediaType}};
  const std::string tag = referrers_tag(subject.digest);
  MPK_TRY(std::string index, index_with(client, session, tag, entry));
  MPK_TRY(HttpResponse tagged, put(client, session, tag, kIndexMediaType, index));
  (void)tagged;
  return digest;
}

Result<std::vector<std::string>> fetch_signatures(Client& client, HttpSession& session,
                                                  const std::string& subject_digest) {
  const std::string filter = "?artifactType=application%2Fvnd.dsse.envelope.v1%2Bjson";
  MPK_TRY(HttpResponse r,
          get(client, session, client.repository_url() + "/referrers/" + subject_digest + filter, kIndexMediaType));
  if (r.status == 404) {  // no referrers API: the tag schema
    MPK_TRY(r, get(client, session, client.repository_url() + "/manifests/" + referrers_tag(subject_digest),
                   kIndexMediaType));
    if (r.status == 404) return std::vector<std::string>{};
  }
  if (r.status != 200) return client.http_error(r, "GET the referrers of " + subject_digest);
  if (r.body.size() > kMaxIndexBytes)
    return make_error(Error::Kind::Corrupt, "{}: the referrers index is over {} bytes", client.reference().to_string(),
                      kMaxIndexBytes);
  std::vector<std::string> envelopes;
  for (const auto& digest : signature_digests(r.body)) {
    MPK_TRY(std::string e, fetch_envelope(client, session, digest));
    envelopes.push_back(std::move(e));
  }
  return envelopes;
}

}  // namespace mpspack::registry
