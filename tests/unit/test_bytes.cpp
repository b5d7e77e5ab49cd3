#include "mpspack/bytes.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace mpspack;

TEST_CASE("range_fits rejects overflowing ranges") {
  CHECK(range_fits(0, 10, 10));
  CHECK_FALSE(range_fits(1, 10, 10));
  CHECK_FALSE(range_fits(UINT64_MAX, 2, UINT64_MAX));
  CHECK_FALSE(range_fits(5, UINT64_MAX, 10));
}

TEST_CASE("ByteView reads little-endian and refuses reads past the end") {
  std::vector<uint8_t> b = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09};
  ByteView v(b, "blob");
  CHECK(v.u16(0, "x").value() == 0x0201);
  CHECK(v.u32(1, "x").value() == 0x05040302u);
  CHECK(v.u64(1, "x").value() == 0x0908070605040302ull);
  auto bad = v.u64(2, "field");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("blob: field at offset 0x2") != std::string::npos);
  CHECK_FALSE(v.slice(UINT64_MAX, 2, "s").ok());
}

TEST_CASE("ByteView cstring needs a terminator inside the view") {
  std::vector<uint8_t> b = {'a', 'b', 0, 'c'};
  ByteView v(b, "strtab");
  CHECK(v.cstring(0, "name").value() == "ab");
  CHECK_FALSE(v.cstring(3, "name").ok());
  CHECK_FALSE(v.cstring(4, "name").ok());
}
