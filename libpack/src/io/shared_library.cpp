#include "mpspack/shared_library.hpp"

#include <dlfcn.h>

namespace mpspack {

Result<void*> open_shared_library(const std::string& name, int flags) {
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | flags);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return make_error(Error::Kind::Runtime, "cannot load {}: {}", name, why ? why : "unknown reason");
  }
  return handle;
}

Status find_symbol(void* handle, const char* library, const char* name, void*& fn) {
  ::dlerror();
  fn = ::dlsym(handle, name);
  if (fn == nullptr) return make_error(Error::Kind::Runtime, "{} has no {} (another version?)", library, name);
  return {};
}

}  // namespace mpspack
