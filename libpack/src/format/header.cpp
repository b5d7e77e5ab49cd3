#include "mpspack/format/header.hpp"

#include "mpspack/format/hash.hpp"
#include "rules.hpp"

#include <cstring>

namespace mpspack::format {

std::array<uint8_t, kHeaderSize> encode_header(const Header& h) {
  std::array<uint8_t, kHeaderSize> b{};
  std::memcpy(b.data() + field::magic, kMagic.data(), kMagic.size());
  store_u16le(b.data() + field::version_major, h.version_major);
  store_u16le(b.data() + field::version_minor, h.version_minor);
  store_u32le(b.data() + field::header_size, kHeaderSize);
  store_u32le(b.data() + field::byte_order, kByteOrderMark);
  store_u32le(b.data() + field::flags, h.flags);
  store_u64le(b.data() + field::metadata_offset, h.metadata_offset);
  store_u64le(b.data() + field::metadata_size, h.metadata_size);
  store_u64le(b.data() + field::data_offset, h.data_offset);
  store_u64le(b.data() + field::data_size, h.data_size);
  store_u64le(b.data() + field::file_size, h.file_size);
  store_u64le(b.data() + field::checksum, h.checksum);
  return b;
}

uint64_t header_checksum(ByteView header_bytes, ByteView metadata) {
  Xxh3Stream s;
  s.update(header_bytes.data(), field::checksum);
  const uint8_t zeros[8] = {};
  s.update(zeros, 8);
  s.update(header_bytes.data() + field::end, header_bytes.size() - field::end);
  s.update(metadata.data(), metadata.size());
  return s.digest();
}

bool has_magic(ByteView file) {
  return file.size() >= kMagic.size() && std::memcmp(file.data(), kMagic.data(), kMagic.size()) == 0;
}

namespace {

Error corrupt(const ByteView& file, std::string_view rule, std::string_view what) {
  return rule_error(file.what(), rule, what);
}

// "Not a container" and "a damaged container" are different errors: only a file with the magic is the latter.
Status identify(ByteView file) {
  if (file.size() == 0)
    return rule_error(file.what(), "H1", "empty file, not an mpspack container", Error::Kind::NotThisFormat);
  if (!has_magic(file))
    return rule_error(file.what(), "H1", "not an mpspack container (bad magic)", Error::Kind::NotThisFormat);
  if (file.size() < field::end)
    return corrupt(file, "H2",
                   fmt::format("truncated: {} bytes, shorter than the {}-byte header", file.size(), kHeaderSize));
  return {};
}

// The fixed fields, unchecked; the byte-order mark is no part of Header, so it comes back in `bom`.
Header decode(ByteView file, uint32_t& bom) {
  Header h;
  h.version_major = load_u16le(file.data() + field::version_major);
  h.version_minor = load_u16le(file.data() + field::version_minor);
  h.header_size = load_u32le(file.data() + field::header_size);
  bom = load_u32le(file.data() + field::byte_order);
  h.flags = load_u32le(file.data() + field::flags);
  h.metadata_offset = load_u64le(file.data() + field::metadata_offset);
  h.metadata_size = load_u64le(file.data() + field::metadata_size);
  h.data_offset = load_u64le(file.data() + field::data_offset);
  h.data_size = load_u64le(file.data() + field::data_size);
  h.file_size = load_u64le(file.data() + field::file_size);
  h.checksum = load_u64le(file.data() + field::checksum);
  return h;
}

// Byte order, version, header size, file size and flags: what decides whether the rest can be read at all.
Status check_fields(ByteView file, const Header& h, uint32_t bom) {
  if (bom != kByteOrderMark)
    return corrupt(file, "H3", fmt::format("byte-order mark is {:#010x}, expected {:#010x}", bom, kByteOrderMark));
  if (h.version_major != kVersionMajor)
    return rule_error(file.what(), "H4",
                      fmt::format("container format version {}.{} is not supported (this mpspack reads {}.x)",
                                  h.version_major, h.version_minor, kVersionMajor),
                      Error::Kind::Unsupported);
  if (h.header_size < kHeaderSize || h.header_size > 65536)
    return corrupt(file, "H5", fmt::format("header size {} is outside [{}, 65536]", h.header_size, kHeaderSize));
  if (file.size() != h.file_size)
    return corrupt(
        file, "H6",
        fmt::format("file is {} bytes but the header records {} (truncated or extended)", file.size(), h.file_size));
  if (file.size() < h.header_size)
    return corrupt(file, "H2",
                   fmt::format("truncated: {} bytes, shorter than the {}-byte header", file.size(), h.header_size));
  if (h.flags != 0) return corrupt(file, "H7", fmt::format("unknown flags {:#x}", h.flags));
  return {};
}

Status check_regions(ByteView file, const Header& h) {
  // The metadata starts right after the header: a gap between them would be bytes that neither the
  // checksum nor any zero-padding check covers.
  if (h.metadata_offset != h.header_size || !range_fits(h.metadata_offset, h.metadata_size, h.file_size))
    return corrupt(file, "H8",
                   fmt::format("metadata at offset {:#x} + size {:#x} does not start right after the "
                               "{}-byte header or lies outside the file ({:#x} bytes)",
                               h.metadata_offset, h.metadata_size, h.header_size, h.file_size));
  uint64_t metadata_end = h.metadata_offset + h.metadata_size;
  if (h.data_offset % kSegmentAlignment != 0 || h.data_offset < metadata_end ||
      !range_fits(h.data_offset, h.data_size, h.file_size) || h.data_offset + h.data_size != h.file_size)
    return corrupt(file, "H9",
                   fmt::format("data region at offset {:#x} + size {:#x} is not a multiple of {:#x} "
                               "running from after the metadata ({:#x}) to the end of the file ({:#x})",
                               h.data_offset, h.data_size, kSegmentAlignment, metadata_end, h.file_size));
  return {};
}

// Bytes after the known fields are reserved: zero in every version this reader knows.
Status check_reserved(ByteView file, const Header& h) {
  uint64_t reserved_end = h.version_minor <= kVersionMinor ? h.header_size : kHeaderSize;
  for (uint64_t i = field::end; i < reserved_end; ++i)
    if (file.data()[i] != 0) return corrupt(file, "H10", fmt::format("reserved header byte {:#x} is not zero", i));
  return {};
}

Status check_checksum(ByteView file, const Header& h) {
  ByteView header_bytes(file.span().subspan(0, h.header_size), file.what());
  ByteView metadata(file.span().subspan(h.metadata_offset, h.metadata_size), file.what());
  uint64_t sum = header_checksum(header_bytes, metadata);
  if (sum != h.checksum)
    return corrupt(file, "H11",
                   fmt::format("header checksum mismatch: recorded {:#018x}, computed {:#018x} "
                               "(header or metadata damaged)",
                               h.checksum, sum));
  return {};
}

}  // namespace

Result<Header> read_header(ByteView file) {
  // Order as in ExecuTorch's flat tensor reader: identify, check length, decode, check regions,
  // then the checksum.
  MPK_CHECK(identify(file));
  uint32_t bom = 0;
  Header h = decode(file, bom);
  MPK_CHECK(check_fields(file, h, bom));
  MPK_CHECK(check_regions(file, h));
  MPK_CHECK(check_reserved(file, h));
  MPK_CHECK(check_checksum(file, h));
  return h;
}

}  // namespace mpspack::format
