// A bounds-checked reader of the DER subset key files use (X.690): one-byte tags, definite lengths in minimal form,
// at most 4 length bytes. Enough for PKCS#8 PrivateKeyInfo, SEC 1 ECPrivateKey, SubjectPublicKeyInfo and ECDSA
// signatures; anything else (indefinite or non-minimal lengths, high tag numbers, a value past its parent) is an
// error naming `what` and the offset, never a read outside the bytes.
#pragma once

#include "mpspack/result.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mpspack::sign::der {

inline constexpr uint8_t kInteger = 0x02, kBitString = 0x03, kOctetString = 0x04, kNull = 0x05, kOid = 0x06,
                         kSequence = 0x30;
// Context-specific constructed tags [0] and [1] (ECPrivateKey's parameters and publicKey).
inline constexpr uint8_t kContext0 = 0xa0, kContext1 = 0xa1;

struct Element {
  uint8_t tag = 0;
  std::span<const uint8_t> value;
  uint64_t offset = 0;  // of the tag, in the outermost bytes
};

// Reads the elements of one constructed value (or of the whole input) in order.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, std::string what, uint64_t base = 0)
      : bytes_(bytes), what_(std::move(what)), base_(base) {}
  bool at_end() const { return pos_ == bytes_.size(); }
  // The next element; an error when there is none or it is malformed.
  Result<Element> next(std::string_view field);
  // The next element, which must have `tag`.
  Result<Element> expect(uint8_t tag, std::string_view field);
  // The next element when its tag is `tag`; nullopt (nothing consumed) otherwise or at the end.
  Result<std::optional<Element>> optional(uint8_t tag, std::string_view field);
  // A reader over a constructed element's contents.
  Reader enter(const Element& e) const { return Reader(e.value, what_, e.offset + header_bytes(e)); }
  // Fails unless every byte was read (trailing data after a structure).
  Status finish(std::string_view field) const;
  const std::string& what() const { return what_; }

 private:
  uint64_t header_bytes(const Element& e) const;
  std::span<const uint8_t> bytes_;
  std::string what_;
  uint64_t base_ = 0;
  uint64_t pos_ = 0;
};

// The dotted form of an OID's value ("1.3.101.112"), for messages.
std::string oid_text(std::span<const uint8_t> value);

// An INTEGER's value as an unsigned big-endian number without leading zeros; an error when it is negative or not
// minimally encoded.
Result<std::vector<uint8_t>> unsigned_integer(const Element& e, const std::string& what, std::string_view field);

// DER of SEQUENCE { INTEGER r, INTEGER s } for unsigned big-endian r and s (leading zeros dropped).
std::vector<uint8_t> encode_signature(std::span<const uint8_t> r, std::span<const uint8_t> s);

}  // namespace mpspack::sign::der
