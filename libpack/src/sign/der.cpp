// The DER reader of der.hpp.
#include "der.hpp"

#include "mpspack/bytes.hpp"

#include <optional>

namespace mpspack::sign::der {

Result<Element> Reader::next(std::string_view field) {
  const uint64_t start = pos_;
  auto bad = [&](std::string_view why) {
    return make_error(Error::Kind::Corrupt, "{}: {} at byte {}: {}", what_, field, base_ + start, why);
  };
  if (pos_ >= bytes_.size()) return bad("missing (the structure ends)");
  const uint8_t tag = bytes_[pos_++];
  if ((tag & 0x1f) == 0x1f) return bad("a multi-byte tag, which no key file uses");
  if (pos_ >= bytes_.size()) return bad("no length");
  uint64_t length = bytes_[pos_++];
  if (length & 0x80) {
    const unsigned count = unsigned(length & 0x7f);
    if (count == 0) return bad("an indefinite length, which DER does not allow");
    if (count > 4) return bad("a length of more than 4 bytes");
    if (!range_fits(pos_, count, bytes_.size())) return bad("the length runs past the end");
    length = 0;
    for (unsigned i = 0; i < count; ++i) length = length << 8 | bytes_[pos_++];
    // DER's minimal form: long form only from 128 on, and no leading zero byte.
    if (length < 0x80 || bytes_[pos_ - count] == 0) return bad("a length not in DER's minimal form");
  }
  if (!range_fits(pos_, length, bytes_.size()))
    return bad(fmt::format("a value of {} bytes runs past the end of its {}-byte container", length, bytes_.size()));
  Element e{tag, bytes_.subspan(pos_, length), base_ + start};
  pos_ += length;
  return e;
}

Result<Element> Reader::expect(uint8_t tag, std::string_view field) {
  const uint64_t start = pos_;
  MPK_TRY(Element e, next(field));
  if (e.tag != tag)
    return make_error(Error::Kind::Corrupt, "{}: {} at byte {}: tag {:#04x}, expected {:#04x}", what_, field,
                      base_ + start, e.tag, tag);
  return e;
}

Result<std::optional<Element>> Reader::optional(uint8_t tag, std::string_view field) {
  if (at_end() || bytes_[pos_] != tag) return std::optional<Element>();
  MPK_TRY(Element e, next(field));
  return std::optional<Element>(e);
}

Status Reader::finish(std::string_view field) const {
  if (!at_end())
    return make_error(Error::Kind::Corrupt, "{}: {} has {} bytes of trailing data at byte {}", what_, field,
                      bytes_.size() - pos_, base_ + pos_);
  return {};
}

uint64_t Reader::header_bytes(const Element& e) const {
  const uint64_t n = e.value.size();
  return n < 0x80 ? 2 : n < 0x100 ? 3 : n < 0x10000 ? 4 : n < 0x1000000 ? 5 : 6;
}

std::string oid_text(std::span<const uint8_t> value) {
  std::string out;
  uint64_t v = 0;
  bool first = true;
  for (uint8_t b : value) {
    if (v > (UINT64_MAX >> 7)) return "(an OID too long to show)";
    v = v << 7 | (b & 0x7f);
    if (b & 0x80) continue;
    if (first) {
      const uint64_t a = v < 40 ? 0 : v < 80 ? 1 : 2;
      out = fmt::format("{}.{}", a, v - 40 * a);
      first = false;
    } else {
      out += fmt::format(".{}", v);
    }
    v = 0;
  }
  return out.empty() ? "(an empty OID)" : out;
}

Result<std::vector<uint8_t>> unsigned_integer(const Element& e, const std::string& what, std::string_view field) {
  auto v = e.value;
  if (e.tag != kInteger || v.empty()) return make_error(Error::Kind::Corrupt, "{}: {} is not an INTEGER", what, field);
  if (v[0] & 0x80) return make_error(Error::Kind::Corrupt, "{}: {} is negative", what, field);
  if (v.size() > 1 && v[0] == 0 && !(v[1] & 0x80))
    return make_error(Error::Kind::Corrupt, "{}: {} is not in DER's minimal form (a leading zero byte)", what, field);
  if (v.size() > 1 && v[0] == 0) v = v.subspan(1);
  return std::vector<uint8_t>(v.begin(), v.end());
}

namespace {

void append_length(std::vector<uint8_t>& out, size_t n) {
  if (n < 0x80) {
    out.push_back(uint8_t(n));
  } else {  // signatures are far below 64 KiB; one or two length bytes
    const bool two = n >= 0x100;
    out.push_back(two ? 0x82 : 0x81);
    if (two) out.push_back(uint8_t(n >> 8));
    out.push_back(uint8_t(n));
  }
}

std::vector<uint8_t> encode_integer(std::span<const uint8_t> v) {
  while (v.size() > 1 && v[0] == 0) v = v.subspan(1);
  std::vector<uint8_t> out{kInteger};
  const bool pad = v.empty() || (v[0] & 0x80);  // a zero byte keeps the number positive
  append_length(out, v.size() + (pad ? 1 : 0));
  if (pad) out.push_back(0);
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

}  // namespace

std::vector<uint8_t> encode_signature(std::span<const uint8_t> r, std::span<const uint8_t> s) {
  std::vector<uint8_t> body = encode_integer(r), si = encode_integer(s);
  body.insert(body.end(), si.begin(), si.end());
  std::vector<uint8_t> out{kSequence};
  append_length(out, body.size());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

}  // namespace mpspack::sign::der
