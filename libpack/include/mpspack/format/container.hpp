// Reading a container: parse the header, verify the metadata, check every structural rule of
// docs/FORMAT.md once, then trust (ExecuTorch's order). open() never reads the data segments, so
// its cost does not grow with the weights; verify() is what reads and hashes them.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/file.hpp"
#include "mpspack/format/header.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/result.hpp"

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mpspack::format {

// Called as work proceeds: bytes done out of total.
using Progress = std::function<void(uint64_t done, uint64_t total)>;

class Container {
 public:
  static Result<Container> open(const std::filesystem::path& path);
  // Checks an in-memory (or already mapped) container; `file` must outlive the result's use.
  static Result<Container> parse(MappedFile file);

  const Header& header() const { return header_; }
  const Manifest& manifest() const { return manifest_; }
  const MappedFile& file() const { return file_; }
  const std::string& name() const { return file_.name(); }
  // A segment's bytes; the index was checked at open.
  ByteView segment(uint32_t index) const;

 private:
  MappedFile file_;
  Header header_;
  Manifest manifest_;
};

// Names of the files unpack writes (a library's name, a cubin's segment name) are at most this long
// (rules L1, L7): "<name>_weights.blob" and unpack's temp file beside it still fit in 255 bytes.
inline constexpr uint64_t kFileNameBytes = 200;
// Unpack writes at most this many times the container's size (rule L8).
inline constexpr uint64_t kExpansionRatio = 16;

// A single path component of no control characters, not "." or "..", no '/' or '\'.
bool is_plain_name(std::string_view name);

// The structural rules of docs/FORMAT.md (S1..S6, L1..L8, W1..W2, E1..E2) on a decoded manifest;
// the error names the rule. Run by open() and by write_container() before it renames its output.
Status validate_manifest(const Manifest& m, const Header& h, std::string_view what);

struct SegmentCheck {
  uint32_t index = 0;
  bool ok = false;
  uint64_t computed_xxh3 = 0;
};

struct VerifyReport {
  std::vector<SegmentCheck> segments;
  std::vector<std::string> problems;  // one line each; empty when the container is intact
  uint64_t bytes_checked = 0;
  bool unreadable = false;  // a segment could not be read (I/O error, file cut short): an error, not damage
  bool ok() const { return problems.empty(); }
};

// Hashes every segment and checks that every byte outside the header, metadata and segments is
// zero. Structural problems were already refused by open().
VerifyReport verify(const Container& c, const Progress& progress = {});

// Checks the segments `indices` against their recorded hashes, reading on up to `threads` threads at once: the
// chunks of a segment that records chunk hashes are spread over them, a segment without is hashed whole by one.
// The error (Kind::Corrupt for damage, Io for a read error) names the first bad segment in `indices`' order.
Status check_segments(const Container& c, std::span<const uint32_t> indices, unsigned threads);

// SHA-256 of the whole container file in lowercase hex, as sha256sum prints it.
Result<std::string> file_sha256(const Container& c);

}  // namespace mpspack::format
