// Hashes used by the format: XXH3-64 for segments and the header checksum (fast enough to verify
// at memory speed), SHA-256 for source files (what users compare with sha256sum).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mpspack::format {

uint64_t xxh3_64(std::span<const uint8_t> bytes);

class Xxh3Stream {
 public:
  Xxh3Stream();
  ~Xxh3Stream();
  Xxh3Stream(Xxh3Stream&&) noexcept;
  Xxh3Stream& operator=(Xxh3Stream&&) noexcept;
  void update(const uint8_t* data, uint64_t size);
  uint64_t digest() const;
  void reset();  // as new

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A segment larger than this also records the XXH3-64 of each consecutive piece of this size (the last one
// shorter; docs/FORMAT.md, Segment.chunk_xxh3), so that a reader can check it on all its cores at once: one
// XXH3 stream is sequential, and loading checks every weight byte before the first result is reported.
inline constexpr uint64_t kHashChunkBytes = 16ull << 20;

// How many chunk hashes a segment of `size` bytes records: none up to kHashChunkBytes, else one per chunk.
uint64_t hash_chunk_count(uint64_t size);

// XXH3-64 of a segment and of each of its chunks, fed in pieces of any size, in order.
class SegmentHasher {
 public:
  explicit SegmentHasher(uint64_t size);
  void update(const uint8_t* data, uint64_t size);
  uint64_t digest() const { return whole_.digest(); }
  // One per chunk (hash_chunk_count(size) of them), once every byte was fed.
  const std::vector<uint64_t>& chunk_digests() const { return chunks_; }

 private:
  Xxh3Stream whole_, chunk_;
  uint64_t left_;          // bytes still to come
  uint64_t in_chunk_ = 0;  // bytes of the current chunk fed so far
  bool chunked_;
  std::vector<uint64_t> chunks_;
};

// SHA-256 fed in pieces (Nettle; cmake/nettle.cmake says why Nettle; whole blocks go to hash_sha256_ni.cpp
// where the CPU has the SHA extensions).
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  void update(const uint8_t* data, uint64_t size);
  // Lowercase hex, as sha256sum prints it. Call once, after the last update.
  std::string hex_digest();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Lowercase hex SHA-256 of the bytes.
std::string sha256_hex(std::span<const uint8_t> bytes);

}  // namespace mpspack::format
