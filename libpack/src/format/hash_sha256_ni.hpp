// SHA-256's compression with the x86 SHA extensions (hash_sha256_ni.cpp); hash.cpp decides at run time.
#pragma once

#include <cstdint>

namespace mpspack::format {

// Runs the compression over `blocks` whole 64-byte blocks at `data`, updating `state` (A..H, as Nettle's
// sha256_ctx keeps it). Only on a CPU with the SHA extensions and SSE4.1.
void sha256_ni_blocks(uint32_t state[8], const uint8_t* data, uint64_t blocks);

}  // namespace mpspack::format
