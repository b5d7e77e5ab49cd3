// The C API's handle registry, per-thread error message and status mapping (boundary.hpp).
#include "boundary.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace mpspack::capi {
namespace {

// A handle's address -> its kind. One lock for all: lookups are a hash probe, far below a model run's cost.
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<const void*, HandleKind>& registry() {
  static auto* r = new std::unordered_map<const void*, HandleKind>();  // never destroyed: handles may outlive main
  return *r;
}

thread_local std::string t_last_error;
thread_local int t_last_errno = 0;

const char* kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::Container: return "mpspack_container";
    case HandleKind::Model: return "mpspack_model";
    case HandleKind::Outputs: return "mpspack_outputs";
  }
  return "handle";
}

}  // namespace

void register_handle(const void* handle, HandleKind kind) {
  std::lock_guard lock(registry_mutex());
  registry()[handle] = kind;
}

bool unregister_handle(const void* handle, HandleKind kind) {
  if (!handle) return false;
  std::lock_guard lock(registry_mutex());
  auto it = registry().find(handle);
  if (it == registry().end() || it->second != kind) return false;
  registry().erase(it);
  return true;
}

bool is_live(const void* handle, HandleKind kind) {
  if (!handle) return false;
  std::lock_guard lock(registry_mutex());
  auto it = registry().find(handle);
  return it != registry().end() && it->second == kind;
}

mpspack_status fail(mpspack_status status, std::string message) { return fail_errno(status, std::move(message), 0); }

mpspack_status fail_errno(mpspack_status status, std::string message, int os_error) {
  t_last_error = std::move(message);
  t_last_errno = os_error;
  return status;
}

mpspack_status status_of(Error::Kind kind) {
  switch (kind) {
    case Error::Kind::Io: return MPSPACK_ERR_IO;
    case Error::Kind::NotThisFormat: return MPSPACK_ERR_NOT_CONTAINER;
    case Error::Kind::Corrupt: return MPSPACK_ERR_CORRUPT;
    case Error::Kind::Unsupported: return MPSPACK_ERR_UNSUPPORTED;
    case Error::Kind::Invalid: return MPSPACK_ERR_INVALID_ARGUMENT;
    case Error::Kind::Runtime: return MPSPACK_ERR_RUNTIME;
  }
  return MPSPACK_ERR_INTERNAL;
}

mpspack_status fail(const Error& e) { return fail(status_of(e.kind), e.message); }

mpspack_status bad_argument(std::string_view function, std::string_view argument, std::string_view problem) {
  return fail(MPSPACK_ERR_INVALID_ARGUMENT,
              std::string(function) + ": " + std::string(argument) + ": " + std::string(problem));
}

mpspack_status bad_handle(std::string_view function, std::string_view argument, HandleKind kind) {
  return fail(MPSPACK_ERR_INVALID_HANDLE, std::string(function) + ": " + std::string(argument) + ": not an open " +
                                              kind_name(kind) + " (NULL, closed, or another kind of handle)");
}

char* owned_string(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

}  // namespace mpspack::capi

using namespace mpspack::capi;

extern "C" {

const char* mpspack_last_error(void) { return t_last_error.c_str(); }

int32_t mpspack_last_errno(void) { return t_last_errno; }

const char* mpspack_status_name(mpspack_status status) {
  switch (status) {
    case MPSPACK_OK: return "MPSPACK_OK";
    case MPSPACK_ERR_INVALID_ARGUMENT: return "MPSPACK_ERR_INVALID_ARGUMENT";
    case MPSPACK_ERR_INVALID_HANDLE: return "MPSPACK_ERR_INVALID_HANDLE";
    case MPSPACK_ERR_NOT_FOUND: return "MPSPACK_ERR_NOT_FOUND";
    case MPSPACK_ERR_IO: return "MPSPACK_ERR_IO";
    case MPSPACK_ERR_NOT_CONTAINER: return "MPSPACK_ERR_NOT_CONTAINER";
    case MPSPACK_ERR_CORRUPT: return "MPSPACK_ERR_CORRUPT";
    case MPSPACK_ERR_UNSUPPORTED: return "MPSPACK_ERR_UNSUPPORTED";
    case MPSPACK_ERR_RUNTIME: return "MPSPACK_ERR_RUNTIME";
    case MPSPACK_ERR_CHECK_FAILED: return "MPSPACK_ERR_CHECK_FAILED";
    case MPSPACK_ERR_OUT_OF_MEMORY: return "MPSPACK_ERR_OUT_OF_MEMORY";
    case MPSPACK_ERR_INTERNAL: return "MPSPACK_ERR_INTERNAL";
  }
  return "unknown status";
}

void mpspack_string_free(char* s) { std::free(s); }

}  // extern "C"
