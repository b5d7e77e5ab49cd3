// Registry authentication: docker's saved credentials, Basic, and the token flow of the distribution spec
// (a 401 with WWW-Authenticate: Bearer realm="...",service="...",scope="..." sends the client to fetch a token).
#include "client.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace mpspack::registry {
namespace {

// WWW-Authenticate: Scheme key="value",key=value → scheme and parameters.
std::pair<std::string, std::map<std::string, std::string>> parse_challenge(const std::string& header) {
  std::map<std::string, std::string> params;
  const auto space = header.find(' ');
  std::string scheme = header.substr(0, space);
  for (auto& c : scheme) c = char(std::tolower(static_cast<unsigned char>(c)));
  size_t i = space == std::string::npos ? header.size() : space + 1;
  while (i < header.size()) {
    while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
    const auto eq = header.find('=', i);
    if (eq == std::string::npos) break;
    std::string key = header.substr(i, eq - i), value;
    i = eq + 1;
    if (i < header.size() && header[i] == '"') {
      for (++i; i < header.size() && header[i] != '"'; ++i) value += header[i] == '\\' ? header[++i] : header[i];
      ++i;
    } else {
      while (i < header.size() && header[i] != ',') value += header[i++];
    }
    params[key] = value;
  }
  return {scheme, params};
}

std::string url_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += char(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> docker_credentials(const std::string& host) {
  std::filesystem::path config;
  if (const char* dir = std::getenv("DOCKER_CONFIG")) config = std::filesystem::path(dir) / "config.json";
  else if (const char* home = std::getenv("HOME")) config = std::filesystem::path(home) / ".docker" / "config.json";
  else return std::nullopt;
  std::ifstream in(config);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.contains("auths") || !j["auths"].is_object()) return std::nullopt;
  for (const std::string& key : {host, "https://" + host, "http://" + host}) {
    if (!j["auths"].contains(key)) continue;
    const auto& entry = j["auths"][key];
    if (!entry.is_object() || !entry.contains("auth") || !entry["auth"].is_string()) continue;
    auto decoded = base64_decode(entry["auth"].get<std::string>());
    if (!decoded.ok()) continue;
    const auto colon = decoded->find(':');
    if (colon == std::string::npos) continue;
    return std::pair{decoded->substr(0, colon), decoded->substr(colon + 1)};
  }
  return std::nullopt;
}

Client::Client(Reference ref, const ClientOptions& options, std::string actions)
    : ref_(std::move(ref)), options_(options), actions_(std::move(actions)) {
  if (!options_.username) {
    if (auto saved = docker_credentials(ref_.host)) {
      options_.username = saved->first;
      options_.password = saved->second;
    }
  }
}

std::string Client::repository_url() const {
  return std::string(options_.plain_http ? "http://" : "https://") + ref_.host + "/v2/" + ref_.repository;
}

Error Client::http_error(const HttpResponse& r, std::string_view what) const {
  std::string detail;
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("errors") && j["errors"].is_array() && !j["errors"].empty()) {
    const auto& e = j["errors"][0];
    if (e.contains("code") && e["code"].is_string()) detail += " " + e["code"].get<std::string>();
    if (e.contains("message") && e["message"].is_string()) detail += ": " + e["message"].get<std::string>();
  }
  const char* meaning = r.status == 401   ? " (not authorized: check the credentials)"
                        : r.status == 403 ? " (forbidden)"
                        : r.status == 404 ? " (not found)"
                                          : "";
  return make_error(Error::Kind::Io, "{}: {}: HTTP {}{}{}", ref_.to_string(), what, r.status, meaning, detail);
}

Status Client::answer_challenge(HttpSession& session, const std::string& challenge) {
  auto [scheme, params] = parse_challenge(challenge);
  const bool have_credentials = options_.username.has_value();
  const std::string basic =
      have_credentials
          ? "Authorization: Basic " + base64_encode(*options_.username + ":" + options_.password.value_or(""))
          : "";
  if (scheme == "basic") {
    if (!have_credentials)
      return make_error(Error::Kind::Io,
                        "{}: the registry asks for a user name and password (docker login, or "
                        "--username with --password-stdin)",
                        ref_.to_string());
    authorization_ = basic;
    return {};
  }
  if (scheme != "bearer" || !params.count("realm"))
    return make_error(Error::Kind::Unsupported, "{}: unsupported authentication challenge '{}'", ref_.to_string(),
                      challenge);
  std::string url = params["realm"];
  url += url.find('?') == std::string::npos ? '?' : '&';
  if (params.count("service")) url += "service=" + url_escape(params["service"]) + "&";
  url += "scope=" + url_escape("repository:" + ref_.repository + ":" + actions_);
  HttpRequest token_request{.url = url};
  if (have_credentials) token_request.headers.push_back(basic);
  auto reply = session.perform(token_request);
  if (!reply.ok()) return reply.error().context(ref_.to_string());
  const HttpResponse& r = *reply;
  if (r.status != 200) return http_error(r, "token request to " + params["realm"]);
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  std::string token;
  for (const char* key : {"token", "access_token"})
    if (!j.is_discarded() && j.is_object() && j.contains(key) && j[key].is_string()) token = j[key].get<std::string>();
  if (token.empty())
    return make_error(Error::Kind::Io, "{}: the token server {} answered without a token", ref_.to_string(),
                      params["realm"]);
  authorization_ = "Authorization: Bearer " + token;
  return {};
}

Result<HttpResponse> Client::send(HttpSession& session, HttpRequest request) {
  std::string authorization;
  {
    std::lock_guard lock(mutex_);
    authorization = authorization_;
  }
  auto with_auth = [&](const std::string& a) {
    HttpRequest r = request;
    if (!a.empty()) r.headers.push_back(a);
    return r;
  };
  // Transport failures (no connection, TLS, a stream cut short) name the reference first, as every error does.
  auto perform = [&](const HttpRequest& r) -> Result<HttpResponse> {
    auto response = session.perform(r);
    if (!response.ok()) return response.error().context(ref_.to_string());
    return response;
  };
  MPK_TRY(HttpResponse first, perform(with_auth(authorization)));
  if (first.status != 401 || !first.headers.count("www-authenticate")) return first;
  {
    std::lock_guard lock(mutex_);
    // Another thread may have answered the same challenge meanwhile; answering again is harmless.
    MPK_CHECK(answer_challenge(session, first.headers["www-authenticate"]));
    authorization = authorization_;
  }
  return perform(with_auth(authorization));
}

}  // namespace mpspack::registry
