// Names and paths from inputs are bytes, not text: a stored name may hold any byte, a path any byte but
// NUL. These are the two ways mpspack shows them: on a terminal (escaped so that no byte can move the
// cursor, change a title or forge a line) and in JSON (valid UTF-8, as JSON requires). docs/CLI.md,
// "Names in output", describes both.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mpspack::text {

// The length of the well-formed UTF-8 sequence that starts at s[i] (1 to 4), or 0 when the bytes there
// are not one (a stray continuation byte, a truncated sequence, an overlong form, a surrogate, or a code
// point past U+10FFFF).
size_t utf8_sequence_length(std::string_view s, size_t i);

bool is_valid_utf8(std::string_view s);

// For a terminal: C0 controls, DEL, C1 controls (the bytes 0x80-0x9f and the code points U+0080-U+009F)
// and every byte that is not part of well-formed UTF-8 become \xNN (one escape a byte); everything else,
// printable ASCII and well-formed UTF-8, is kept.
std::string printable(std::string_view s);

// For JSON: `s` with each byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string utf8_with_replacements(std::string_view s);

// The bytes as lowercase hex, two digits a byte.
std::string hex_bytes(std::string_view s);

}  // namespace mpspack::text
