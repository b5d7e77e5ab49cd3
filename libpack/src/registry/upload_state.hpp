// Where a chunked upload stands, kept across runs so that a push that died midway resumes its blob where the
// registry has it instead of from byte 0: one small JSON file per (repository URL, digest) under
// $XDG_CACHE_HOME/mpspack/uploads/ (~/.cache/mpspack/uploads/). The file is only a hint: whatever is wrong with
// it (unreadable, garbage, another blob's) makes it ignored, and failing to write it never fails a push.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace mpspack::registry {

struct UploadState {
  std::string location;  // the upload session's URL, as the registry last gave it
  uint64_t offset = 0;   // bytes the registry had accepted then
};

class UploadStateFile {
 public:
  // The state of `digest`'s upload to `repository_url` (scheme://host/v2/name). Without a cache folder
  // (neither XDG_CACHE_HOME nor HOME set) it loads nothing and keeps nothing.
  UploadStateFile(std::string repository_url, std::string digest);

  // The recorded state, if the file is there and consistent: same repository and digest, a location on the
  // registry's own host. Anything else is logged and removed.
  std::optional<UploadState> load() const;
  // Atomically (temp file, rename); a failure is logged and otherwise ignored.
  void save(const UploadState& state) const;
  void remove() const;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::string repository_url_;
  std::string digest_;
  std::filesystem::path path_;  // empty when there is no cache folder
};

// $XDG_CACHE_HOME/mpspack/uploads (an absolute XDG_CACHE_HOME only, as the XDG spec says), else
// $HOME/.cache/mpspack/uploads; empty when neither is set.
std::filesystem::path upload_state_dir();

}  // namespace mpspack::registry
