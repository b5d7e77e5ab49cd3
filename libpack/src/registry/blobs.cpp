#include "blobs.hpp"

#include "mpspack/format/hash.hpp"
#include "upload_state.hpp"

#include <spdlog/spdlog.h>

#include <charconv>

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

const std::vector<std::string> kOctets = {"Content-Type: application/octet-stream"};

struct UploadSession {
  std::string location;  // where the next request of this upload goes
  uint64_t offset = 0;   // bytes the registry holds
};

// The last byte of a Range header "0-<last>" (some registries write "bytes=0-<last>").
std::optional<uint64_t> range_end(std::string_view range) {
  if (range.starts_with("bytes=")) range.remove_prefix(6);
  if (!range.starts_with("0-")) return std::nullopt;
  range.remove_prefix(2);
  uint64_t end = 0;
  const auto [stop, ec] = std::from_chars(range.data(), range.data() + range.size(), end);
  if (ec != std::errc() || stop != range.data() + range.size()) return std::nullopt;  // empty, not digits, too big
  return end;
}

// The session an earlier run left for this blob, when the registry still has it and what it holds fits the blob:
// GET on its location answers 204, Range "0-<last byte>" and the location to go on at. Any other answer drops
// the state (the session expired, or was never this registry's); a transport failure keeps it and fails.
Result<std::optional<UploadSession>> resume_session(Client& client, HttpSession& session, const UploadStateFile& state,
                                                    const std::string& digest, uint64_t size) {
  const std::optional<UploadState> saved = state.load();
  if (!saved) return std::optional<UploadSession>();
  MPK_TRY(HttpResponse r, client.send(session, {.method = "GET", .url = saved->location}));
  auto start_over = [&](std::string_view why) {
    spdlog::info("{}: the upload an earlier push left is not resumed ({}); it starts over", digest, why);
    state.remove();
    return std::optional<UploadSession>();
  };
  if (r.status != 204) return start_over(fmt::format("the registry answered HTTP {}", r.status));
  const auto end = r.headers.count("range") ? range_end(r.headers.at("range")) : std::nullopt;
  if (!end || !r.headers.count("location")) return start_over("no Range or Location in the answer");
  // "0-0" is an empty session as much as one of a byte: taken as empty, which is not worth resuming.
  if (*end == 0 || *end >= size) return start_over(fmt::format("it holds {} bytes of {}", *end + 1, size));
  spdlog::debug("{}: resuming its upload at byte {}", digest, *end + 1);
  return std::optional(UploadSession{resolve_url(r.url, r.headers.at("location")), *end + 1});
}

Result<UploadSession> start_session(Client& client, HttpSession& session, const std::string& what) {
  MPK_TRY(HttpResponse r, client.send(session, {.method = "POST", .url = client.repository_url() + "/blobs/uploads/"}));
  if (r.status != 202) return client.http_error(r, what);
  MPK_TRY(std::string location, next_location(client, r, what));
  return UploadSession{location, 0};
}

// A 4xx means the session is of no more use (gone, or out of step with what was sent): its state goes, so the
// next run starts over. After a 5xx or a dropped connection the session may well live on: the state stays.
Error upload_failed(Client& client, const HttpResponse& r, const std::string& what, const UploadStateFile* state) {
  if (state && r.status >= 400 && r.status < 500) state->remove();
  return client.http_error(r, what);
}

// PATCHes the bytes from the session's offset on in chunks, recording the session after each.
Status send_chunks(Client& client, HttpSession& session, UploadSession& s, std::span<const uint8_t> bytes,
                   uint64_t chunk_bytes, const UploadStateFile& state, const std::string& what,
                   const std::function<void(uint64_t)>& progress) {
  while (s.offset < bytes.size()) {
    const uint64_t n = std::min<uint64_t>(chunk_bytes, bytes.size() - s.offset);
    HttpRequest patch{.method = "PATCH", .url = s.location, .headers = kOctets, .body = bytes.subspan(s.offset, n)};
    patch.headers.push_back(fmt::format("Content-Range: {}-{}", s.offset, s.offset + n - 1));
    MPK_TRY(HttpResponse r, client.send(session, patch));
    if (r.status != 202) return upload_failed(client, r, what, &state);
    MPK_TRY(s.location, next_location(client, r, what));
    s.offset += n;
    state.save({s.location, s.offset});
    if (progress) progress(n);
  }
  return {};
}

// The PUT that ends an upload: the bytes not sent yet (all of a small blob, none after chunks) and the digest.
Status put_rest(Client& client, HttpSession& session, const UploadSession& s, const std::string& digest,
                std::span<const uint8_t> bytes, const std::string& what, const UploadStateFile* state) {
  HttpRequest put{.method = "PUT",
                  .url = with_query(s.location, "digest=" + digest),
                  .headers = kOctets,
                  .body = bytes.subspan(s.offset)};
  MPK_TRY(HttpResponse r, client.send(session, put));
  if (r.status != 201) return upload_failed(client, r, what, state);
  return {};
}

}  // namespace

Result<bool> blob_exists(Client& client, HttpSession& session, const std::string& digest) {
  MPK_TRY(HttpResponse r, client.send(session, {.method = "HEAD", .url = blob_url(client, digest)}));
  if (r.status == 200) return true;
  if (r.status == 404) return false;
  return client.http_error(r, "HEAD blob " + digest);
}

void forget_upload(const Client& client, const std::string& digest) {
  UploadStateFile(client.repository_url(), digest).remove();
}

Result<uint64_t> upload_blob(Client& client, HttpSession& session, const std::string& digest,
                             std::span<const uint8_t> bytes, uint64_t chunk_bytes,
                             const std::function<void(uint64_t)>& progress) {
  const std::string what = "upload of " + digest;
  if (bytes.size() <= chunk_bytes) {
    // One PUT is all or nothing: there is no state worth keeping across runs.
    MPK_TRY(UploadSession s, start_session(client, session, what));
    MPK_CHECK(put_rest(client, session, s, digest, bytes, what, nullptr));
    if (progress) progress(bytes.size());
    return uint64_t(0);
  }
  const UploadStateFile state(client.repository_url(), digest);
  MPK_TRY(std::optional<UploadSession> earlier, resume_session(client, session, state, digest, bytes.size()));
  UploadSession s;
  if (earlier) {
    s = *earlier;
    if (progress) progress(s.offset);
  } else {
    MPK_TRY(s, start_session(client, session, what));
    state.save({s.location, 0});
  }
  const uint64_t resumed = s.offset;
  MPK_CHECK(send_chunks(client, session, s, bytes, chunk_bytes, state, what, progress));
  MPK_CHECK(put_rest(client, session, s, digest, bytes, what, &state));
  state.remove();
  return resumed;
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
