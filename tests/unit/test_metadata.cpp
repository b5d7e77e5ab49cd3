// The metadata block decodes wherever it lies in memory: FlatBuffers reads 8-byte scalars in place,
// and a container may put its metadata at an offset that is not 8-byte aligned.
#include "mpspack/format/metadata.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using namespace mpspack;

TEST_CASE("decode_metadata reads a block at every alignment in memory", "[format][metadata]") {
  Manifest m;
  m.producer_version = "test";
  m.sources.push_back(SourceInfo{"model.so", 12345, std::string(64, 'a'), "so", "embedded"});
  SegmentInfo s;
  s.kind = SegmentKind::Weights;
  s.name = "weights.blob";
  s.offset = 0x1'0000'0040ull;  // past 4 GiB: a 64-bit field the misaligned read would tear
  s.size = 0x2'0000'0001ull;
  s.alignment = 64;
  s.xxh3 = 0x0123456789abcdefull;
  m.segments.push_back(s);
  const std::vector<uint8_t> block = format::encode_metadata(m);

  std::vector<uint8_t> storage(block.size() + 16);
  for (size_t shift = 0; shift < 8; ++shift) {
    INFO("block at 8-byte boundary + " << shift);
    std::memcpy(storage.data() + shift, block.data(), block.size());
    auto decoded = format::decode_metadata(ByteView({storage.data() + shift, block.size()}, "meta"));
    REQUIRE(decoded.ok());
    REQUIRE(decoded->segments.size() == 1);
    CHECK(decoded->segments[0].offset == s.offset);
    CHECK(decoded->segments[0].size == s.size);
    CHECK(decoded->segments[0].xxh3 == s.xxh3);
    CHECK(decoded->segments[0].name == "weights.blob");
    REQUIRE(decoded->sources.size() == 1);
    CHECK(decoded->sources[0].size == 12345);
  }
}
