#include "curl_api.hpp"

#include "mpspack/shared_library.hpp"

namespace mpspack::registry {
namespace {

Result<CurlApi> load() {
  MPK_TRY(void* handle, open_shared_library(MPSPACK_LIBCURL_SONAME));
  CurlApi api;
#define MPSPACK_CURL_LOAD(name) MPK_CHECK(find_function(handle, MPSPACK_LIBCURL_SONAME, #name, api.name));
  MPSPACK_CURL_FUNCTIONS(MPSPACK_CURL_LOAD)
#undef MPSPACK_CURL_LOAD
  if (api.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return make_error(Error::Kind::Runtime, "{}: curl_global_init failed", MPSPACK_LIBCURL_SONAME);
  return api;
}

}  // namespace

Result<const CurlApi*> curl_api() {
  static const Result<CurlApi> loaded = load();  // once; the library stays loaded
  if (!loaded.ok()) return loaded.error();
  return &loaded.value();
}

}  // namespace mpspack::registry
