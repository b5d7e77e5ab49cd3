#include "remote_artifact.hpp"

#include "parallel_transfers.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mpspack::registry {
namespace {

// A config lists a few hundred bytes per layer; more than this is not one of ours.
constexpr uint64_t kMaxConfigBytes = 64u << 20;

Result<int> scratch_file(const std::filesystem::path& folder, uint64_t size) {
  int fd = folder.empty() ? memfd_create("mpspack-pull", MFD_CLOEXEC)
                          : ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && !folder.empty()) fd = memfd_create("mpspack-pull", MFD_CLOEXEC);  // no O_TMPFILE there
  if (fd < 0) return make_error(Error::Kind::Io, "cannot create a scratch file: {}", std::strerror(errno));
  if (::ftruncate(fd, off_t(size)) != 0) {
    const int e = errno;
    ::close(fd);
    return make_error(Error::Kind::Io, "cannot size a {}-byte scratch file: {}", size, std::strerror(e));
  }
  return fd;
}

}  // namespace

Result<RemoteArtifact> open_artifact(Client& client, HttpSession& session) {
  RemoteArtifact a;
  MPK_TRY(a.manifest, get_manifest(client, session));
  MPK_TRY(std::string config_text,
          fetch_small_blob(client, session, a.manifest.config.digest, a.manifest.config.size, kMaxConfigBytes));
  MPK_TRY(a.config, parse_config(config_text, client.reference().to_string()));
  MPK_CHECK(check_config_matches(client, a.manifest, a.config));
  return a;
}

Result<uint64_t> fetch_layers(Client& client, const std::vector<Layer>& layers, unsigned parallel,
                              const std::function<Status(uint64_t, const uint8_t*, size_t)>& write,
                              const TransferProgress& progress) {
  uint64_t total = 0;
  for (const auto& l : layers) total += l.size;
  SharedProgress shared(progress, total);
  MPK_CHECK(for_each_parallel(layers.size(), parallel, [&](HttpSession& s, size_t i) {
    const Layer& l = layers[i];
    return fetch_blob(client, s, l.digest, l.size, [&](uint64_t at, const uint8_t* data, size_t n) {
      shared.add(n);
      return write(l.offset + at, data, n);
    });
  }));
  return total;
}

Result<format::Container> fetch_into_scratch(Client& client, const RemoteArtifact& artifact,
                                             const std::vector<Layer>& layers, const std::filesystem::path& folder,
                                             unsigned parallel, const TransferProgress& progress) {
  MPK_TRY(int fd, scratch_file(folder, artifact.config.file_size));
  auto fetched = fetch_layers(
      client, layers, parallel,
      [fd](uint64_t at, const uint8_t* data, size_t n) -> Status {
        if (::pwrite(fd, data, n, off_t(at)) != ssize_t(n))
          return make_error(Error::Kind::Io, "scratch file: write failed: {}", std::strerror(errno));
        return {};
      },
      progress);
  if (!fetched.ok()) {
    ::close(fd);
    return fetched.error();
  }
  MPK_TRY(MappedFile file, MappedFile::from_fd(fd, client.reference().to_string()));
  return format::Container::parse(std::move(file));
}

}  // namespace mpspack::registry
