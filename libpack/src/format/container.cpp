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
#include <atomic>
#include <optional>
#include <thread>

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
void check_zero(const Container& c, uint64_t begin, uint64_t end, std::string_view gap, VerifyReport& report) {
  const uint8_t* p = c.file().data();
  for (uint64_t i = begin; i < end; ++i)
    if (p[i] != 0) {
      report.problems.push_back(
          fmt::format("{}: byte {:#x} in the padding {} is {:#04x}, not zero", c.name(), i, gap, p[i]));
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
                  const std::function<void(const uint8_t*, uint64_t)>& sink, bool in_place = false) {
  const int fd = in_place ? -1 : c.file().fd();
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

// XXH3 of one segment and of its chunks; `count` hears of every piece read.
Result<SegmentHasher> hash_segment(const Container& c, const SegmentInfo& s, ReadBuffer& buffer,
                                   const std::function<void(uint64_t)>& count) {
  SegmentHasher hasher(s.size);
  MPK_CHECK(
      read_range(c, s.offset, s.size, fmt::format("segment '{}'", s.name), buffer, [&](const uint8_t* p, uint64_t n) {
        hasher.update(p, n);
        count(n);
      }));
  return hasher;
}

std::string damaged(const Container& c, uint32_t i, uint64_t computed, uint64_t recorded) {
  const SegmentInfo& s = c.manifest().segments[i];
  return fmt::format("{}: segment {} ('{}', {} bytes at {:#x}) is damaged: XXH3 {:016x}, recorded {:016x}", c.name(), i,
                     s.name, s.size, s.offset, computed, recorded);
}

std::string damaged_chunk(const Container& c, uint32_t i, uint64_t chunk, uint64_t computed) {
  const SegmentInfo& s = c.manifest().segments[i];
  const uint64_t begin = chunk * kHashChunkBytes, end = std::min(s.size, begin + kHashChunkBytes);
  return fmt::format("{}: segment {} ('{}', {} bytes at {:#x}) is damaged: chunk {} (bytes {:#x}-{:#x}) has XXH3 "
                     "{:016x}, recorded {:016x}",
                     c.name(), i, s.name, s.size, s.offset, chunk, begin, end, computed, s.chunk_xxh3[chunk]);
}

// The first chunk whose hash differs from the recorded one, if chunks are recorded.
std::optional<std::string> chunk_problem(const Container& c, uint32_t i, const std::vector<uint64_t>& computed) {
  const auto& recorded = c.manifest().segments[i].chunk_xxh3;
  for (size_t k = 0; k < recorded.size() && k < computed.size(); ++k)
    if (computed[k] != recorded[k]) return damaged_chunk(c, i, k, computed[k]);
  return std::nullopt;
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
    const uint64_t computed = hashed.ok() ? hashed->digest() : 0;
    std::optional<std::string> chunk = hashed.ok() ? chunk_problem(c, i, hashed->chunk_digests()) : std::nullopt;
    const SegmentCheck check{i, hashed.ok() && computed == s.xxh3 && !chunk, computed};
    if (!hashed.ok()) {
      report.unreadable = true;
      report.problems.push_back(hashed.error().message);
    } else if (computed != s.xxh3) {
      report.problems.push_back(damaged(c, i, computed, s.xxh3));
    } else if (chunk) {
      report.problems.push_back(*chunk);
    }
    report.segments.push_back(check);
    cursor = s.offset + s.size;
  }
  return report;
}

namespace {

// One piece of check_segments' work: a whole segment (chunk < 0) or one of its recorded chunks.
struct HashTask {
  uint32_t segment;
  int64_t chunk;
  uint64_t offset, size;  // in the file
};

std::vector<HashTask> hash_tasks(const Container& c, std::span<const uint32_t> indices) {
  std::vector<HashTask> tasks;
  for (uint32_t i : indices) {
    const SegmentInfo& s = c.manifest().segments.at(i);
    if (s.chunk_xxh3.empty()) {
      tasks.push_back({i, -1, s.offset, s.size});
      continue;
    }
    for (uint64_t k = 0; k < s.chunk_xxh3.size(); ++k) {
      const uint64_t begin = k * kHashChunkBytes;
      tasks.push_back({i, int64_t(k), s.offset + begin, std::min(kHashChunkBytes, s.size - begin)});
    }
  }
  return tasks;
}

// The task's problem, if any: damage (its hash differs) or a read error.
std::optional<Error> run_task(const Container& c, const HashTask& t, ReadBuffer& buffer) {
  const SegmentInfo& s = c.manifest().segments[t.segment];
  Xxh3Stream hasher;
  // A segment of one chunk or less is read through the mapping: a fresh read buffer's first touches (a fault per
  // 4 KiB) cost more than the hash there, and the few pages stay mapped. A read error is then a SIGBUS, which the
  // handler for mapped inputs turns into one line naming the file.
  const bool in_place = s.size <= kHashChunkBytes;
  Status read = read_range(
      c, t.offset, t.size, fmt::format("segment '{}'", s.name), buffer,
      [&](const uint8_t* p, uint64_t n) { hasher.update(p, n); }, in_place);
  if (!read.ok()) return read.error();
  const uint64_t computed = hasher.digest();
  if (t.chunk < 0 && computed != s.xxh3) return Error{Error::Kind::Corrupt, damaged(c, t.segment, computed, s.xxh3)};
  if (t.chunk >= 0 && computed != s.chunk_xxh3[size_t(t.chunk)])
    return Error{Error::Kind::Corrupt, damaged_chunk(c, t.segment, uint64_t(t.chunk), computed)};
  return std::nullopt;
}

}  // namespace

Status check_segments(const Container& c, std::span<const uint32_t> indices, unsigned threads) {
  const std::vector<HashTask> tasks = hash_tasks(c, indices);
  std::vector<std::optional<Error>> problems(tasks.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    ReadBuffer buffer(nullptr, &std::free);
    for (size_t k; !failed.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < tasks.size();)
      if ((problems[k] = run_task(c, tasks[k], buffer))) failed = true;
  };
  const size_t helpers = std::min<size_t>(std::max(threads, 1u), tasks.size()) - (tasks.empty() ? 0 : 1);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < helpers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (auto& p : problems)
    if (p) return *p;  // the first in segment order
  return {};
}

Result<std::string> file_sha256(const Container& c) {
  Sha256Stream hasher;
  ReadBuffer buffer(nullptr, &std::free);
  MPK_CHECK(read_range(c, 0, c.file().size(), "the container", buffer,
                       [&](const uint8_t* p, uint64_t n) { hasher.update(p, n); }));
  return hasher.hex_digest();
}

}  // namespace mpspack::format
