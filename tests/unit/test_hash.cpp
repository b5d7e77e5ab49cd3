// The format's hashes: the dispatched XXH3 (AVX2 on CPUs that have it) must give the reference
// values of xxhash's portable code, one-shot and streamed in any chunking; SHA-256 the standard's vectors and
// Nettle's own digest (the SHA-extension loop that takes whole blocks from Nettle must agree with it).
#include "mpspack/format/hash.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <catch2/catch.hpp>
#include <nettle/sha2.h>

#include <random>
#include <vector>

using namespace mpspack::format;

namespace {
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}
}  // namespace

TEST_CASE("xxh3_64 matches xxhash's portable code at every length class") {
  CHECK(xxh3_64({}) == 0x2D06800538D394C2ull);  // XXH3_64bits of no bytes, from xxhash's spec
  // 0..3, 4..8, 9..16, 17..128, 129..240 and long inputs take different code paths in XXH3;
  // the long path (>240 bytes) is the one with the vector loops the AVX2 build replaces.
  for (size_t n : std::initializer_list<size_t>{0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 1025, 65536 + 7,
                                                (4u << 20) + 3}) {
    auto b = random_bytes(n, static_cast<uint32_t>(n));
    INFO("length " << n);
    CHECK(xxh3_64(b) == XXH3_64bits(b.data(), b.size()));
  }
}

TEST_CASE("Xxh3Stream gives the one-shot hash however the bytes are split") {
  auto b = random_bytes((3u << 20) + 333, 7);
  const uint64_t expected = XXH3_64bits(b.data(), b.size());
  for (size_t chunk : std::initializer_list<size_t>{1, 63, 64, 1000, 1u << 16, 1u << 20, 16u << 20}) {
    Xxh3Stream s;
    const size_t step = chunk == 1 ? 4099 : chunk;  // byte by byte only at the start: keeps it quick
    size_t done = 0;
    if (chunk == 1)
      for (; done < 300; ++done) s.update(b.data() + done, 1);
    while (done < b.size()) {
      size_t n = std::min(step, b.size() - done);
      s.update(b.data() + done, n);
      done += n;
    }
    INFO("chunk " << chunk);
    CHECK(s.digest() == expected);
  }
}

TEST_CASE("SegmentHasher: the whole hash and one hash per 16 MiB chunk, however the bytes are fed") {
  CHECK(hash_chunk_count(0) == 0);
  CHECK(hash_chunk_count(kHashChunkBytes) == 0);
  CHECK(hash_chunk_count(kHashChunkBytes + 1) == 2);
  CHECK(hash_chunk_count(3 * kHashChunkBytes) == 3);
  for (uint64_t size : {kHashChunkBytes - 3, kHashChunkBytes, 2 * kHashChunkBytes + 12345}) {
    const std::vector<uint8_t> b = random_bytes(size, uint32_t(size));
    for (uint64_t piece : {uint64_t(1) << 20, uint64_t(999983), size}) {
      DYNAMIC_SECTION(size << " bytes fed " << piece << " at a time") {
        SegmentHasher h(size);
        for (uint64_t off = 0; off < size; off += piece) h.update(b.data() + off, std::min(piece, size - off));
        CHECK(h.digest() == XXH3_64bits(b.data(), b.size()));
        REQUIRE(h.chunk_digests().size() == hash_chunk_count(size));
        for (uint64_t k = 0; k < h.chunk_digests().size(); ++k) {
          const uint64_t begin = k * kHashChunkBytes, n = std::min(kHashChunkBytes, size - begin);
          CHECK(h.chunk_digests()[k] == XXH3_64bits(b.data() + begin, n));
        }
      }
    }
  }
}

TEST_CASE("sha256_hex gives the FIPS 180-2 test vectors") {
  auto hex = [](std::string_view s) {
    return mpspack::format::sha256_hex({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  };
  CHECK(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Two blocks, so the padding spills into a second one.
  CHECK(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a's: many blocks through one update.
  CHECK(hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("Sha256Stream gives the FIPS 180-2 digest however the bytes are split") {
  // A million 'a's fed in pieces that straddle the 64-byte block boundary in every way.
  const std::string a(1000000, 'a');
  for (size_t piece : std::initializer_list<size_t>{1, 55, 63, 64, 65, 4096, 1u << 20}) {
    Sha256Stream s;
    for (size_t done = 0; done < a.size();) {
      const size_t n = std::min(piece, a.size() - done);
      s.update(reinterpret_cast<const uint8_t*>(a.data()) + done, n);
      done += n;
    }
    INFO("piece " << piece);
    CHECK(s.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
}

TEST_CASE("Sha256Stream gives Nettle's own digest at every length and split (the many-block SHA-extension loop)") {
  // Where the CPU has the SHA extensions, whole blocks skip Nettle's update; Nettle alone is the reference.
  auto nettle_hex = [](const std::vector<uint8_t>& b) {
    sha256_ctx c;
    sha256_init(&c);
    for (uint8_t x : b) sha256_update(&c, 1, &x);  // one byte a call: Nettle's own buffering only
    uint8_t md[SHA256_DIGEST_SIZE];
    sha256_digest(&c, sizeof md, md);
    std::string hex;
    for (uint8_t x : md) hex += "0123456789abcdef"[x >> 4], hex += "0123456789abcdef"[x & 15];
    return hex;
  };
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (size_t n : {4095u, 4096u, 4097u, 65536u + 37u, (1u << 20) + 129u}) sizes.push_back(n);
  for (size_t n : sizes) {
    const auto bytes = random_bytes(n, static_cast<uint32_t>(n) + 7);
    const std::string want = nettle_hex(bytes);
    for (size_t piece : std::initializer_list<size_t>{1, 63, 64, 65, 100, 4096, size_t(1) << 30}) {
      Sha256Stream s;
      for (size_t done = 0; done < n;) {
        const size_t k = std::min(piece, n - done);
        s.update(bytes.data() + done, k);
        done += k;
      }
      INFO("size " << n << ", piece " << piece);
      CHECK(s.hex_digest() == want);
    }
  }
}
