// One import of a loaded model library to send to a function of ours: part of the backend interface
// (Backend::weight_copy_routes, backend.hpp), which the loader carries out by rewriting the library's own GOT
// slots (loader/import_slots.hpp). Here, not in the loader, so that a backend depends on no loader header.
#pragma once

#include <string_view>

namespace mpspack::runtime {

struct ImportRoute {
  std::string_view name;  // the imported function, e.g. "malloc", "cudaMemcpy"
  void* function;         // what the library's calls of it reach instead
  // A value of ours may reach this import (a block freed by free): then every reference to it must be a GOT slot
  // we rewrite, and a library that stores its address elsewhere is not routed. Otherwise such a reference only
  // reaches the original, which is safe.
  bool every_reference = false;
};

}  // namespace mpspack::runtime
