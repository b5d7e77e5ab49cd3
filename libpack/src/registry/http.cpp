#include "http.hpp"

#include "curl_api.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace mpspack::registry {
namespace {

struct Exchange {
  const CurlApi* api;
  const HttpRequest* request;
  HttpResponse* response;
  CURL* curl;
  bool sink_refused = false;
};

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  std::string_view line(data, size * count);
  // A new status line (after a redirect or a 100 Continue) starts a new set of headers.
  if (line.starts_with("HTTP/")) x->response->headers.clear();
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.remove_suffix(1);
    x->response->headers[name] = std::string(value);
  }
  return size * count;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  long status = 0;
  x->api->curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &status);
  const size_t n = size * count;
  if (x->request->sink && status >= 200 && status < 300) {
    if (!x->request->sink(reinterpret_cast<const uint8_t*>(data), n)) {
      x->sink_refused = true;
      return 0;
    }
    return n;
  }
  // Error bodies are short JSON; a huge one is cut, not kept.
  if (x->response->body.size() < (1u << 20)) x->response->body.append(data, n);
  return n;
}

struct UploadCursor {
  std::span<const uint8_t> body;
  size_t sent = 0;
};

size_t on_read(char* buffer, size_t size, size_t count, void* user) {
  auto* u = static_cast<UploadCursor*>(user);
  const size_t n = std::min(size * count, u->body.size() - u->sent);
  std::memcpy(buffer, u->body.data() + u->sent, n);
  u->sent += n;
  return n;
}

// Lets curl send a body again: it does when a reused connection turns out closed before any reply (the request
// then goes once more on a new one), and on a redirect; without it both fail as "data rewind wasn't possible".
int on_seek(void* user, curl_off_t offset, int origin) {
  auto* u = static_cast<UploadCursor*>(user);
  if (origin != SEEK_SET || offset < 0 || uint64_t(offset) > u->body.size()) return CURL_SEEKFUNC_CANTSEEK;
  u->sent = size_t(offset);
  return CURL_SEEKFUNC_OK;
}

// Options every request gets: where it goes, the callbacks, redirects, and the limits that keep a dead
// connection from hanging the transfer.
void set_common_options(const CurlApi* api, CURL* curl, const HttpRequest& request, Exchange& x, char* curl_error) {
  api->curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  api->curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
  api->curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api->curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);  // blob GETs may redirect to storage; auth is not resent
  api->curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
  api->curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
  // A stalled connection (under 1 byte/s for a minute) fails instead of hanging.
  api->curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  api->curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  api->curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  api->curl_easy_setopt(curl, CURLOPT_HEADERDATA, &x);
  api->curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  api->curl_easy_setopt(curl, CURLOPT_WRITEDATA, &x);
  api->curl_easy_setopt(curl, CURLOPT_USERAGENT, "mpspack");
  // Blobs stream through the sink (hash, then pwrite): 1 MiB pieces instead of curl's 16 KiB cut the calls 64-fold.
  api->curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 1L << 20);
}

// HEAD sends no body back; PUT, PATCH and POST send `upload`. Returns the header list, grown by what the
// method needs.
curl_slist* set_method(const CurlApi* api, CURL* curl, const HttpRequest& request, UploadCursor& upload,
                       curl_slist* headers) {
  if (request.method == "HEAD") {
    api->curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT" || request.method == "PATCH" || request.method == "POST") {
    api->curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    api->curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
    api->curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
    api->curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, on_seek);
    api->curl_easy_setopt(curl, CURLOPT_SEEKDATA, &upload);
    api->curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.body.size()));
    api->curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    headers = api->curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  }
  return headers;
}

Error transfer_error(const CurlApi* api, CURLcode rc, const char* curl_error, const HttpRequest& request) {
  const char* why = curl_error[0] ? curl_error : api->curl_easy_strerror(rc);
  // A TLS handshake with a plain HTTP server fails with OpenSSL's "wrong version number" or "packet length too
  // long": true of a registry on a test network or this machine, which only --plain-http reaches.
  if (rc == CURLE_SSL_CONNECT_ERROR && request.url.starts_with("https://"))
    return make_error(Error::Kind::Io,
                      "{}: {} (the TLS handshake failed: the registry may be serving plain HTTP; if so, use "
                      "--plain-http)",
                      request.url, why);
  return make_error(Error::Kind::Io, "{}: {}", request.url, why);
}

}  // namespace

HttpSession::HttpSession() = default;

HttpSession::~HttpSession() {
  if (curl_) (*curl_api())->curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<HttpResponse> HttpSession::perform(const HttpRequest& request) {
  MPK_TRY(const CurlApi* api, curl_api());
  if (!curl_) curl_ = api->curl_easy_init();
  CURL* curl = static_cast<CURL*>(curl_);
  if (!curl) return make_error(Error::Kind::Io, "{}: cannot start libcurl", request.url);
  api->curl_easy_reset(curl);  // the handle is reused for its connection cache, not its options
  HttpResponse response;
  Exchange x{api, &request, &response, curl};
  UploadCursor upload{request.body};
  char curl_error[CURL_ERROR_SIZE] = {};
  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = api->curl_slist_append(headers, h.c_str());
  set_common_options(api, curl, request, x, curl_error);
  headers = set_method(api, curl, request, upload, headers);
  api->curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = api->curl_easy_perform(curl);
  api->curl_slist_free_all(headers);
  api->curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  char* effective = nullptr;
  api->curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective);
  response.url = effective ? effective : request.url;
  if (x.sink_refused) return make_error(Error::Kind::Corrupt, "{}: transfer stopped", request.url);
  if (rc != CURLE_OK) return transfer_error(api, rc, curl_error, request);
  return response;
}

std::string url_origin(const std::string& url) {
  const auto scheme_end = url.find("://");
  const auto path_start = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  return path_start == std::string::npos ? url : url.substr(0, path_start);
}

std::string resolve_url(const std::string& base, const std::string& location) {
  if (location.find("://") != std::string::npos) return location;
  const std::string origin = url_origin(base);
  return location.starts_with('/') ? origin + location : origin + "/" + location;
}

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(std::string_view in) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : in) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) out += kAlphabet[(bits >> (count -= 6)) & 63];
  }
  if (count > 0) out += kAlphabet[(bits << (6 - count)) & 63];
  while (out.size() % 4) out += '=';
  return out;
}

Result<std::string> base64_decode(std::string_view in) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : in) {
    if (c == '=') break;
    const char* p = std::strchr(kAlphabet, c);
    if (!p || c == '\0') return make_error(Error::Kind::Invalid, "not base64");
    bits = (bits << 6) | uint32_t(p - kAlphabet);
    count += 6;
    if (count >= 8) out += char((bits >> (count -= 8)) & 0xff);
  }
  return out;
}

}  // namespace mpspack::registry
