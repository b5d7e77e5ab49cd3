#include "mpspack/format/container.hpp"

#include "hash.hpp"
#include "mpspack/format/metadata.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>

namespace mpspack::format {
namespace {

Error corrupt(std::string_view what, std::string msg) {
  return Error{Error::Kind::Corrupt, fmt::format("{}: {}", what, msg)};
}

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

Status check_segments(const Manifest& m, const Header& h, std::string_view what) {
  std::vector<uint32_t> order(m.segments.size());
  std::iota(order.begin(), order.end(), 0);
  for (uint32_t i = 0; i < m.segments.size(); ++i) {
    const auto& s = m.segments[i];
    if (!is_power_of_two(s.alignment) || s.alignment > kSegmentAlignment)
      return corrupt(what, fmt::format("segment {} ('{}') has alignment {:#x}, not a power of two up to {:#x}",
                                       i, s.name, s.alignment, kSegmentAlignment));
    if (s.offset % s.alignment != 0)
      return corrupt(what, fmt::format("segment {} ('{}') at offset {:#x} is not aligned to {:#x}", i,
                                       s.name, s.offset, s.alignment));
    if (s.offset < h.data_offset || !range_fits(s.offset, s.size, h.file_size))
      return corrupt(what, fmt::format("segment {} ('{}') at offset {:#x} + size {:#x} lies outside the data region [{:#x}, {:#x})",
                                       i, s.name, s.offset, s.size, h.data_offset, h.file_size));
  }
  // Segments are stored in index order, without overlap; the last one ends the file (no
  // trailing bytes: a container is never a polyglot file).
  uint64_t end = h.data_offset;
  for (uint32_t i = 0; i < m.segments.size(); ++i) {
    const auto& s = m.segments[i];
    if (s.offset < end)
      return corrupt(what, fmt::format("segment {} ('{}') at offset {:#x} overlaps or precedes the one before it (which ends at {:#x})",
                                       i, s.name, s.offset, end));
    end = s.offset + s.size;
  }
  if (end != h.file_size)
    return corrupt(what, fmt::format("the last segment ends at {:#x} but the file is {:#x} bytes", end,
                                     h.file_size));
  return {};
}

Status check_segment_ref(const Manifest& m, uint64_t index, SegmentKind kind, std::string_view owner,
                         std::string_view what) {
  if (index >= m.segments.size())
    return corrupt(what, fmt::format("{} refers to segment {}, but there are {}", owner, index,
                                     m.segments.size()));
  if (m.segments[index].kind != kind)
    return corrupt(what, fmt::format("{} refers to segment {} of kind {}, expected {}", owner, index,
                                     to_string(m.segments[index].kind), to_string(kind)));
  return {};
}

Status check_library(const Manifest& m, const LibraryInfo& l, std::string_view what) {
  std::string owner = fmt::format("library '{}'", l.name);
  MPK_CHECK(check_segment_ref(m, l.segment, SegmentKind::Library, owner, what));
  for (uint32_t c : l.cubins) MPK_CHECK(check_segment_ref(m, c, SegmentKind::Cubin, owner, what));
  if (l.weights < -1 || (l.weights >= 0 && uint64_t(l.weights) >= m.weights.size()))
    return corrupt(what, fmt::format("{} refers to weights {}, but there are {}", owner, l.weights,
                                     m.weights.size()));
  uint64_t stored = m.segments[l.segment].size;
  uint64_t original = 0;
  if (!checked_add(stored, l.removed_size, original) || original != l.original_size)
    return corrupt(what, fmt::format("{}: stored size {:#x} + removed {:#x} does not give the original size {:#x}",
                                     owner, stored, l.removed_size, l.original_size));
  if (l.removed_offset > stored)
    return corrupt(what, fmt::format("{}: removed offset {:#x} lies past the stored library ({:#x} bytes)",
                                     owner, l.removed_offset, stored));
  if (l.removed_size > 0) {
    if (l.weights < 0 || m.segments[m.weights[l.weights].segment].size != l.removed_size)
      return corrupt(what, fmt::format("{}: {:#x} bytes were removed but its weights segment does not hold them",
                                       owner, l.removed_size));
  }
  for (const auto& p : l.restore)
    if (!range_fits(p.offset, p.bytes.size(), l.original_size))
      return corrupt(what, fmt::format("{}: restore patch at {:#x} + {:#x} lies outside the original ({:#x} bytes)",
                                       owner, p.offset, p.bytes.size(), l.original_size));
  if (l.region && l.region->end_vaddr < l.region->start_vaddr)
    return corrupt(what, fmt::format("{}: constants region ends before it starts", owner));
  return {};
}

Status check_weights(const Manifest& m, const WeightsInfo& w, std::string_view what) {
  MPK_CHECK(check_segment_ref(m, w.segment, SegmentKind::Weights, "weights", what));
  uint64_t size = m.segments[w.segment].size;
  for (const auto& c : w.constants)
    if (!c.from_folded && !range_fits(c.offset, c.size, size))
      return corrupt(what, fmt::format("constant '{}' at offset {:#x} + size {:#x} lies outside its weights segment ({:#x} bytes)",
                                       c.name, c.offset, c.size, size));
  return {};
}

Status check_tensor(const Manifest& m, const TensorInfo& t, std::string_view what) {
  MPK_CHECK(check_segment_ref(m, t.segment, SegmentKind::Example, "example tensor", what));
  uint64_t bytes = dtype_size(t.dtype);
  if (bytes == 0) return corrupt(what, fmt::format("example tensor has unknown dtype {}", t.dtype));
  for (int64_t d : t.shape)
    if (d < 0 || !checked_mul(bytes, uint64_t(d), bytes))
      return corrupt(what, "example tensor shape is negative or overflows");
  if (bytes != m.segments[t.segment].size)
    return corrupt(what, fmt::format("example tensor needs {:#x} bytes but its segment holds {:#x}", bytes,
                                     m.segments[t.segment].size));
  return {};
}

}  // namespace

Status validate_manifest(const Manifest& m, const Header& h, std::string_view what) {
  MPK_CHECK(check_segments(m, h, what));
  // Weights first: check_library looks up the segment of the weights a library refers to.
  for (const auto& w : m.weights) MPK_CHECK(check_weights(m, w, what));
  for (const auto& l : m.libraries) MPK_CHECK(check_library(m, l, what));
  for (const auto& e : m.examples) {
    if (e.library >= m.libraries.size())
      return corrupt(what, fmt::format("example refers to library {}, but there are {}", e.library,
                                       m.libraries.size()));
    for (const auto& t : e.inputs) MPK_CHECK(check_tensor(m, t, what));
    for (const auto& t : e.outputs) MPK_CHECK(check_tensor(m, t, what));
  }
  return {};
}

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
      const ssize_t n = ::pread(fd, buffer.get(), want, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return make_error(Error::Kind::Io, "{}: cannot read {} at offset {:#x}: {}", c.name(), what, offset + done,
                          n < 0 ? std::strerror(errno) : "the file ended early");
      chunk = buffer.get();
      got = static_cast<uint64_t>(n);
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
