// Prints every name mpspack's shim provides, one per line: what mpspack_shim_provided_symbols() answers in a
// program linked as mpspack is (with the CUDA plugin's names when the build has CUDA). docs/tools/shim_table.py
// checks the provided-name lists it reads against this.
#include "runtime/backend/backend.hpp"
#include "runtime/shim/provided.hpp"

#include <cstdio>

int main() {
  std::fprintf(stderr, "backends built: %.*s\n", int(mpspack::runtime::built_backends().size()),
               mpspack::runtime::built_backends().data());
  for (std::string_view name : mpspack::shim::mpspack_shim_provided_symbols())
    std::printf("%.*s\n", int(name.size()), name.data());
  return 0;
}
