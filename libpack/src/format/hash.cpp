#include "mpspack/format/hash.hpp"

#include "hash_xxh3_variants.hpp"
#ifdef MPSPACK_SHA256_NI
#include "hash_sha256_ni.hpp"
#endif

#include <nettle/sha2.h>

#include <algorithm>
#include <cpuid.h>

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
Xxh3Stream::Xxh3Stream(Xxh3Stream&&) noexcept = default;
Xxh3Stream& Xxh3Stream::operator=(Xxh3Stream&&) noexcept = default;
void Xxh3Stream::update(const uint8_t* data, uint64_t size) { xxh3().update(&state_->s, data, size); }
uint64_t Xxh3Stream::digest() const { return xxh3().digest(&state_->s); }
void Xxh3Stream::reset() { xxh3().reset(&state_->s); }

uint64_t hash_chunk_count(uint64_t size) {
  return size <= kHashChunkBytes ? 0 : (size + kHashChunkBytes - 1) / kHashChunkBytes;
}

SegmentHasher::SegmentHasher(uint64_t size) : left_(size), chunked_(hash_chunk_count(size) > 0) {
  chunks_.reserve(hash_chunk_count(size));
}

void SegmentHasher::update(const uint8_t* data, uint64_t size) {
  whole_.update(data, size);
  while (chunked_ && size > 0 && left_ > 0) {
    const uint64_t n = std::min({size, left_, kHashChunkBytes - in_chunk_});
    chunk_.update(data, n);
    data += n;
    size -= n;
    left_ -= n;
    in_chunk_ += n;
    if (in_chunk_ == kHashChunkBytes || left_ == 0) {  // a whole chunk, or the segment's last
      chunks_.push_back(chunk_.digest());
      chunk_.reset();
      in_chunk_ = 0;
    }
  }
}

// Nettle picks its SHA-extension code at the first call where the CPU has it.
struct Sha256Stream::State {
  sha256_ctx ctx;
};

Sha256Stream::Sha256Stream() : state_(std::make_unique<State>()) { sha256_init(&state_->ctx); }
Sha256Stream::~Sha256Stream() = default;

#ifdef MPSPACK_SHA256_NI
namespace {
// CPUID directly: clang 14's __builtin_cpu_supports does not know "sha" (the fuzz preset builds with clang).
bool has_sha_extensions() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool sse41 = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_1) != 0;
    const bool sha = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA) != 0;
    return sse41 && sha;
  }();
  return has;
}
}  // namespace
#endif

void Sha256Stream::update(const uint8_t* data, uint64_t size) {
  static_assert(sizeof(size_t) == sizeof(uint64_t), "Nettle takes the length as a size_t");
  sha256_ctx& c = state_->ctx;
#ifdef MPSPACK_SHA256_NI
  // The whole blocks go to the multi-block loop (hash_sha256_ni.cpp says why), straight into Nettle's
  // state: Nettle keeps the partial block it buffers in `block`/`index` and the blocks compressed in
  // `count`, which its digest pads with. A partial block already buffered is completed by Nettle first.
  if (has_sha_extensions() && size >= SHA256_BLOCK_SIZE) {
    if (c.index != 0) {
      const uint64_t fill = SHA256_BLOCK_SIZE - c.index;
      sha256_update(&c, size_t(fill), data);
      data += fill;
      size -= fill;
    }
    const uint64_t blocks = size / SHA256_BLOCK_SIZE;
    sha256_ni_blocks(c.state, data, blocks);
    c.count += blocks;
    data += blocks * SHA256_BLOCK_SIZE;
    size -= blocks * SHA256_BLOCK_SIZE;
  }
#endif
  sha256_update(&c, size_t(size), data);
}

std::string Sha256Stream::hex_digest() {
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_digest(&state_->ctx, sizeof md, md);
  std::string hex;
  hex.reserve(2 * sizeof md);
  for (uint8_t b : md) hex += fmt::format("{:02x}", b);
  return hex;
}

std::string sha256_hex(std::span<const uint8_t> bytes) {
  Sha256Stream s;
  s.update(bytes.data(), bytes.size());
  return s.hex_digest();
}

}  // namespace mpspack::format
