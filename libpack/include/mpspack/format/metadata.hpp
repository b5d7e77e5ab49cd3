// The FlatBuffers metadata block <-> Manifest. The generated FlatBuffers code stays inside libpack.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/result.hpp"

#include <cstdint>
#include <vector>

namespace mpspack::format {

// Caps checked before anything is allocated from a container's metadata (docs/FORMAT.md, rules
// M1..M5). FlatBuffers lets many offsets point at one string or table, so a small block can stand for
// a huge decoded manifest: the totals bound what decoding produces across the whole block, whatever
// is shared.
namespace limits {
inline constexpr uint64_t metadata_bytes = 64ull << 20;  // M1: the block itself
inline constexpr uint64_t items = 1u << 20;              // M3: entries in any one list
inline constexpr uint64_t dims = 64;                     // M3: shape and stride lengths
inline constexpr uint64_t patches = 4096;                // M3: restore patches of a library
inline constexpr uint64_t patch_bytes = 1u << 20;        // M3: bytes of one patch
inline constexpr uint64_t total_entries = 1u << 22;      // M4: list entries in the whole block
inline constexpr uint64_t decoded_bytes = 64ull << 20;   // M4: decoded size of the whole block
inline constexpr uint64_t name_bytes = 4096;             // M5: any string

// M4's decoded size: what each decoded object counts (about what it takes in memory).
inline constexpr uint64_t table_cost = 128;  // per table (a source, a segment, a constant, ...)
inline constexpr uint64_t string_cost = 32;  // per string, plus its length
inline constexpr uint64_t integer_cost = 8;  // per integer in a list (shape, stride, cubins)
}  // namespace limits

// Serializes deterministically: the same manifest gives the same bytes, and two manifests that
// differ only in integer values (offsets, hashes) give blocks of the same size.
std::vector<uint8_t> encode_metadata(const Manifest& m);

// Runs the FlatBuffers Verifier, checks the caps, and converts. `what` names the file in errors.
Result<Manifest> decode_metadata(ByteView block);

}  // namespace mpspack::format
