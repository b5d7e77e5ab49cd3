// Hashes used by the format: XXH3-64 for segments and the header checksum (fast enough to verify
// at memory speed), SHA-256 for source files (what users compare with sha256sum).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace mpspack::format {

uint64_t xxh3_64(std::span<const uint8_t> bytes);

class Xxh3Stream {
 public:
  Xxh3Stream();
  ~Xxh3Stream();
  void update(const uint8_t* data, uint64_t size);
  uint64_t digest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// SHA-256 fed in pieces (Nettle; cmake/nettle.cmake says why Nettle).
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
