// Work and memory bounds of the container readers and writer, asserted as sizes and counts:
// - metadata whose FlatBuffers references share one string, list or table many times is refused
//   by its total decoded size (rule M4) before it is decoded;
// - diff and verify hash each byte range once, however many constants name it;
// - the writer refuses what a reader would refuse, before it writes anything.
#include "crafted_container.hpp"
#include "shared_metadata.hpp"
#include "format/metadata_bounds.hpp"
#include "mpspack/format/writer.hpp"
#include "mpspack/pack/diff.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <filesystem>

using namespace mpspack;
using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Opens the block inside a container and expects rule M4, with the process's peak memory growing
// by far less than what the block would decode to.
void refused_by_total(const std::vector<uint8_t>& block) {
  const long before = peak_rss_kib();
  auto c = open_crafted(crafted_file(block, {}));
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.error().message, Catch::Contains("rule M4: "));
  CHECK(peak_rss_kib() - before < 64 * 1024);
}

}  // namespace

TEST_CASE("bounds: one 4 KiB string referenced 2^20 times is refused by its decoded size", "[format][bounds]") {
  // 4.2 MB of metadata that would decode to 4 GiB of strings.
  refused_by_total(shared_block(1, 1u << 20, 4096));
}

TEST_CASE("bounds: a shared library table multiplies its lists, and is charged per reference", "[format][bounds]") {
  SECTION("1024 references to a library with 1024 references to a 4 KiB string") {
    refused_by_total(shared_block(1024, 1024, 4096));  // a few KB decoding to 4 GiB
  }
  SECTION("2^16 references to a library with 2^16 imports: 2^32 entries to verify") {
    refused_by_total(shared_block(1u << 16, 1u << 16, 1));
  }
  SECTION("64 references to a library with 4096 references to a 1 MiB patch") {
    refused_by_total(shared_block(64, 0, 1, 4096, 1u << 20));
  }
}

TEST_CASE("bounds: each reference counts toward the decoded size", "[format][bounds]") {
  const auto block = shared_block(3, 1000, 100);
  auto size = format::verify_bounded(ByteView(block, "block"));
  REQUIRE(size.ok());
  // 3 libraries, each 1000 imports of (32 + 100) bytes: counted three times, not once.
  CHECK(size->entries == 3 + 3 * 1000);
  const uint64_t imports = 3 * 1000 * (format::limits::string_cost + 100);
  CHECK(size->bytes >= imports);
  CHECK(size->bytes < imports + 3 * 1024);
  auto decoded = format::decode_metadata(ByteView(block, "block"));
  REQUIRE(decoded.ok());
  REQUIRE(decoded->libraries.size() == 3);
  CHECK(decoded->libraries[2].imports.size() == 1000);
}

namespace {

// A container whose one library's weights (1 MiB) carry a constants table naming the whole segment
// `refs` times.
fs::path many_references(const fs::path& dir, uint32_t refs, std::vector<uint8_t>& library,
                         std::vector<uint8_t>& weights) {
  library.assign(4096, 0x7f);
  weights.assign(1u << 20, 0x33);
  Manifest m;
  LibraryInfo l;
  l.name = "model";
  l.flavour = Flavour::ExternalBlob;
  l.segment = 0;
  l.weights = 0;
  l.original_size = library.size();
  m.libraries.push_back(l);
  WeightsInfo w{1, {}};
  for (uint32_t i = 0; i < refs; ++i)
    w.constants.push_back(
        ConstantInfo{"c" + std::to_string(i), "", dtype::uint8, {1 << 20}, {1}, 0, 0, 1u << 20, 1, false});
  m.weights.push_back(w);
  std::vector<format::PendingSegment> segs{
      {SegmentKind::Library, "model.so", ByteView(library), std::nullopt},
      {SegmentKind::Weights, "model_weights.blob", ByteView(weights), std::nullopt}};
  const fs::path path = dir / "refs.mpk";
  auto written = format::write_container(path, m, segs);
  INFO((written.ok() ? "" : written.error().message));
  REQUIRE(written.ok());
  return path;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("mpspack-test-bounds-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("bounds: diff and verify hash a range named by 1000 constants once", "[format][bounds]") {
  TempDir tmp;
  std::vector<uint8_t> library, weights;
  const fs::path path = many_references(tmp.path, 1000, library, weights);
  auto a = format::Container::open(path);
  auto b = format::Container::open(path);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  pack::DiffWork work;
  const auto differences = pack::diff(*a, *b, {}, &work);
  CHECK(differences.empty());
  // The library's bytes and the weights' once per container, not 1000 times.
  CHECK(work.bytes_hashed == 2 * (library.size() + weights.size()));
  const auto report = format::verify(*a);
  CHECK(report.ok());
  CHECK(report.bytes_checked == library.size() + weights.size());
}

TEST_CASE("bounds: the writer refuses what a reader would, before writing anything", "[format][bounds][writer]") {
  TempDir tmp;
  std::vector<uint8_t> library(4096, 0x11), cubin(64, 0x22), tiny(1, 0);
  auto attempt = [&](const std::function<void(Manifest&, std::vector<format::PendingSegment>&)>& change,
                     const std::string& rule) {
    Manifest m;
    LibraryInfo l;
    l.name = "model";
    l.segment = 0;
    l.original_size = library.size();
    m.libraries.push_back(l);
    std::vector<format::PendingSegment> segs{{SegmentKind::Library, "model.so", ByteView(library), std::nullopt}};
    change(m, segs);
    const fs::path out = tmp.path / "out.mpk";
    auto written = format::write_container(out, m, segs);
    REQUIRE_FALSE(written.ok());
    CHECK_THAT(written.error().message, Catch::StartsWith(out.string() + ": rule " + rule + ": "));
    CHECK(fs::is_empty(tmp.path));  // no output, no temp file
  };
  SECTION("a source path over 4096 bytes") {
    attempt([](Manifest& m, auto&) { m.sources.push_back(SourceInfo{std::string(4097, 'p'), 1, "", "so", ""}); }, "M5");
  }
  SECTION("an import name over 4096 bytes") {
    attempt([](Manifest& m, auto&) { m.libraries[0].imports = {"aoti_torch_" + std::string(4090, 'x')}; }, "M5");
  }
  SECTION("library names with a backslash, a newline, or over 200 bytes") {
    for (std::string name : {std::string("a\\b"), std::string("a\nb"), std::string(252, 'n')}) {
      INFO(name.size());
      attempt([&](Manifest& m, auto&) { m.libraries[0].name = name; }, "L1");
    }
  }
  SECTION("a cubin file name of 243 bytes") {
    attempt(
        [&](Manifest& m, auto& segs) {
          segs.push_back({SegmentKind::Cubin, std::string(237, 'k') + ".cubin", ByteView(cubin), std::nullopt});
          m.libraries[0].cubins = {1};
        },
        "L7");
  }
  SECTION("a constant outside a 1-byte weights placeholder") {
    attempt(
        [&](Manifest& m, auto& segs) {
          segs.push_back({SegmentKind::Weights, "model_weights.blob", ByteView(tiny), std::nullopt});
          m.libraries[0].flavour = Flavour::ExternalBlob;
          m.libraries[0].weights = 0;
          m.weights.push_back(
              WeightsInfo{1, {ConstantInfo{"l_weight", "", dtype::float32, {4}, {1}, 0, 0, 16, 1, false}}});
        },
        "W1");
  }
}
