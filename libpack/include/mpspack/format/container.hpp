// Reading a container: parse the header, verify the metadata, check every structural rule of
// docs/FORMAT.md once, then trust (ExecuTorch's order). open() never reads the data segments, so
// its cost does not grow with the weights; verify() is what reads and hashes them.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/file.hpp"
#include "mpspack/format/header.hpp"
#include "mpspack/model.hpp"
#include "mpspack/result.hpp"

#include <filesystem>
#include <functional>
#include <string>
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

// The structural rules on a decoded manifest (segments in bounds, ordered, aligned, not
// overlapping, indices valid, constants inside their blob, ...). Exposed for tests.
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

// SHA-256 of the whole container file in lowercase hex, as sha256sum prints it.
Result<std::string> file_sha256(const Container& c);

}  // namespace mpspack::format
