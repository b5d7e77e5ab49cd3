// The config blob that says where each layer goes in the rebuilt file, and the layers' digests.
#include "mpspack/format/hash.hpp"
#include "mpspack/registry/artifact.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <regex>
#include <thread>

namespace mpspack::registry {

void digest_layers(const format::Container& c, std::vector<Layer>& layers, unsigned threads) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < layers.size();)
      layers[i].digest = "sha256:" + format::sha256_hex({c.file().data() + layers[i].offset, layers[i].size});
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(1u, threads); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

std::string config_json(uint64_t file_size, const std::vector<Layer>& layers) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& l : layers) {
    nlohmann::json j = {{"digest", l.digest}, {"offset", l.offset}, {"size", l.size}, {"kind", l.kind}};
    if (l.segment >= 0) j["segment"] = l.segment;
    if (!l.name.empty()) j["name"] = l.name;
    list.push_back(std::move(j));
  }
  // Names come from the container, which allows any bytes: replace, not throw, on invalid UTF-8.
  return nlohmann::json{{"schema_version", 1}, {"file_size", file_size}, {"layers", list}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

Result<Layer> parse_layer(const nlohmann::json& j, std::string_view what) {
  static const std::regex digest("sha256:[a-f0-9]{64}");
  Layer l;
  if (!j.is_object() || !j.contains("digest") || !j["digest"].is_string() || !j.contains("offset") ||
      !j["offset"].is_number_unsigned() || !j.contains("size") || !j["size"].is_number_unsigned() ||
      !j.contains("kind") || !j["kind"].is_string())
    return make_error(Error::Kind::Corrupt, "{}: a layer lacks digest, offset, size or kind", what);
  l.digest = j["digest"].get<std::string>();
  if (!std::regex_match(l.digest, digest))
    return make_error(Error::Kind::Corrupt, "{}: layer digest '{}' is not sha256:<hex>", what, l.digest);
  l.offset = j["offset"].get<uint64_t>();
  l.size = j["size"].get<uint64_t>();
  l.kind = j["kind"].get<std::string>();
  if (j.contains("segment") && j["segment"].is_number_integer()) l.segment = j["segment"].get<int64_t>();
  if (j.contains("name") && j["name"].is_string()) l.name = j["name"].get<std::string>();
  return l;
}

}  // namespace

Result<ArtifactConfig> parse_config(std::string_view json, std::string_view what) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(Error::Kind::Corrupt, "{}: the mpspack config is not a JSON object", what);
  if (!j.contains("schema_version") || j["schema_version"] != 1)
    return make_error(Error::Kind::Unsupported, "{}: mpspack config schema_version is not 1", what);
  if (!j.contains("file_size") || !j["file_size"].is_number_unsigned() || !j.contains("layers") ||
      !j["layers"].is_array())
    return make_error(Error::Kind::Corrupt, "{}: the mpspack config lacks file_size or layers", what);
  ArtifactConfig config;
  config.file_size = j["file_size"].get<uint64_t>();
  uint64_t end = 0;
  for (const auto& lj : j["layers"]) {
    MPK_TRY(Layer l, parse_layer(lj, what));
    if (l.offset < end || l.size > config.file_size || l.offset > config.file_size - l.size)
      return make_error(Error::Kind::Corrupt,
                        "{}: layer {} at offset {} (+{}) overlaps another or lies outside "
                        "the {}-byte file",
                        what, l.digest, l.offset, l.size, config.file_size);
    end = l.offset + l.size;
    config.layers.push_back(std::move(l));
  }
  return config;
}

}  // namespace mpspack::registry
