// The C API's boundary (mpspack.h): the registry that validates handles, the per-thread error message, and
// guarded(), which every exported function runs its body in so that no C++ exception reaches a C caller.
#pragma once

#include "mpspack/mpspack.h"
#include "mpspack/result.hpp"

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

namespace mpspack::capi {

enum class HandleKind : uint8_t { Container, Model, Outputs };

// Every handle the API returns is registered until it is closed: a call given NULL, a closed handle or one of
// another kind is refused by lookup, never dereferenced.
void register_handle(const void* handle, HandleKind kind);
// False when `handle` is not a live handle of `kind` (it is then left alone).
bool unregister_handle(const void* handle, HandleKind kind);
bool is_live(const void* handle, HandleKind kind);

// Sets the calling thread's message (and errno 0) and returns `status`.
mpspack_status fail(mpspack_status status, std::string message);
// The same, with the OS error behind it (mpspack_last_errno()).
mpspack_status fail_errno(mpspack_status status, std::string message, int os_error);
// An Error of libpack as its status: the kind decides, the message is kept.
mpspack_status fail(const Error& e);
mpspack_status bad_argument(std::string_view function, std::string_view argument, std::string_view problem);
mpspack_status bad_handle(std::string_view function, std::string_view argument, HandleKind kind);

// The status an Error::Kind maps to.
mpspack_status status_of(Error::Kind kind);

// The body, with every exception caught: std::bad_alloc is MPSPACK_ERR_OUT_OF_MEMORY, anything else
// MPSPACK_ERR_INTERNAL naming the function.
template <class F>
mpspack_status guarded(const char* function, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(MPSPACK_ERR_OUT_OF_MEMORY, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(MPSPACK_ERR_INTERNAL, std::string(function) + ": internal error: " + e.what());
  } catch (...) { return fail(MPSPACK_ERR_INTERNAL, std::string(function) + ": internal error (unknown exception)"); }
}

// A copy of the caller's string the API returns through char** (freed by mpspack_string_free), or NULL when out
// of memory.
char* owned_string(const std::string& s);

// The options struct the caller passed, over the defaults: only the first struct_size bytes of it are read (a
// caller built against a shorter, older struct gets the defaults for the rest). NULL: the defaults.
template <class T>
mpspack_status read_options(const char* function, const T* given, const T& defaults, T& out) {
  out = defaults;
  if (!given) return MPSPACK_OK;
  if (given->struct_size < sizeof(uint32_t) || given->struct_size > sizeof(T))
    return bad_argument(function, "options",
                        "struct_size " + std::to_string(given->struct_size) +
                            " is not a size of this struct (start from its _init function)");
  std::memcpy(static_cast<void*>(&out), given, given->struct_size);
  out.struct_size = sizeof(T);
  return MPSPACK_OK;
}

}  // namespace mpspack::capi

// The checks every exported function starts with (inside guarded()): a live handle of its kind, a non-NULL pointer.
#define MPK_C_LIVE(handle, kind, function, argument) \
  if (!::mpspack::capi::is_live(handle, kind)) return ::mpspack::capi::bad_handle(function, argument, kind)
#define MPK_C_NOT_NULL(pointer, function, argument) \
  if (!(pointer)) return ::mpspack::capi::bad_argument(function, argument, "NULL")
