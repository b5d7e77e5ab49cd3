// `mpspack unpack`: every library back as it was given, byte for byte.
#pragma once

#include "mpspack/file.hpp"
#include "mpspack/format/container.hpp"
#include "mpspack/result.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace mpspack::pack {

// How to build the container again from the files unpack wrote (docs/CLI.md, "unpack").
struct Rebuild {
  std::vector<std::string> args;  // `mpspack` arguments ("build", ...), file names relative to DIR
  bool identical = false;         // run in DIR by the same mpspack version, they give the container's bytes back
  std::string why_not;            // when not identical: the first reason
};

struct Unpacked {
  std::vector<std::filesystem::path> written;
  Rebuild rebuild;
};

// Name of the script unpack writes beside the files: it runs `mpspack` with Rebuild::args in its folder.
inline constexpr const char* kRebuildScript = "rebuild.sh";

// Writes every file the container was built from: each library, each external blob, each cubin and each recorded
// example tensor, under the file name its source records (docs/FORMAT.md, "Sources") when the container was built
// from files, else DIR/<name>.so, DIR/<name>_weights.blob, the cubin's own name and <segment name>.bin; each with
// the permission bits its source records (0755 for libraries and 0644 for the rest when none), and the script
// kRebuildScript. Returns the paths written and the rebuild command. Refused before anything is written: names
// that would leave DIR, two outputs with the same name, and more than unpack_limit() bytes in all. Each library is
// checked against its original_sha256 as it streams. All files appear together or none does (each is written
// under a temp name, and all are renamed into place once every one is complete).
Result<Unpacked> unpack(const format::Container& c, const std::filesystem::path& dir,
                        const format::Progress& progress = {}, Durability durability = Durability::page_cache);

// The most bytes unpack writes from a container of `container_size` bytes: 16 times that, the bound the format
// sets on what a container may restore to (docs/CLI.md); unpack holds to it even for a container it did not check.
uint64_t unpack_limit(uint64_t container_size);

// The original bytes of library `index`, streamed through `sink` (used by unpack and diff).
Status restore_library_bytes(const format::Container& c, uint32_t index,
                             const std::function<Status(const uint8_t*, uint64_t)>& sink);

// A stored name is safe when it is a single path component of printable characters.
bool is_safe_name(std::string_view name);

}  // namespace mpspack::pack
