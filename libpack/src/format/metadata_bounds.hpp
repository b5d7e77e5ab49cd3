// The FlatBuffers verification of a metadata block, bounded by what decoding it would produce.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/result.hpp"

#include <cstdint>

namespace mpspack::format {

// What decoding a block produces, in the units of rule M4 (docs/FORMAT.md, "Limits").
struct DecodedSize {
  uint64_t entries = 0;  // list entries, counted once per reference
  uint64_t bytes = 0;    // decoded size
};

// Runs FlatBuffers' Verifier over `block` (8-byte aligned in memory) one table at a time, adding up
// the decoded size as it goes and refusing (rule M4) as soon as it passes the limits, before the
// work of verifying a list is done: a list referenced a million times is charged a million times,
// so verification and decoding both stay proportional to the limits, never to the sharing.
// Refuses a block that is not a verified "MPKM" buffer (rule M2).
Result<DecodedSize> verify_bounded(ByteView block);

}  // namespace mpspack::format
