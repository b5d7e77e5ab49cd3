#include "hash.hpp"

#define XXH_INLINE_ALL
#include <openssl/evp.h>
#include <xxhash.h>

#include <fmt/format.h>

namespace mpspack::format {

uint64_t xxh3_64(std::span<const uint8_t> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

struct Xxh3Stream::State {
  XXH3_state_t s;
};

Xxh3Stream::Xxh3Stream() : state_(std::make_unique<State>()) { XXH3_64bits_reset(&state_->s); }
Xxh3Stream::~Xxh3Stream() = default;
void Xxh3Stream::update(const uint8_t* data, uint64_t size) { XXH3_64bits_update(&state_->s, data, size); }
uint64_t Xxh3Stream::digest() const { return XXH3_64bits_digest(&state_->s); }

std::string sha256_hex(std::span<const uint8_t> bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  // One-shot EVP digest; OpenSSL uses the CPU's SHA extensions where present.
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

}  // namespace mpspack::format
