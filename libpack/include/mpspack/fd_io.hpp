// Whole reads and writes on a file descriptor: again after EINTR and after short transfers. Inline, so that the
// CUDA backend plugin, which links no libpack code of its own, uses the same ones.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace mpspack {

// Writes the n bytes at p to fd, in calls of at most 1 GiB; false (errno set) when a write fails.
inline bool write_all(int fd, const void* p, uint64_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, b, std::min<uint64_t>(n, uint64_t(1) << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    b += w;
    n -= uint64_t(w);
  }
  return true;
}

// Writes the n bytes at p to fd at `offset`, in calls of at most 1 GiB; false (errno set) when a write fails.
inline bool pwrite_all(int fd, const void* p, uint64_t n, uint64_t offset) {
  auto* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, b, std::min<uint64_t>(n, uint64_t(1) << 30), off_t(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    b += w, n -= uint64_t(w), offset += uint64_t(w);
  }
  return true;
}

// Reads n bytes at `offset` of fd into p, in calls of at most 1 GiB; `got` says how many arrived, fewer than n
// when the file ended first. false (errno set) on a read error.
inline bool pread_exact(int fd, void* p, uint64_t n, uint64_t offset, uint64_t& got) {
  auto* b = static_cast<uint8_t*>(p);
  got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, b + got, std::min<uint64_t>(n - got, uint64_t(1) << 30), off_t(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) return true;
    got += uint64_t(r);
  }
  return true;
}

}  // namespace mpspack
