// Blob transfer: ask whether the registry has a blob, upload one, stream one down while checking its digest.
#pragma once

#include "client.hpp"

namespace mpspack::registry {

Result<bool> blob_exists(Client& client, HttpSession& session, const std::string& digest);

// Blobs up to `chunk_bytes` go up in one PUT; larger ones in PATCH chunks of that size, then a PUT that names the
// digest. A chunked upload records its session after each chunk (upload_state.hpp), and one an earlier run left
// unfinished goes on where the registry has it. `progress(n)` is told of each chunk's bytes as they are accepted
// (and of the resumed ones at once). Returns the bytes an earlier run had uploaded.
Result<uint64_t> upload_blob(Client& client, HttpSession& session, const std::string& digest,
                             std::span<const uint8_t> bytes, uint64_t chunk_bytes,
                             const std::function<void(uint64_t)>& progress);

// Drops the recorded session of a blob that need not go up (the registry has it).
void forget_upload(const Client& client, const std::string& digest);

// Streams the blob into `write(offset_in_blob, data, size)`; fails unless exactly `size` bytes arrive and they
// hash to `digest`.
Status fetch_blob(Client& client, HttpSession& session, const std::string& digest, uint64_t size,
                  const std::function<Status(uint64_t, const uint8_t*, size_t)>& write);

// A small blob (a config) of `size` bytes into memory, checked against its digest; refused above `max_size`.
Result<std::string> fetch_small_blob(Client& client, HttpSession& session, const std::string& digest, uint64_t size,
                                     uint64_t max_size);

}  // namespace mpspack::registry
