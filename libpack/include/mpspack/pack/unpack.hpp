// `mpspack unpack`: every library back as it was given, byte for byte.
#pragma once

#include "mpspack/file.hpp"
#include "mpspack/format/container.hpp"
#include "mpspack/result.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace mpspack::pack {

// Writes DIR/<name>.so for each library, DIR/<name>_weights.blob for external-blob libraries and
// each cubin under its own name. Returns the paths written. Refused before anything is written: names that would
// leave DIR, two outputs with the same name, and more than unpack_limit() bytes in all. Each library is checked
// against its original_sha256 as it streams. All files appear together or none does (each is written under a
// temp name, and all are renamed into place once every one is complete).
Result<std::vector<std::filesystem::path>> unpack(const format::Container& c, const std::filesystem::path& dir,
                                                  const format::Progress& progress = {},
                                                  Durability durability = Durability::page_cache);

// The most bytes unpack writes from a container of `container_size` bytes: 16 times that, the bound the format
// sets on what a container may restore to (docs/CLI.md); unpack holds to it even for a container it did not check.
uint64_t unpack_limit(uint64_t container_size);

// The original bytes of library `index`, streamed through `sink` (used by unpack and diff).
Status restore_library_bytes(const format::Container& c, uint32_t index,
                             const std::function<Status(const uint8_t*, uint64_t)>& sink);

// A stored name is safe when it is a single path component of printable characters.
bool is_safe_name(std::string_view name);

}  // namespace mpspack::pack
