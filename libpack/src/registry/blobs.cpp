#include "blobs.hpp"

#include "mpspack/format/hash.hpp"

namespace mpspack::registry {
namespace {

std::string blob_url(const Client& client, const std::string& digest) {
  return client.repository_url() + "/blobs/" + digest;
}

std::string with_query(const std::string& url, const std::string& query) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + query;
}

Result<std::string> next_location(Client& client, const HttpResponse& r, const std::string& what) {
  if (!r.headers.count("location"))
    return make_error(Error::Kind::Io, "{}: {}: the registry gave no upload location", client.reference().to_string(),
                      what);
  return resolve_url(r.url, r.headers.at("location"));
}

}  // namespace

Result<bool> blob_exists(Client& client, HttpSession& session, const std::string& digest) {
  MPK_TRY(HttpResponse r, client.send(session, {.method = "HEAD", .url = blob_url(client, digest)}));
  if (r.status == 200) return true;
  if (r.status == 404) return false;
  return client.http_error(r, "HEAD blob " + digest);
}

Status upload_blob(Client& client, HttpSession& session, const std::string& digest, std::span<const uint8_t> bytes,
                   uint64_t chunk_bytes, const std::function<void(uint64_t)>& progress) {
  const std::string what = "upload of " + digest;
  MPK_TRY(HttpResponse started,
          client.send(session, {.method = "POST", .url = client.repository_url() + "/blobs/uploads/"}));
  if (started.status != 202) return client.http_error(started, what);
  MPK_TRY(std::string location, next_location(client, started, what));
  const std::vector<std::string> octets = {"Content-Type: application/octet-stream"};
  uint64_t sent = 0;
  if (bytes.size() > chunk_bytes) {
    for (; sent < bytes.size();) {
      const uint64_t n = std::min<uint64_t>(chunk_bytes, bytes.size() - sent);
      HttpRequest patch{.method = "PATCH", .url = location, .headers = octets, .body = bytes.subspan(sent, n)};
      patch.headers.push_back(fmt::format("Content-Range: {}-{}", sent, sent + n - 1));
      MPK_TRY(HttpResponse r, client.send(session, patch));
      if (r.status != 202) return client.http_error(r, what);
      MPK_TRY(location, next_location(client, r, what));
      sent += n;
      if (progress) progress(n);
    }
  }
  HttpRequest put{.method = "PUT", .url = with_query(location, "digest=" + digest), .headers = octets,
                  .body = bytes.subspan(sent)};
  MPK_TRY(HttpResponse done, client.send(session, put));
  if (done.status != 201) return client.http_error(done, what);
  if (progress && sent < bytes.size()) progress(bytes.size() - sent);
  return {};
}

Status fetch_blob(Client& client, HttpSession& session, const std::string& digest, uint64_t size,
                  const std::function<Status(uint64_t, const uint8_t*, size_t)>& write) {
  format::Sha256Stream sha;
  uint64_t received = 0;
  std::optional<Error> write_error;
  HttpRequest get{.url = blob_url(client, digest)};
  get.sink = [&](const uint8_t* data, size_t n) {
    if (received + n > size) {
      write_error = make_error(Error::Kind::Corrupt, "{}: layer {} is longer than its {} bytes",
                               client.reference().to_string(), digest, size);
      return false;
    }
    sha.update(data, n);
    if (auto s = write(received, data, n); !s.ok()) {
      write_error = s.error();
      return false;
    }
    received += n;
    return true;
  };
  auto r = client.send(session, get);
  if (write_error) return *write_error;
  if (!r.ok()) return r.error();
  if (r->status != 200) return client.http_error(*r, "GET blob " + digest);
  if (received != size)
    return make_error(Error::Kind::Corrupt, "{}: layer {} was cut short: {} of {} bytes arrived",
                      client.reference().to_string(), digest, received, size);
  if ("sha256:" + sha.hex_digest() != digest)
    return make_error(Error::Kind::Corrupt, "{}: layer {}: the bytes received do not match the digest",
                      client.reference().to_string(), digest);
  return {};
}

Result<std::string> fetch_small_blob(Client& client, HttpSession& session, const std::string& digest, uint64_t size,
                                     uint64_t max_size) {
  if (size > max_size)
    return make_error(Error::Kind::Corrupt, "{}: blob {} claims {} bytes, more than the {} it may have",
                      client.reference().to_string(), digest, size, max_size);
  std::string bytes;
  MPK_CHECK(fetch_blob(client, session, digest, size, [&](uint64_t, const uint8_t* d, size_t n) {
    bytes.append(reinterpret_cast<const char*>(d), n);
    return Status{};
  }));
  return bytes;
}

}  // namespace mpspack::registry
