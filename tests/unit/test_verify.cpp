// verify (and file_sha256) read with pread(): a container that shrinks after it was opened gives one problem
// line naming the file and the segment, not SIGBUS.
#include "mpspack/format/container.hpp"
#include "mpspack/format/writer.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <vector>

using namespace mpspack;

TEST_CASE("verify reports a segment it cannot read as a problem", "[format][verify]") {
  const auto dir = std::filesystem::temp_directory_path() / ("mpspack-test-verify-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "shrinks.mpk";
  std::vector<uint8_t> first(4096, 0x11), second(3u << 20, 0x22);  // the second spans several read steps
  Manifest m;
  std::vector<format::PendingSegment> segs{{SegmentKind::Library, "lib.so", ByteView(first, "a"), std::nullopt},
                                           {SegmentKind::Weights, "w.blob", ByteView(second, "b"), std::nullopt}};
  REQUIRE(format::write_container(path, m, segs).ok());
  auto c = format::Container::open(path);
  REQUIRE(c.ok());
  const auto intact = format::verify(*c);
  REQUIRE(intact.ok());
  CHECK_FALSE(intact.unreadable);
  REQUIRE(format::file_sha256(*c).ok());

  const SegmentInfo& s = c->manifest().segments[1];
  std::filesystem::resize_file(path, s.offset + s.size / 2);  // cut inside the last segment, after opening
  const auto report = format::verify(*c);
  CHECK_FALSE(report.ok());
  CHECK(report.unreadable);  // `mpspack verify` exits 2 for it, as for a file it cannot open
  REQUIRE(report.problems.size() == 1);
  CHECK(report.problems[0].find(c->name() + ": cannot read segment 'w.blob'") == 0);
  CHECK(report.problems[0].find("the file ended early") != std::string::npos);
  REQUIRE(report.segments.size() == 2);
  CHECK(report.segments[0].ok);
  CHECK_FALSE(report.segments[1].ok);
  // The container's SHA-256 (run --bench) reads the same way: an error naming the file, not a digest.
  const auto sha = format::file_sha256(*c);
  REQUIRE_FALSE(sha.ok());
  CHECK(sha.error().message.find(c->name() + ": cannot read the container") == 0);
  std::filesystem::remove_all(dir);
}
