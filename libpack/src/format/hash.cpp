#include "hash.hpp"

#include "hash_xxh3_variants.hpp"

#include <openssl/evp.h>

#include <fmt/format.h>

namespace mpspack::format {

namespace {

namespace portable {
#include "hash_xxh3_functions.inc"
}  // namespace portable

// The fastest variant this CPU runs, decided once.
const Xxh3Functions& xxh3() {
  static const Xxh3Functions chosen = [] {
#ifdef MPSPACK_XXH3_AVX2
    if (__builtin_cpu_supports("avx2"))
      return Xxh3Functions{xxh3_avx2::oneshot, xxh3_avx2::reset, xxh3_avx2::update, xxh3_avx2::digest};
#endif
    return Xxh3Functions{portable::oneshot, portable::reset, portable::update, portable::digest};
  }();
  return chosen;
}

}  // namespace

uint64_t xxh3_64(std::span<const uint8_t> bytes) { return xxh3().oneshot(bytes.data(), bytes.size()); }

struct Xxh3Stream::State {
  XXH3_state_t s;
};

Xxh3Stream::Xxh3Stream() : state_(std::make_unique<State>()) { xxh3().reset(&state_->s); }
Xxh3Stream::~Xxh3Stream() = default;
void Xxh3Stream::update(const uint8_t* data, uint64_t size) { xxh3().update(&state_->s, data, size); }
uint64_t Xxh3Stream::digest() const { return xxh3().digest(&state_->s); }

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
