// Shared libraries opened when a command first needs them (dlopen) rather than linked: each library linked into
// mpspack is loaded and relocated at every start, which is most of what `inspect` costs (docs/PERFORMANCE.md,
// "inspect"). Only the commands that use one pay for it. Used for libzip (.pt2 packages), libsleef (the loader)
// and the backend plugins.
#pragma once

#include "mpspack/result.hpp"

#include <string>

namespace mpspack {

// dlopen(name, RTLD_NOW | flags) (RTLD_LOCAL unless flags says RTLD_GLOBAL); a Runtime error quoting dlerror()
// when it cannot be loaded. The handle is never closed: these libraries stay for the life of the process.
Result<void*> open_shared_library(const std::string& name, int flags = 0);

// dlsym(handle, name) into `fn` (a function pointer of the right type); a Runtime error naming `library` and
// the symbol when it is missing.
Status find_symbol(void* handle, const char* library, const char* name, void*& fn);

template <class Fn>
Status find_function(void* handle, const char* library, const char* name, Fn& fn) {
  void* p = nullptr;
  MPK_CHECK(find_symbol(handle, library, name, p));
  fn = reinterpret_cast<Fn>(p);
  return {};
}

}  // namespace mpspack
