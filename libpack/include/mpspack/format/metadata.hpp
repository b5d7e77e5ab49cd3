// The FlatBuffers metadata block <-> Manifest. The generated FlatBuffers code stays inside libpack.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/model.hpp"
#include "mpspack/result.hpp"

#include <cstdint>
#include <vector>

namespace mpspack::format {

// Caps checked before anything is allocated from a container's metadata (docs/FORMAT.md, "Limits").
namespace limits {
inline constexpr uint64_t metadata_bytes = 256ull << 20;  // 256 MiB of metadata at most
inline constexpr uint64_t items = 1u << 20;               // segments, libraries, constants, names, ...
inline constexpr uint64_t name_bytes = 4096;
inline constexpr uint64_t dims = 64;
}  // namespace limits

// Serializes deterministically: the same manifest gives the same bytes, and two manifests that
// differ only in integer values (offsets, hashes) give blocks of the same size.
std::vector<uint8_t> encode_metadata(const Manifest& m);

// Runs the FlatBuffers Verifier, checks the caps, and converts. `what` names the file in errors.
Result<Manifest> decode_metadata(ByteView block);

}  // namespace mpspack::format
