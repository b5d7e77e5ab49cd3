// The one way libpack looks at raw bytes: a ByteView over a span, where every read is bounds- and
// overflow-checked and integers are decoded little-endian byte by byte (input may be unaligned and
// the host could be big-endian). Nothing else in libpack casts raw pointers to structs.
#pragma once

#include "mpspack/result.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace mpspack {

// True when [offset, offset + size) lies inside [0, limit), computed without overflow.
constexpr bool range_fits(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

// a + b, or false on u64 overflow.
constexpr bool checked_add(uint64_t a, uint64_t b, uint64_t& out) {
  if (b > UINT64_MAX - a) return false;
  out = a + b;
  return true;
}

// a * b, or false on u64 overflow.
constexpr bool checked_mul(uint64_t a, uint64_t b, uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  out = a * b;
  return true;
}

constexpr uint64_t align_up(uint64_t v, uint64_t alignment) { return (v + alignment - 1) / alignment * alignment; }

inline uint16_t load_u16le(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t load_u32le(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint64_t load_u64le(const uint8_t* p) { return uint64_t(load_u32le(p)) | uint64_t(load_u32le(p + 4)) << 32; }
inline void store_u16le(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
inline void store_u32le(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
inline void store_u64le(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}

// A read-only window over bytes with checked accessors. `what` names the object in errors
// ("model.so", "container header") so messages say where the bad read was.
class ByteView {
 public:
  ByteView() = default;
  ByteView(std::span<const uint8_t> bytes, std::string_view what = "input") : bytes_(bytes), what_(what) {}

  uint64_t size() const { return bytes_.size(); }
  const uint8_t* data() const { return bytes_.data(); }
  std::span<const uint8_t> span() const { return bytes_; }
  const std::string& what() const { return what_; }

  // The sub-view [offset, offset + size), or an error naming `field` and the numbers.
  Result<ByteView> slice(uint64_t offset, uint64_t size, std::string_view field) const {
    if (!range_fits(offset, size, bytes_.size()))
      return make_error(Error::Kind::Corrupt, "{}: {} at offset {:#x} + size {:#x} runs past the end ({:#x} bytes)",
                        what_, field, offset, size, bytes_.size());
    return ByteView(bytes_.subspan(offset, size), what_);
  }

  Result<uint8_t> u8(uint64_t offset, std::string_view field) const {
    MPK_TRY(auto v, slice(offset, 1, field));
    return v.data()[0];
  }
  Result<uint16_t> u16(uint64_t offset, std::string_view field) const {
    MPK_TRY(auto v, slice(offset, 2, field));
    return load_u16le(v.data());
  }
  Result<uint32_t> u32(uint64_t offset, std::string_view field) const {
    MPK_TRY(auto v, slice(offset, 4, field));
    return load_u32le(v.data());
  }
  Result<uint64_t> u64(uint64_t offset, std::string_view field) const {
    MPK_TRY(auto v, slice(offset, 8, field));
    return load_u64le(v.data());
  }

  // A NUL-terminated string starting at `offset`, at most `max_len` bytes long.
  Result<std::string_view> cstring(uint64_t offset, std::string_view field, uint64_t max_len = 4096) const {
    if (offset >= bytes_.size())
      return make_error(Error::Kind::Corrupt, "{}: {} at offset {:#x} is past the end ({:#x} bytes)", what_, field,
                        offset, bytes_.size());
    uint64_t limit = std::min<uint64_t>(bytes_.size() - offset, max_len);
    const void* nul = std::memchr(bytes_.data() + offset, 0, limit);
    if (!nul)
      return make_error(Error::Kind::Corrupt, "{}: {} at offset {:#x} is not NUL-terminated", what_, field, offset);
    auto len = static_cast<const uint8_t*>(nul) - (bytes_.data() + offset);
    return std::string_view(reinterpret_cast<const char*>(bytes_.data() + offset), len);
  }

 private:
  std::span<const uint8_t> bytes_;
  std::string what_ = "input";
};

}  // namespace mpspack
