// A loaded library's calls to some of its imports sent to functions of ours, by rewriting the library's own GOT
// slots for them: nothing else in the process is affected. The loader uses it for the library's allocations and
// copies (large_blocks.hpp) and for the host-to-device copies of its weights (Backend::weight_copy_routes).
#pragma once

#include "runtime/backend/import_route.hpp"
#include "mpspack/elf/elf_file.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mpspack::runtime {

// Points `lib`'s (loaded at `base`) GOT slots for each route's import at its function, in the routes' order, and
// returns "", or says why not: it imports one of `refused` (functions that could be handed a value of ours they
// cannot handle), it does not import `required` (when not empty), a slot lies outside the writable segments (then
// none is written), or a slot could not be written (then the earlier ones stay written: each route must be safe
// on its own).
std::string route_imports(const elf::ElfFile& lib, uintptr_t base, std::span<const ImportRoute> routes,
                          std::span<const std::string_view> refused = {}, std::string_view required = {});

}  // namespace mpspack::runtime
