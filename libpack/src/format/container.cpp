#include "mpspack/format/container.hpp"
#include "mpspack/fd_io.hpp"

#include "mpspack/format/hash.hpp"
#include "mpspack/format/metadata.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

namespace mpspack::format {

Result<Container> Container::open(const std::filesystem::path& path) {
  MPK_TRY(auto file, MappedFile::open(path));
  return parse(std::move(file));
}

Result<Container> Container::parse(MappedFile file) {
  Container c;
  ByteView bytes = file.view();
  MPK_TRY(c.header_, read_header(bytes));
  ByteView block(bytes.span().subspan(c.header_.metadata_offset, c.header_.metadata_size), bytes.what());
  MPK_TRY(c.manifest_, decode_metadata(block));
  MPK_CHECK(validate_manifest(c.manifest_, c.header_, bytes.what()));
  c.file_ = std::move(file);
  return c;
}

ByteView Container::segment(uint32_t index) const {
  const auto& s = manifest_.segments.at(index);
  return ByteView(file_.view().span().subspan(s.offset, s.size), file_.name());
}

namespace {

// Reports the first non-zero byte in [begin, end) of the file, if any.
void check_zero(const Container& c, uint64_t begin, uint64_t end, std::string_view gap,
                VerifyReport& report) {
  const uint8_t* p = c.file().data();
  for (uint64_t i = begin; i < end; ++i)
    if (p[i] != 0) {
      report.problems.push_back(fmt::format("{}: byte {:#x} in the padding {} is {:#04x}, not zero",
                                            c.name(), i, gap, p[i]));
      return;
    }
}

constexpr uint64_t kReadStep = 1ull << 20;
constexpr uint64_t kProgressStep = 64ull << 20;

// The read buffer is page-aligned: the kernel's copy into a buffer 16 bytes past a page boundary
// (where malloc puts a large block) ran at a third of the speed on our AMD machines.
using ReadBuffer = std::unique_ptr<uint8_t, decltype(&std::free)>;
ReadBuffer make_read_buffer() {
  return ReadBuffer(static_cast<uint8_t*>(std::aligned_alloc(4096, kReadStep)), &std::free);
}

// Feeds the container's bytes [offset, offset + size) to `sink` in kReadStep pieces. Reads with pread()
// into a small buffer rather than through the container's mapping: page-cache bytes arrive faster than by
// faulting the mapping in (5.3 against 4.1 GB/s with the hash, bench/micro/run.sh), the pages read do not
// stay in the process's memory, and a read error is an error, not SIGBUS. Containers held in memory (no
// descriptor) are read in place. `what` names the range in errors.
Status read_range(const Container& c, uint64_t offset, uint64_t size, std::string_view what, ReadBuffer& buffer,
                  const std::function<void(const uint8_t*, uint64_t)>& sink) {
  const int fd = c.file().fd();
  for (uint64_t done = 0; done < size;) {
    const uint64_t want = std::min<uint64_t>(size - done, kReadStep);
    const uint8_t* chunk = c.file().data() + offset + done;
    uint64_t got = want;
    if (fd >= 0) {
      if (!buffer) buffer = make_read_buffer();
      if (!buffer) return make_error(Error::Kind::Runtime, "{}: out of memory for a read buffer", c.name());
      const bool read = pread_exact(fd, buffer.get(), want, offset + done, got);
      if (!read || got != want)
        return make_error(Error::Kind::Io, "{}: cannot read {} at offset {:#x}: {}", c.name(), what,
                          offset + done + got, !read ? std::strerror(errno) : "the file ended early");
      chunk = buffer.get();
    }
    sink(chunk, got);
    done += got;
  }
  return {};
}

// XXH3 of one segment; `count` hears of every piece read.
Result<uint64_t> hash_segment(const Container& c, const SegmentInfo& s, ReadBuffer& buffer,
                              const std::function<void(uint64_t)>& count) {
  Xxh3Stream hasher;
  MPK_CHECK(read_range(c, s.offset, s.size, fmt::format("segment '{}'", s.name), buffer,
                       [&](const uint8_t* p, uint64_t n) {
                         hasher.update(p, n);
                         count(n);
                       }));
  return hasher.digest();
}

}  // namespace

VerifyReport verify(const Container& c, const Progress& progress) {
  VerifyReport report;
  const auto& m = c.manifest();
  const auto& h = c.header();
  uint64_t total = 0;
  for (const auto& s : m.segments) total += s.size;
  check_zero(c, h.metadata_offset + h.metadata_size, h.data_offset, "after the metadata", report);
  uint64_t cursor = h.data_offset;
  ReadBuffer buffer(nullptr, &std::free);
  uint64_t reported = 0;
  for (uint32_t i = 0; i < m.segments.size(); ++i) {
    const auto& s = m.segments[i];
    check_zero(c, cursor, s.offset, fmt::format("before segment {}", i), report);
    auto hashed = hash_segment(c, s, buffer, [&](uint64_t n) {
      report.bytes_checked += n;
      if (progress && (report.bytes_checked - reported >= kProgressStep || report.bytes_checked == total))
        progress(reported = report.bytes_checked, total);
    });
    const uint64_t computed = hashed.ok() ? *hashed : 0;
    const SegmentCheck check{i, hashed.ok() && computed == s.xxh3, computed};
    if (!hashed.ok()) {
      report.unreadable = true;
      report.problems.push_back(hashed.error().message);
    } else if (!check.ok) {
      report.problems.push_back(fmt::format("{}: segment {} ('{}', {} bytes at {:#x}) is damaged: XXH3 {:016x}, recorded {:016x}",
                                            c.name(), i, s.name, s.size, s.offset, check.computed_xxh3, s.xxh3));
    }
    report.segments.push_back(check);
    cursor = s.offset + s.size;
  }
  return report;
}

Result<std::string> file_sha256(const Container& c) {
  Sha256Stream hasher;
  ReadBuffer buffer(nullptr, &std::free);
  MPK_CHECK(read_range(c, 0, c.file().size(), "the container", buffer,
                       [&](const uint8_t* p, uint64_t n) { hasher.update(p, n); }));
  return hasher.hex_digest();
}

}  // namespace mpspack::format
