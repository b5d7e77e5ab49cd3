// One library of a container as a container of its own: its library segment, its weights, its cubins and its
// examples, renumbered, written as build writes (so it verifies and runs like the original).
#pragma once

#include "mpspack/format/container.hpp"

#include <filesystem>
#include <optional>
#include <set>

namespace mpspack::pack {

// The library named `name`, or an error that lists the names there are.
Result<uint32_t> find_library(const Manifest& m, std::string_view name, std::string_view what);

// The segments the library at `library` needs: its own, its weights', its cubins' and its examples'.
std::set<uint32_t> library_segments(const Manifest& m, uint32_t library);

// Writes the library at `library` of `c`, with what it needs, to `output` (atomically).
Result<Manifest> write_library_subset(const format::Container& c, uint32_t library, const std::filesystem::path& output,
                                      const format::Progress& progress = {});

}  // namespace mpspack::pack
