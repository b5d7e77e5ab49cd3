// Reading PyTorch `.pt2` packages (the zip archives `aoti_compile_and_package` writes): which models
// they hold, where each model's compiled library, wrapper source, weights blob and cubins are, and
// streaming one entry out into an anonymous temp file. libzip stays behind this header.
//
// Layout (aoti-abi.md section 4): `<root>/archive_format` ("pt2"), `<root>/archive_version`,
// `<root>/byteorder`, and per model `<root>/data/aotinductor/<model>/<stem>.so` (torch 2.11 names it
// `<hash>.wrapper.so`), `<stem>.cpp`, `<stem>_metadata.json`, optional `<stem>_weights.blob` and
// `*.cubin`. Pickled weights (`<root>/data/weights/...`) are refused: only torch's Python loader
// reads them.
#pragma once

#include "mpspack/file.hpp"
#include "mpspack/result.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mpspack::pt2 {

// One model folder `<root>/data/aotinductor/<name>/`. Entry names are full zip entry names.
struct Pt2Model {
  std::string name;                        // the folder name, e.g. "model"
  std::string library_entry;               // the compiled `.so`
  std::string wrapper_cpp_entry;           // `<stem>.cpp`; empty when not packaged
  std::string weights_entry;               // `<stem>_weights.blob`; empty for embedded weights
  std::string metadata_entry;              // `<stem>_metadata.json`; empty when not packaged
  std::vector<std::string> cubin_entries;  // `*.cubin` under the folder, sorted
  // The wrapper's `*_metadata.json` flattened to strings (AOTI_DEVICE_KEY, AOTI_PLATFORM,
  // AOTI_CPU_ISA, ...); non-string JSON values are kept as their JSON text.
  std::map<std::string, std::string> metadata;

  // metadata["AOTI_DEVICE_KEY"] ("cpu", "cuda", "mps"), or "" when absent.
  std::string device() const;
};

// One zip entry as the central directory declares it.
struct Pt2Entry {
  std::string name;
  uint64_t size = 0;  // uncompressed bytes
  uint64_t compressed_size = 0;
  uint32_t crc32 = 0;
  bool stored = true;  // false when compressed (deflate, ...)
};

class Pt2Package {
 public:
  // Opens `path` and validates it: a zip (NotThisFormat otherwise; Corrupt when it looks like a
  // zip but its directory is damaged or truncated), with exactly one `<root>/archive_format` that
  // says "pt2" (NotThisFormat otherwise), and at least one model with a compiled library.
  // Unsupported: pickled weights without a blob, no `.so`, encrypted entries.
  static Result<Pt2Package> open(const std::filesystem::path& path);

  Pt2Package();
  Pt2Package(Pt2Package&&) noexcept;
  Pt2Package& operator=(Pt2Package&&) noexcept;
  ~Pt2Package();

  const std::vector<Pt2Model>& models() const { return models_; }
  const std::vector<Pt2Entry>& entries() const { return entries_; }
  const std::string& root() const { return root_; }  // "pkg" for "pkg/archive_format"
  const std::string& name() const { return name_; }  // the path as given, for messages
  // The entry called `entry`, or nullptr.
  const Pt2Entry* find(const std::string& entry) const;

  // Streams one entry (in chunks, never whole in memory) into an anonymous temp file (O_TMPFILE
  // in $TMPDIR or /tmp, else memfd_create) and maps it read-only. The bytes are checked against
  // the declared size and the CRC-32 (libzip checks it at the end of the stream). The mapping's
  // name is "<package>:<entry>"; its fd() can be handed to dlopen via /proc/self/fd/N.
  // Calls are serialised internally (one libzip handle per package).
  Result<MappedFile> extract(const std::string& entry) const;

  // Reads a small entry into a string; refuses entries whose declared size exceeds `max_size`.
  Result<std::string> read_text(const std::string& entry, uint64_t max_size) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string name_;
  std::string root_;
  std::vector<Pt2Entry> entries_;
  std::vector<Pt2Model> models_;
};

}  // namespace mpspack::pt2
