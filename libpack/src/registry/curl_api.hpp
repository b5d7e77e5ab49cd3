// The libcurl functions the registry client uses, from a libcurl opened at the first transfer (dlopen) rather than
// linked: libcurl brings libssl, libcrypto, nghttp2 and more, which every mpspack command would otherwise load at
// start, and which a machine that never talks to a registry need not have (as libzip, pt2/zip_api.hpp).
#pragma once

#include "mpspack/result.hpp"

#include <curl/curl.h>

namespace mpspack::registry {

// An X-macro list, one name a line, left as written: clang-format 14 does not lay such a list out stably.
// clang-format off
#define MPSPACK_CURL_FUNCTIONS(X) \
  X(curl_global_init)             \
  X(curl_easy_init)               \
  X(curl_easy_cleanup)            \
  X(curl_easy_reset)              \
  X(curl_easy_setopt)             \
  X(curl_easy_perform)            \
  X(curl_easy_getinfo)            \
  X(curl_easy_strerror)           \
  X(curl_slist_append)            \
  X(curl_slist_free_all)
// clang-format on

struct CurlApi {
#define MPSPACK_CURL_MEMBER(name) decltype(&::name) name = nullptr;
  MPSPACK_CURL_FUNCTIONS(MPSPACK_CURL_MEMBER)
#undef MPSPACK_CURL_MEMBER
};

// The table, filled (and curl_global_init called) on the first call from the libcurl this mpspack was built
// against (MPSPACK_LIBCURL_SONAME); a Runtime error naming the library when it cannot be loaded. Thread-safe.
Result<const CurlApi*> curl_api();

}  // namespace mpspack::registry
