// One HTTP exchange through libcurl (opened at the first request: curl_api.hpp). TLS is verified by default; proxies
// and CA bundles come from curl's usual environment (https_proxy, no_proxy, CURL_CA_BUNDLE, SSL_CERT_FILE).
#pragma once

#include "mpspack/result.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace mpspack::registry {

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers{};  // "Name: value"
  std::span<const uint8_t> body{};     // sent as is (PUT, PATCH, POST)
  // Receives a successful (2xx) response body piece by piece; returning false aborts the transfer. Without it the
  // body is kept in HttpResponse::body.
  std::function<bool(const uint8_t*, size_t)> sink{};
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names in lowercase; the last value of each
  std::string body;                            // unless a sink took it (then only non-2xx bodies)
  std::string url;                             // after redirects
};

// A connection (curl easy handle) reused across requests to keep the connection alive. One per thread.
class HttpSession {
 public:
  HttpSession();
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  // A transport failure (no connection, TLS, a stream cut short, a sink that said stop) is an error; any HTTP
  // status is a response.
  Result<HttpResponse> perform(const HttpRequest& request);

 private:
  void* curl_ = nullptr;  // a CURL*, made at the first request
};

// "scheme://host[:port]" of a URL: where its path starts, cut.
std::string url_origin(const std::string& url);

// Resolves a Location header against the URL it answered.
std::string resolve_url(const std::string& base, const std::string& location);

std::string base64_encode(std::string_view in);
Result<std::string> base64_decode(std::string_view in);

}  // namespace mpspack::registry
