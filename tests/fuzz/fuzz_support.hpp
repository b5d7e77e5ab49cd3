// Helpers shared by the fuzz targets (tests/fuzz/fuzz_*.cpp). Nothing here writes to disk: inputs
// that libpack only takes as files go to an anonymous memory file (memfd), reachable by path as
// /proc/self/fd/N for the APIs that want a path.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/file.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mpspack::fuzz {

// An anonymous in-memory file holding `size` bytes; closed on destruction unless released.
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) {
    fd_ = ::memfd_create("mpspack-fuzz", MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();  // an environment problem, not a finding: fail loudly
    }
    for (size_t done = 0; done < size;) {
      ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) {
        std::perror("write to memfd");
        std::abort();
      }
      done += size_t(n);
    }
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  ~MemFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  // A path naming the file; valid while this object lives.
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  // Hands the descriptor over (e.g. to MappedFile::from_fd, which owns it from then on).
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// A property the code under test promises was broken: report it the way a sanitizer would, so the
// fuzzer stops and keeps the input.
[[noreturn]] inline void property_failed(const char* what) {
  std::fprintf(stderr, "fuzz property failed: %s\n", what);
  std::abort();
}

}  // namespace mpspack::fuzz
