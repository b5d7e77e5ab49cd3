// write_container with segments that lie in an input file (PendingSegment::file): they are read from the file
// with pread, so the container must hold the same bytes, and get the same hashes, as one written from memory,
// whatever the file offset; a file that ends before the segment gives an error naming it and leaves no output.
#include "mpspack/format/writer.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

using namespace mpspack;

namespace {
std::vector<uint8_t> read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST_CASE("segments read from their input file give the container written from memory", "[format][writer]") {
  const auto dir = std::filesystem::temp_directory_path() / ("mpspack-test-file-segs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // A weights segment of 5 MiB + 3 bytes (several 2 MiB pieces, the last one short, and a zero block), placed in
  // the input after 4097 bytes of something else; a library segment from memory before it.
  std::vector<uint8_t> library(10000, 0x7f), weights((5u << 20) + 3);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = uint8_t(i * 2654435761u >> 24);
  std::fill(weights.begin() + (1u << 20), weights.begin() + (1u << 20) + (64u << 10), 0);
  std::vector<uint8_t> file_bytes(4097, 0xee);
  file_bytes.insert(file_bytes.end(), weights.begin(), weights.end());
  const auto input = dir / "input.bin";
  std::ofstream(input, std::ios::binary)
      .write(reinterpret_cast<const char*>(file_bytes.data()), std::streamsize(file_bytes.size()));
  const int fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);

  auto segments = [&](bool from_file) {
    std::vector<format::PendingSegment> segs{
        {SegmentKind::Library, "lib.so", ByteView(library, "lib"), std::nullopt},
        {SegmentKind::Weights, "w.blob", ByteView(weights, "input.bin"), std::nullopt}};
    if (from_file) {
      segs[1].file = fd;
      segs[1].file_offset = 4097;
    }
    return segs;
  };
  auto memory = format::write_container(dir / "memory.mpk", Manifest{}, segments(false));
  auto file = format::write_container(dir / "file.mpk", Manifest{}, segments(true));
  REQUIRE(memory.ok());
  REQUIRE(file.ok());
  CHECK(read_all(dir / "file.mpk") == read_all(dir / "memory.mpk"));
  CHECK(file->segments[1].xxh3 == memory->segments[1].xxh3);
  CHECK(file->segments[1].chunk_xxh3 == memory->segments[1].chunk_xxh3);

  SECTION("a file that ends before the segment does") {
    std::filesystem::resize_file(input, 4097 + (3u << 20));
    auto cut = format::write_container(dir / "cut.mpk", Manifest{}, segments(true));
    REQUIRE_FALSE(cut.ok());
    CHECK(cut.error().message.find("input.bin: read error:") == 0);
    CHECK_FALSE(std::filesystem::exists(dir / "cut.mpk"));
  }
  ::close(fd);
  std::filesystem::remove_all(dir);
}
