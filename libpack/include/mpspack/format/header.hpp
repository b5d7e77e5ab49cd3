// The fixed container header at offset 0 (docs/FORMAT.md, "Header"). All integers little-endian.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/result.hpp"

#include <array>
#include <cstdint>

namespace mpspack::format {

inline constexpr std::array<uint8_t, 8> kMagic = {'M', 'P', 'S', 'P', 'A', 'C', 'K', 0};
inline constexpr uint16_t kVersionMajor = 1;  // changed only for breaking changes
inline constexpr uint16_t kVersionMinor = 1;  // bumped when fields are appended (1: Segment.chunk_xxh3, Source.mode)
inline constexpr uint32_t kHeaderSize = 128;  // v1 writes 128; readers accept larger (fields appended)
inline constexpr uint32_t kByteOrderMark = 0x01020304;  // reads back as 0x04030201 on a byte-swapped reader
inline constexpr uint64_t kSegmentAlignment = 65536;    // every segment starts on a 64 KiB boundary...
// ...except an embedded library's weights, placed at the same offset modulo 64 KiB as the
// constants' virtual address so that the pages can be mapped straight over the library's region.

// Field offsets, each derived from the one before it.
namespace field {
inline constexpr uint32_t magic = 0;                          // u8[8]
inline constexpr uint32_t version_major = magic + 8;          // u16
inline constexpr uint32_t version_minor = version_major + 2;  // u16
inline constexpr uint32_t header_size = version_minor + 2;    // u32
inline constexpr uint32_t byte_order = header_size + 4;       // u32
inline constexpr uint32_t flags = byte_order + 4;             // u32, 0 in v1
inline constexpr uint32_t metadata_offset = flags + 4;        // u64
inline constexpr uint32_t metadata_size = metadata_offset + 8;
inline constexpr uint32_t data_offset = metadata_size + 8;
inline constexpr uint32_t data_size = data_offset + 8;
inline constexpr uint32_t file_size = data_size + 8;
inline constexpr uint32_t checksum = file_size + 8;  // XXH3-64 of header (this field zeroed) + metadata
inline constexpr uint32_t end = checksum + 8;        // 72; the rest up to header_size is zero
}  // namespace field

struct Header {
  uint16_t version_major = kVersionMajor;
  uint16_t version_minor = kVersionMinor;
  uint32_t header_size = kHeaderSize;
  uint32_t flags = 0;
  uint64_t metadata_offset = 0;
  uint64_t metadata_size = 0;
  uint64_t data_offset = 0;
  uint64_t data_size = 0;
  uint64_t file_size = 0;
  uint64_t checksum = 0;
};

// The 128 header bytes of `h` (checksum field as given).
std::array<uint8_t, kHeaderSize> encode_header(const Header& h);

// The checksum over header bytes (checksum field treated as zero) followed by the metadata.
uint64_t header_checksum(ByteView header_bytes, ByteView metadata);

// True when the file starts with the container magic (used to tell containers from other inputs).
bool has_magic(ByteView file);

// Parses and checks the header against the file it came from: magic, version, byte order, sizes,
// that every region lies inside the file and they do not overlap, and the checksum.
// `file` is the whole container.
Result<Header> read_header(ByteView file);

}  // namespace mpspack::format
