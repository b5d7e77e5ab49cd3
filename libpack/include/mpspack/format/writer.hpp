// Writing a container: lay out the segments, stream their bytes (hashing as they go), then write
// the metadata and the header last, all into a temp file that is renamed into place.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/file.hpp"
#include "mpspack/format/container.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/result.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

namespace mpspack::format {

// One segment to write. Its index in the list is its index in Manifest::segments.
struct PendingSegment {
  SegmentKind kind = SegmentKind::Library;
  std::string name;
  ByteView bytes;                        // usually a view into a mapped input: never copied whole
  std::optional<uint64_t> congruent_to;  // place at an offset equal to this modulo 64 KiB
};

// The offsets the segments get, in order; same inputs, same layout. `data_offset` is where the
// data region starts.
std::vector<SegmentInfo> lay_out(const std::vector<PendingSegment>& pending, uint64_t data_offset);

// Writes `manifest` (its `segments` are filled in here from `pending`) and the segment bytes to
// `path` atomically (fsynced first with Durability::disk). Returns the manifest as written. `complete`, when given,
// runs after the segments are written and may fill in fields computed meanwhile (source hashes); it must not change the
// size of the encoded metadata.
Result<Manifest> write_container(const std::filesystem::path& path, Manifest manifest,
                                 const std::vector<PendingSegment>& pending, const Progress& progress = {},
                                 const std::function<Status(Manifest&)>& complete = {},
                                 Durability durability = Durability::page_cache);

}  // namespace mpspack::format
