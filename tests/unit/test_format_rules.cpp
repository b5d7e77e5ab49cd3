// One crafted container per MUST of docs/FORMAT.md, each refused by the rule it breaks: the message
// names the rule id, so a test passes only when the check meant for its input is the one that fired.
#include "crafted_container.hpp"

#include <catch2/catch.hpp>

using namespace mpspack;
using namespace mpspack::test;

namespace {

// Opens `file`, expects a refusal by `rule`, and returns the message for further checks.
std::string refused(const std::vector<uint8_t>& file, const std::string& rule) {
  auto c = open_crafted(file);
  REQUIRE_FALSE(c.ok());
  INFO(c.error().message);
  CHECK_THAT(c.error().message, Catch::Contains("rule " + rule + ": "));
  return c.error().message;
}

std::string refused(const Crafted& c, const std::string& rule) { return refused(crafted_file(c), rule); }

// The base with one change to its manifest.
Crafted changed(const std::function<void(Manifest&)>& change) {
  Crafted c = crafted_base();
  change(c.manifest);
  return c;
}

// The base's bytes with one header field changed (and, unless the rule is the checksum's, the
// checksum made right again so that only the field is wrong).
template <class T>
std::vector<uint8_t> with_field(uint32_t offset, T value, bool fix = true) {
  auto file = crafted_file(crafted_base());
  if constexpr (sizeof(T) == 2) store_u16le(file.data() + offset, value);
  if constexpr (sizeof(T) == 4) store_u32le(file.data() + offset, value);
  if constexpr (sizeof(T) == 8) store_u64le(file.data() + offset, value);
  if (fix) fix_checksum(file);
  return file;
}

namespace f = format::field;

}  // namespace

TEST_CASE("rules: the crafted base container is valid", "[format][rules]") {
  auto c = open_crafted(crafted_file(crafted_base()));
  INFO((c.ok() ? "" : c.error().message));
  REQUIRE(c.ok());
  CHECK(c->manifest().libraries.size() == 1);
  CHECK(c->manifest().weights[0].constants.size() == 2);
}

TEST_CASE("rules H1-H11: the header", "[format][rules]") {
  SECTION("H1 magic") {
    auto file = crafted_file(crafted_base());
    file[0] = 'X';
    CHECK_THAT(refused(file, "H1"), Catch::Contains("not an mpspack container"));
    CHECK(open_crafted(file).error().kind == Error::Kind::NotThisFormat);
  }
  SECTION("H2 shorter than the header") {
    auto file = crafted_file(crafted_base());
    file.resize(40);
    refused(file, "H2");
  }
  SECTION("H3 byte order") { refused(with_field<uint32_t>(f::byte_order, 0x04030201), "H3"); }
  SECTION("H4 another major version") {
    auto file = with_field<uint16_t>(f::version_major, 2);
    CHECK_THAT(refused(file, "H4"),
               Catch::Contains("version 2." + std::to_string(format::kVersionMinor) + " is not supported"));
    CHECK(open_crafted(file).error().kind == Error::Kind::Unsupported);
  }
  SECTION("H5 header size") { refused(with_field<uint32_t>(f::header_size, 64), "H5"); }
  SECTION("H6 file size") {
    auto file = crafted_file(crafted_base());
    file.push_back(0);
    refused(file, "H6");
  }
  SECTION("H7 flags") { CHECK_THAT(refused(with_field<uint32_t>(f::flags, 1), "H7"), Catch::Contains("flags 0x1")); }
  SECTION("H8 a gap between the header and the metadata") {
    // The gap would be bytes covered by neither the checksum nor the padding check.
    auto file = with_field<uint64_t>(f::metadata_offset, format::kHeaderSize + 8);
    CHECK_THAT(refused(file, "H8"), Catch::Contains("right after the 128-byte header"));
  }
  SECTION("H8 metadata past the end of the file") {
    refused(with_field<uint64_t>(f::metadata_size, uint64_t(1) << 40), "H8");
  }
  SECTION("H9 data_offset not a multiple of 65536") {
    auto file = crafted_file(crafted_base());
    const uint64_t data_offset = load_u64le(file.data() + f::data_offset);
    store_u64le(file.data() + f::data_offset, data_offset - 64);
    store_u64le(file.data() + f::data_size, file.size() - (data_offset - 64));
    fix_checksum(file);
    refused(file, "H9");
  }
  SECTION("H9 data region not reaching the end") { refused(with_field<uint64_t>(f::data_size, 8), "H9"); }
  SECTION("H10 reserved bytes") {
    auto file = crafted_file(crafted_base());
    file[100] = 1;
    fix_checksum(file);
    refused(file, "H10");
  }
  SECTION("H11 checksum") {
    auto file = crafted_file(crafted_base());
    file[format::kHeaderSize + 40] ^= 0x01;  // inside the metadata
    CHECK_THAT(refused(file, "H11"), Catch::Contains("checksum mismatch"));
  }
}

TEST_CASE("rules M1-M6: the metadata block", "[format][rules]") {
  SECTION("M1 larger than the cap") {
    // Reserved, never touched: the cap is checked before the block is read.
    const size_t size = format::limits::metadata_bytes + 1;
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(p != MAP_FAILED);
    auto m = format::decode_metadata(ByteView({static_cast<const uint8_t*>(p), size}, "big"));
    ::munmap(p, size);
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.error().message, Catch::Contains("rule M1: "));
  }
  SECTION("M2 not a FlatBuffers buffer with the identifier") {
    auto meta = format::encode_metadata(crafted_base().manifest);
    meta[4] = 'X';  // "MPKM" -> "XPKM"
    refused(crafted_file(meta, crafted_base().data), "M2");
  }
  SECTION("M2 an offset out of the block") {
    auto meta = format::encode_metadata(crafted_base().manifest);
    store_u32le(meta.data(), uint32_t(meta.size() + 64));  // the root offset
    refused(crafted_file(meta, crafted_base().data), "M2");
  }
  SECTION("M3 too many dimensions") {
    refused(changed([](Manifest& m) {
              m.weights[0].constants[0].shape.assign(65, 1);
              m.weights[0].constants[0].stride.assign(65, 1);
            }),
            "M3");
  }
  SECTION("M3 too many restore patches") {
    refused(changed([](Manifest& m) { m.libraries[0].restore.assign(4097, Patch{0, {1}}); }), "M3");
  }
  SECTION("M5 a string over 4096 bytes") {
    CHECK_THAT(refused(changed([](Manifest& m) { m.sources[0].name.assign(4097, 's'); }), "M5"),
               Catch::Contains("source.name is 4097 bytes long"));
  }
  SECTION("M6 unknown enum values") {
    refused(changed([](Manifest& m) { m.libraries[0].flavour = static_cast<Flavour>(3); }), "M6");
    refused(changed([](Manifest& m) { m.segments[2].kind = static_cast<SegmentKind>(4); }), "M6");
  }
}

TEST_CASE("rules S1-S6: segments", "[format][rules]") {
  SECTION("S1 alignment not a power of two") {
    refused(changed([](Manifest& m) { m.segments[1].alignment = 96; }), "S1");
  }
  SECTION("S1 alignment over 65536") {
    refused(changed([](Manifest& m) { m.segments[0].alignment = 1 << 17; }), "S1");
  }
  SECTION("S1 offset not aligned") {
    refused(changed([](Manifest& m) { m.segments[1].alignment = 8192; }), "S1");
  }
  SECTION("S2 outside the data region") {
    refused(changed([](Manifest& m) { m.segments[0].offset = 64; }), "S2");
    refused(changed([](Manifest& m) { m.segments[4].size = UINT64_MAX - 8; }), "S2");
  }
  SECTION("S3 overlap") {
    refused(changed([](Manifest& m) { m.segments[1].offset -= 64; }), "S3");
  }
  SECTION("S4 bytes after the last segment") {
    Crafted c = crafted_base();
    c.data.resize(c.data.size() + 64, 0);
    refused(c, "S4");
  }
  SECTION("S5 a reference out of range or of the wrong kind") {
    refused(changed([](Manifest& m) { m.libraries[0].segment = 9; }), "S5");
    refused(changed([](Manifest& m) { m.libraries[0].cubins = {1}; }), "S5");
    refused(changed([](Manifest& m) { m.examples[0].outputs[0].segment = 0; }), "S5");
  }
  SECTION("S5 two libraries on one library segment") {
    // unpack would write the segment once per library: 2,000 of them made a 1.6 MB container write 2 GB.
    Crafted c = crafted_base();
    LibraryInfo twin = c.manifest.libraries[0];
    twin.name = "twin";
    twin.cubins.clear();
    c.manifest.libraries.push_back(twin);
    CHECK_THAT(refused(c, "S5"), Catch::Contains("another object already refers to"));
  }
  SECTION("S5 two weights entries on one segment") {
    refused(changed([](Manifest& m) { m.weights.push_back(WeightsInfo{1, {}}); }), "S5");
  }
  SECTION("S6 chunk hashes of a small segment, or too few or too many") {
    // The crafted segments are all under one 16 MiB chunk: any chunk hash is one too many.
    CHECK_THAT(refused(changed([](Manifest& m) { m.segments[1].chunk_xxh3 = {1}; }), "S6"),
               Catch::Contains("records 1 chunk hashes"));
    refused(changed([](Manifest& m) { m.segments[0].chunk_xxh3 = {1, 2}; }), "S6");
  }
}

TEST_CASE("rules L1-L8: libraries", "[format][rules]") {
  SECTION("L1 names unpack could not write") {
    for (std::string name : {std::string("a/b"), std::string("a\\b"), std::string("a\nb"), std::string(".."),
                             std::string(), std::string(201, 'n')}) {
      INFO("name '" << name << "'");
      refused(changed([&](Manifest& m) { m.libraries[0].name = name; }), "L1");
    }
    auto ok = open_crafted(crafted_file(changed([](Manifest& m) { m.libraries[0].name.assign(200, 'n'); })));
    CHECK(ok.ok());
  }
  SECTION("L2 weights index") {
    refused(changed([](Manifest& m) { m.libraries[0].weights = 1; }), "L2");
  }
  SECTION("L3 sizes") {
    refused(changed([](Manifest& m) { m.libraries[0].original_size += 1; }), "L3");
  }
  SECTION("L4 removed range") {
    refused(changed([](Manifest& m) { m.libraries[0].removed_offset = 4097; }), "L4");
    refused(changed([](Manifest& m) {
              m.libraries[0].weights = -1;
              m.weights[0].constants.clear();
            }),
            "L4");
  }
  SECTION("L5 restore patch outside the original") {
    refused(changed([](Manifest& m) { m.libraries[0].restore[0].offset = 4096 + 255; }), "L5");
  }
  SECTION("L6 constants region") {
    refused(changed([](Manifest& m) { m.libraries[0].region->end_vaddr = 0x100; }), "L6");
  }
  SECTION("L7 cubin names") {
    refused(changed([](Manifest& m) { m.segments[2].name.assign(243, 'k'); }), "L7");
    refused(changed([](Manifest& m) { m.segments[2].name = "../k.cubin"; }), "L7");
  }
  SECTION("L8 libraries sharing weights restore to more than 16 times the container") {
    // Each library has its own (tiny) stored segment but all share one large weights segment.
    Crafted c;
    Manifest& m = c.manifest;
    const uint64_t weights_size = 1 << 20;
    m.segments.push_back(crafted_segment(SegmentKind::Weights, "w.blob", 0, weights_size));
    m.weights.push_back(WeightsInfo{0, {}});
    for (uint32_t i = 0; i < 20; ++i) {
      m.segments.push_back(crafted_segment(SegmentKind::Library, "l.so", weights_size + 64 * i, 64));
      LibraryInfo l;
      l.name = "l" + std::to_string(i);
      l.segment = i + 1;
      l.weights = 0;
      l.original_size = 64 + weights_size;
      l.removed_size = weights_size;
      m.libraries.push_back(l);
    }
    c.data.assign(weights_size + 64 * 20, 0);
    CHECK_THAT(refused(c, "L8"), Catch::Contains("more than 16 times"));
    m.libraries.resize(15);  // 15 restored copies stay under 16 times the file
    m.segments.resize(16);
    c.data.resize(weights_size + 64 * 15);
    auto fine = open_crafted(crafted_file(c));
    INFO((fine.ok() ? "" : fine.error().message));
    CHECK(fine.ok());
  }
}

TEST_CASE("rules W1-W2: weights and constants", "[format][rules]") {
  SECTION("W1 a constant outside its segment") {
    CHECK_THAT(refused(changed([](Manifest& m) { m.weights[0].constants[1].size = 193; }), "W1"),
               Catch::Contains("constant 'b' at offset 0x40 + size 0xc1 lies outside"));
    // A folded constant has no storage in the segment.
    auto folded = changed([](Manifest& m) {
      m.weights[0].constants[1].offset = 1 << 20;
      m.weights[0].constants[1].from_folded = true;
    });
    CHECK(open_crafted(crafted_file(folded)).ok());
  }
  SECTION("W2 a view reaching past its storage") {
    refused(changed([](Manifest& m) { m.weights[0].constants[0].shape = {6, 3}; }), "W2");  // 18 floats > 64 bytes
    refused(changed([](Manifest& m) { m.weights[0].constants[0].stride = {3}; }), "W2");
    refused(changed([](Manifest& m) { m.weights[0].constants[0].stride = {-3, 1}; }), "W2");
    refused(changed([](Manifest& m) { m.weights[0].constants[0].storage_offset = 15; }), "W2");
    refused(changed([](Manifest& m) { m.weights[0].constants[0].storage_offset = -1; }), "W2");
    refused(changed([](Manifest& m) { m.weights[0].constants[0].dtype = 99; }), "W2");
    refused(changed([](Manifest& m) { m.weights[0].constants[0].stride = {INT64_MAX, 1}; }), "W2");
    // An empty view reaches nothing, whatever its strides.
    CHECK(open_crafted(crafted_file(changed([](Manifest& m) {
            m.weights[0].constants[0].shape = {0, 3};
            m.weights[0].constants[0].stride = {1000, 1};
          }))).ok());
  }
}

TEST_CASE("rules E1-E2: examples", "[format][rules]") {
  SECTION("E1 library index") {
    refused(changed([](Manifest& m) { m.examples[0].library = 1; }), "E1");
  }
  SECTION("E2 tensor size") {
    refused(changed([](Manifest& m) { m.examples[0].inputs[0].shape = {5}; }), "E2");
    refused(changed([](Manifest& m) { m.examples[0].inputs[0].dtype = 99; }), "E2");
    refused(changed([](Manifest& m) { m.examples[0].inputs[0].shape = {-4}; }), "E2");
  }
}
