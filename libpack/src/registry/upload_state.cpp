#include "upload_state.hpp"

#include "http.hpp"

#include "mpspack/file.hpp"
#include "mpspack/format/hash.hpp"
#include "mpspack/json_fields.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace mpspack::registry {
namespace {

// A state is a few hundred bytes; anything much larger is not one, and is not read into memory.
constexpr uintmax_t kMaxStateBytes = 64 << 10;

std::optional<std::string> read_small_file(const std::filesystem::path& path) {
  std::error_code ec;
  // Checked first so that a FIFO or a folder put there is skipped, not waited on.
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxStateBytes) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::filesystem::path upload_state_dir() {
  std::filesystem::path cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/') cache = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home) cache = std::filesystem::path(home) / ".cache";
  else return {};
  return cache / "mpspack" / "uploads";
}

UploadStateFile::UploadStateFile(std::string repository_url, std::string digest)
    : repository_url_(std::move(repository_url)), digest_(std::move(digest)) {
  const std::filesystem::path dir = upload_state_dir();
  if (dir.empty()) return;
  const std::string key = repository_url_ + "\n" + digest_;
  path_ = dir / (format::sha256_hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()}) + ".json");
}

std::optional<UploadState> UploadStateFile::load() const {
  if (path_.empty()) return std::nullopt;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path_, ec))) return std::nullopt;
  auto ignore = [&](std::string_view why) -> std::optional<UploadState> {
    spdlog::info("{}: upload state ignored ({}); {} starts over", path_.string(), why, digest_);
    remove();
    return std::nullopt;
  };
  std::optional<std::string> text = read_small_file(path_);
  if (!text) return ignore("not a readable file of a few bytes");
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return ignore("not a JSON object");
  if (string_field(j, "repository") != repository_url_ || string_field(j, "digest") != digest_)
    return ignore("it names another repository or blob");
  UploadState state{string_field(j, "location"), 0};
  // The location gets the registry's credentials: only one on the registry's own host is trusted from a file.
  if (!state.location.starts_with(url_origin(repository_url_) + "/"))
    return ignore("its location is not on the registry's host");
  if (!j.contains("offset") || !j["offset"].is_number_unsigned()) return ignore("no offset");
  state.offset = j["offset"].get<uint64_t>();
  return state;
}

void UploadStateFile::save(const UploadState& state) const {
  if (path_.empty()) return;
  const nlohmann::json j = {
      {"repository", repository_url_}, {"digest", digest_}, {"location", state.location}, {"offset", state.offset}};
  // A location is the registry's bytes: any that are not UTF-8 are replaced rather than thrown over (the GET to
  // the changed location then fails, and the blob starts over).
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // Without the file a later run merely starts this blob over: nothing here fails the push.
  std::error_code ec;
  std::filesystem::create_directories(path_.parent_path(), ec);
  if (ec) {
    spdlog::debug("{}: upload state not kept: {}", path_.parent_path().string(), ec.message());
    return;
  }
  auto s = write_file_atomically(path_, [&](AtomicWriter& w) { return w.write(text.data(), text.size()); });
  if (!s.ok()) spdlog::debug("upload state not kept: {}", s.error().message);
}

void UploadStateFile::remove() const {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  if (ec) spdlog::debug("{}: cannot remove the upload state: {}", path_.string(), ec.message());
}

}  // namespace mpspack::registry
