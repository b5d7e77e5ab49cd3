// text::printable and text::utf8_with_replacements: what reaches a terminal or a JSON document.
#include "mpspack/text.hpp"

#include <catch2/catch.hpp>

using namespace mpspack;

TEST_CASE("UTF-8 validation refuses every malformed shape and accepts the edges", "[text]") {
  for (std::string ok : {"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf",
                         "\xed\x9f\xbf", "\xee\x80\x80"})
    CHECK(text::is_valid_utf8(ok));
  for (std::string bad : {"caf\xe9",            // Latin-1
                          "\x80",               // a lone continuation byte
                          "\xc3",               // truncated
                          "\xc0\xaf",           // overlong '/'
                          "\xe0\x80\xaf",       // overlong, three bytes
                          "\xf0\x80\x80\xaf",   // overlong, four bytes
                          "\xed\xa0\x80",       // a surrogate
                          "\xf4\x90\x80\x80",   // past U+10FFFF
                          "\xff", "\xe2\x82"})  // not a lead byte; truncated in the middle
    CHECK_FALSE(text::is_valid_utf8(bad));
}

TEST_CASE("printable escapes controls, C1 in both forms and invalid bytes, and keeps the rest", "[text]") {
  CHECK(text::printable("model_1.so") == "model_1.so");
  CHECK(text::printable("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");
  // An OSC title change, a colour, a carriage return that would let a forged line overwrite this one.
  CHECK(text::printable("\x1b]0;pwned\x07x") == "\\x1b]0;pwned\\x07x");
  CHECK(text::printable("a\rOK\n") == "a\\x0dOK\\x0a");
  CHECK(text::printable("\x7f") == "\\x7f");
  // C1 CSI as a raw byte and as the code point U+009B.
  CHECK(text::printable("\x9b"
                        "31m") == "\\x9b31m");
  CHECK(text::printable("\xc2\x9b"
                        "31m") == "\\xc2\\x9b31m");
  CHECK(text::printable("\xc2\xa0") == "\xc2\xa0");  // U+00A0 is not a control
  CHECK(text::printable("caf\xe9") == "caf\\xe9");
  CHECK(text::printable("\xe2\x82") == "\\xe2\\x82");
}

TEST_CASE("utf8_with_replacements gives valid UTF-8, one U+FFFD per invalid byte", "[text]") {
  CHECK(text::utf8_with_replacements("plain \xe2\x82\xac") == "plain \xe2\x82\xac");
  CHECK(text::utf8_with_replacements("caf\xe9.so") == "caf\xef\xbf\xbd.so");
  CHECK(text::utf8_with_replacements("\xc0\xaf") == "\xef\xbf\xbd\xef\xbf\xbd");
  CHECK(text::is_valid_utf8(text::utf8_with_replacements("\xff\xfe\xed\xa0\x80 ok")));
  CHECK(text::hex_bytes("caf\xe9") == "636166e9");
}
