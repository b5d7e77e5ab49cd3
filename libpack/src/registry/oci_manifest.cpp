#include "oci_manifest.hpp"

#include "mpspack/format/hash.hpp"

#include <nlohmann/json.hpp>

namespace mpspack::registry {
namespace {

// The registry's own limit for a manifest (distribution refuses larger ones).
constexpr uint64_t kMaxManifestBytes = 4u << 20;

std::string digest_of(std::string_view bytes) {
  return "sha256:" + format::sha256_hex({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

Result<Descriptor> parse_descriptor(const Client& client, const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("mediaType") || !j["mediaType"].is_string() || !j.contains("digest") ||
      !j["digest"].is_string() || !j.contains("size") || !j["size"].is_number_unsigned())
    return make_error(Error::Kind::Corrupt, "{}: a manifest descriptor lacks mediaType, digest or size",
                      client.reference().to_string());
  return Descriptor{j["mediaType"].get<std::string>(), j["digest"].get<std::string>(), j["size"].get<uint64_t>()};
}

}  // namespace

std::string manifest_json(const Descriptor& config, const std::vector<Layer>& layers) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& l : layers) list.push_back({{"mediaType", kLayerMediaType}, {"digest", l.digest}, {"size", l.size}});
  nlohmann::json m = {
      {"schemaVersion", 2},
      {"mediaType", kManifestMediaType},
      {"config", {{"mediaType", config.media_type}, {"digest", config.digest}, {"size", config.size}}},
      {"layers", list},
  };
  return m.dump();
}

Result<std::string> put_manifest(Client& client, HttpSession& session, const std::string& json) {
  if (json.size() > kMaxManifestBytes)
    return make_error(Error::Kind::Unsupported, "{}: the manifest would be {} bytes, over the registries' {} limit",
                      client.reference().to_string(), json.size(), kMaxManifestBytes);
  HttpRequest put{.method = "PUT",
                  .url = client.repository_url() + "/manifests/" + client.reference().manifest_name(),
                  .headers = {std::string("Content-Type: ") + kManifestMediaType},
                  .body = {reinterpret_cast<const uint8_t*>(json.data()), json.size()}};
  MPK_TRY(HttpResponse r, client.send(session, put));
  if (r.status != 201) return client.http_error(r, "PUT manifest");
  return digest_of(json);
}

Result<ArtifactManifest> get_manifest(Client& client, HttpSession& session) {
  const std::string ref = client.reference().to_string();
  HttpRequest get{.url = client.repository_url() + "/manifests/" + client.reference().manifest_name(),
                  .headers = {std::string("Accept: ") + kManifestMediaType +
                              ", application/vnd.oci.image.index.v1+json"
                              ", application/vnd.docker.distribution.manifest.v2+json"
                              ", application/vnd.docker.distribution.manifest.list.v2+json"}};
  MPK_TRY(HttpResponse r, client.send(session, get));
  if (r.status != 200) return client.http_error(r, "GET manifest");
  if (r.body.size() > kMaxManifestBytes)
    return make_error(Error::Kind::Corrupt, "{}: the manifest is over {} bytes", ref, kMaxManifestBytes);
  ArtifactManifest m;
  m.digest = digest_of(r.body);
  if (!client.reference().digest.empty() && m.digest != client.reference().digest)
    return make_error(Error::Kind::Corrupt, "{}: the manifest received has digest {}", ref, m.digest);
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(Error::Kind::Corrupt, "{}: the manifest is not JSON", ref);
  const std::string type = j.contains("mediaType") && j["mediaType"].is_string() ? j["mediaType"].get<std::string>()
                           : r.headers.count("content-type")                     ? r.headers["content-type"]
                                                                                 : "";
  if (type != kManifestMediaType)
    return make_error(Error::Kind::NotThisFormat, "{}: not an mpspack container: the manifest is {}", ref,
                      type.empty() ? "of no media type" : type);
  if (!j.contains("config") || !j.contains("layers") || !j["layers"].is_array())
    return make_error(Error::Kind::Corrupt, "{}: the manifest lacks config or layers", ref);
  MPK_TRY(m.config, parse_descriptor(client, j["config"]));
  if (m.config.media_type != kConfigMediaType)
    return make_error(Error::Kind::NotThisFormat, "{}: not an mpspack container: its config media type is {}", ref,
                      m.config.media_type);
  for (const auto& l : j["layers"]) {
    MPK_TRY(Descriptor d, parse_descriptor(client, l));
    m.layers.push_back(std::move(d));
  }
  return m;
}

Status check_config_matches(const Client& client, const ArtifactManifest& m, const ArtifactConfig& config) {
  bool same = m.layers.size() == config.layers.size();
  for (size_t i = 0; same && i < m.layers.size(); ++i)
    same = m.layers[i].digest == config.layers[i].digest && m.layers[i].size == config.layers[i].size;
  if (!same)
    return make_error(Error::Kind::Corrupt, "{}: the manifest's layers are not the ones its mpspack config lists",
                      client.reference().to_string());
  return {};
}

}  // namespace mpspack::registry
