#include "mpspack/text.hpp"

#include <cstdint>

namespace mpspack::text {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_escaped_byte(std::string& out, unsigned char c) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

bool is_continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

// C0 and DEL. (A C1 control as a raw byte, 0x80-0x9f, is never well-formed UTF-8: it is escaped as invalid.)
bool is_control_byte(unsigned char c) { return c < 0x20 || c == 0x7f; }

// U+0080..U+009F in UTF-8 is C2 80..C2 9F: terminals that decode UTF-8 may act on them as C1 controls.
bool is_c1_sequence(std::string_view s, size_t i, size_t len) {
  return len == 2 && static_cast<unsigned char>(s[i]) == 0xc2 && static_cast<unsigned char>(s[i + 1]) <= 0x9f;
}

}  // namespace

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const size_t left = s.size() - i;
  const unsigned char c = at(0);
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;  // a continuation byte, an overlong lead (C0, C1) or past U+10FFFF (F5..FF)
  }
  if (left < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    if (!is_continuation(at(k))) return 0;
    cp = (cp << 6) | (at(k) & 0x3f);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0;  // overlong, too large
  if (cp >= 0xd800 && cp <= 0xdfff) return 0;                                               // a surrogate
  return len;
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t len = utf8_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = utf8_sequence_length(s, i);
    if (len == 0 || (len == 1 && is_control_byte(c)) || is_c1_sequence(s, i, len)) {
      // An invalid byte alone; a C1 sequence whole (both its bytes), so that it reads as what it is.
      const size_t n = len == 0 ? 1 : len;
      for (size_t k = 0; k < n; ++k) append_escaped_byte(out, static_cast<unsigned char>(s[i + k]));
      i += n;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

std::string utf8_with_replacements(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

std::string hex_bytes(std::string_view s) {
  std::string out;
  out.reserve(2 * s.size());
  for (unsigned char c : s) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

}  // namespace mpspack::text
