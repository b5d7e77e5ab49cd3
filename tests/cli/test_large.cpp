// A container over 4 GiB: every offset is 64-bit. The input is generated and sparse (an external
// blob of 4.5 GiB that is mostly holes, with marker bytes around the 4 GiB line), and the writer
// keeps holes as holes, so the test costs seconds and little disk.
#include "cli_runner.hpp"
#include "fixtures.hpp"
#include "mpspack/aoti/library.hpp"
#include "mpspack/file.hpp"
#include "mpspack/format/container.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace mpspack;
using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kBlobSize = (4ull << 30) + (512ull << 20);  // 4.5 GiB
const std::vector<uint64_t> kMarkers = {0, (4ull << 30) - 1, 4ull << 30, kBlobSize - 1};

void make_sparse_blob(const fs::path& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, static_cast<off_t>(kBlobSize)) == 0);
  for (size_t i = 0; i < kMarkers.size(); ++i) {
    uint8_t b = static_cast<uint8_t>(0xA0 + i);
    REQUIRE(pwrite(fd, &b, 1, static_cast<off_t>(kMarkers[i])) == 1);
  }
  ::close(fd);
}

uint8_t byte_at(const fs::path& path, uint64_t offset) {
  int fd = ::open(path.c_str(), O_RDONLY);
  uint8_t b = 0;
  CHECK(pread(fd, &b, 1, static_cast<off_t>(offset)) == 1);
  ::close(fd);
  return b;
}

}  // namespace

TEST_CASE("a container over 4 GiB builds, inspects, verifies and unpacks", "[cli][large]") {
  auto src = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob" / "model.so";
  MPK_REQUIRE_FIXTURE(src);
  TempDir tmp;
  // A copy of a real external-blob library that records a 4.5 GiB blob.
  std::string so = slurp(src);
  auto original = MappedFile::open(src);
  REQUIRE(original.ok());
  auto analysis = aoti::analyze_library(original->view());
  REQUIRE(analysis.ok());
  REQUIRE(analysis->flavour == Flavour::ExternalBlob);
  store_u64le(reinterpret_cast<uint8_t*>(so.data()) + analysis->region.file_offset, kBlobSize);
  write_bytes(tmp / "big.so", so);
  make_sparse_blob(tmp / "big_weights.blob");

  auto mpk = tmp / "big.mpk";
  auto built = run_mpspack({"build", (tmp / "big.so").string(), "-o", mpk.string()});
  INFO(built.err);
  REQUIRE(built.exit_code == 0);
  REQUIRE(fs::file_size(mpk) > (4ull << 30));

  auto inspected = run_mpspack({"inspect", "--json", mpk.string()});
  REQUIRE(inspected.exit_code == 0);
  auto j = nlohmann::json::parse(inspected.out);
  CHECK(j["header"]["file_size"].get<uint64_t>() == fs::file_size(mpk));
  CHECK(j["weights"][0]["size"].get<uint64_t>() == kBlobSize);

  auto verified = run_mpspack({"verify", mpk.string()});
  INFO(verified.err);
  CHECK(verified.exit_code == 0);

  // A damaged byte past the 4 GiB line is found by verify.
  auto c = format::Container::open(mpk);
  REQUIRE(c.ok());
  uint64_t blob_offset = c->manifest().segments[c->manifest().weights[0].segment].offset;
  REQUIRE(blob_offset + (4ull << 30) > (4ull << 30));
  {
    // Damaged in place (a copy would cost 4.5 GiB of writes), then put back.
    off_t spot = static_cast<off_t>(blob_offset + (4ull << 30) + 4096);
    int fd = ::open(mpk.c_str(), O_RDWR);
    uint8_t was = 0, b = 0x5A;
    REQUIRE(pread(fd, &was, 1, spot) == 1);
    REQUIRE(pwrite(fd, &b, 1, spot) == 1);
    auto damaged = run_mpspack({"verify", mpk.string()});
    CHECK(damaged.exit_code == 1);
    CHECK(damaged.err.find("damaged") != std::string::npos);
    REQUIRE(pwrite(fd, &was, 1, spot) == 1);
    ::close(fd);
  }

  auto unpacked = run_mpspack({"unpack", mpk.string(), "-o", (tmp / "out").string()});
  INFO(unpacked.err);
  REQUIRE(unpacked.exit_code == 0);
  CHECK(slurp(tmp / "out" / "big.so") == so);
  auto blob = tmp / "out" / "big_weights.blob";
  REQUIRE(fs::file_size(blob) == kBlobSize);
  for (size_t i = 0; i < kMarkers.size(); ++i) CHECK(byte_at(blob, kMarkers[i]) == 0xA0 + i);
  CHECK(byte_at(blob, 1ull << 30) == 0);
}
