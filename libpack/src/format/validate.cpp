// The structural rules of docs/FORMAT.md on a decoded manifest, in one place: run by every reader
// when a container is opened, and by the writer on what it is about to write, so that nothing
// mpspack writes is refused by its own readers. Each refusal names its rule id.
#include "mpspack/format/container.hpp"
#include "mpspack/format/hash.hpp"

#include "rules.hpp"

#include <algorithm>

namespace mpspack::format {
namespace {

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

class Validator {
 public:
  Validator(const Manifest& m, const Header& h, std::string_view what) : m_(m), h_(h), what_(what) {}

  Status run() {
    MPK_CHECK(segments());
    MPK_CHECK(references());
    // Weights first: a library looks up the segment of the weights it refers to.
    for (const auto& w : m_.weights) MPK_CHECK(weights(w));
    for (const auto& l : m_.libraries) MPK_CHECK(library(l));
    MPK_CHECK(expansion());
    for (const auto& e : m_.examples) MPK_CHECK(example(e));
    return {};
  }

 private:
  template <class... Args>
  Error fail(std::string_view rule, fmt::format_string<Args...> f, Args&&... args) const {
    return rule_error(what_, rule, fmt::format(f, std::forward<Args>(args)...));
  }

  // S1..S4: aligned, inside the data region, in index order without overlap, the last one ending
  // the file (no trailing bytes: a container is never a polyglot file). S6: chunk hashes for every chunk, or none.
  Status segments() const {
    uint64_t end = h_.data_offset;
    for (uint32_t i = 0; i < m_.segments.size(); ++i) {
      const auto& s = m_.segments[i];
      if (!is_power_of_two(s.alignment) || s.alignment > kSegmentAlignment || s.offset % s.alignment != 0)
        return fail("S1",
                    "segment {} ('{}') at offset {:#x} has alignment {:#x}: not a power of two up to {:#x} "
                    "that divides its offset",
                    i, s.name, s.offset, s.alignment, kSegmentAlignment);
      if (s.offset < h_.data_offset || !range_fits(s.offset, s.size, h_.file_size))
        return fail("S2", "segment {} ('{}') at offset {:#x} + size {:#x} lies outside the data region [{:#x}, {:#x})",
                    i, s.name, s.offset, s.size, h_.data_offset, h_.file_size);
      if (s.offset < end)
        return fail("S3",
                    "segment {} ('{}') at offset {:#x} overlaps or precedes the one before it (which ends "
                    "at {:#x})",
                    i, s.name, s.offset, end);
      end = s.offset + s.size;
      if (!s.chunk_xxh3.empty() && s.chunk_xxh3.size() != hash_chunk_count(s.size))
        return fail("S6", "segment {} ('{}') of {:#x} bytes records {} chunk hashes; its {}-byte chunks need {}", i,
                    s.name, s.size, s.chunk_xxh3.size(), kHashChunkBytes, hash_chunk_count(s.size));
    }
    if (end != h_.file_size)
      return fail("S4", "the last segment ends at {:#x} but the file is {:#x} bytes", end, h_.file_size);
    return {};
  }

  Status reference(std::vector<uint8_t>& used, uint64_t index, SegmentKind kind, std::string_view owner) const {
    if (index >= m_.segments.size())
      return fail("S5", "{} refers to segment {}, but there are {}", owner, index, m_.segments.size());
    if (m_.segments[index].kind != kind)
      return fail("S5", "{} refers to segment {} of kind {}, expected {}", owner, index,
                  to_string(m_.segments[index].kind), to_string(kind));
    if (used[index]++)
      return fail("S5", "{} refers to segment {} ('{}'), which another object already refers to", owner, index,
                  m_.segments[index].name);
    return {};
  }

  // S5: every segment reference is in range and of the right kind, and no segment has two owners
  // (libraries share weights through one Weights entry, never through one segment).
  Status references() const {
    std::vector<uint8_t> used(m_.segments.size(), 0);
    for (const auto& w : m_.weights) MPK_CHECK(reference(used, w.segment, SegmentKind::Weights, "weights"));
    for (const auto& l : m_.libraries) {
      const std::string owner = fmt::format("library '{}'", l.name);
      MPK_CHECK(reference(used, l.segment, SegmentKind::Library, owner));
      for (uint32_t c : l.cubins) MPK_CHECK(reference(used, c, SegmentKind::Cubin, owner));
    }
    for (const auto& e : m_.examples) {
      for (const auto& t : e.inputs) MPK_CHECK(reference(used, t.segment, SegmentKind::Example, "example input"));
      for (const auto& t : e.outputs) MPK_CHECK(reference(used, t.segment, SegmentKind::Example, "example output"));
    }
    return {};
  }

  // W1: the constants' storage lies inside the segment; W2: each view (shape, stride, storage
  // offset) reaches only inside its constant's storage. Folded constants have no storage.
  Status weights(const WeightsInfo& w) const {
    const uint64_t size = m_.segments[w.segment].size;
    for (const auto& c : w.constants) {
      if (c.from_folded) continue;
      if (!range_fits(c.offset, c.size, size))
        return fail("W1", "constant '{}' at offset {:#x} + size {:#x} lies outside its weights segment ({:#x} bytes)",
                    c.name, c.offset, c.size, size);
      MPK_CHECK(geometry(c));
    }
    return {};
  }

  Status geometry(const ConstantInfo& c) const {
    const uint64_t element = dtype_size(c.dtype);
    if (element == 0) return fail("W2", "constant '{}' has unknown dtype {}", c.name, c.dtype);
    if (c.shape.size() != c.stride.size())
      return fail("W2", "constant '{}' has {} sizes but {} strides", c.name, c.shape.size(), c.stride.size());
    if (c.storage_offset < 0) return fail("W2", "constant '{}' has a negative storage offset", c.name);
    // The highest element the view reaches, in elements from the start of the storage.
    uint64_t last = uint64_t(c.storage_offset);
    for (size_t d = 0; d < c.shape.size(); ++d) {
      if (c.shape[d] < 0 || c.stride[d] < 0) return fail("W2", "constant '{}' has a negative size or stride", c.name);
      if (c.shape[d] == 0) return {};  // no element at all
      uint64_t reach = 0;
      if (!checked_mul(uint64_t(c.shape[d] - 1), uint64_t(c.stride[d]), reach) || !checked_add(last, reach, last))
        return fail("W2", "constant '{}''s shape and strides overflow", c.name);
    }
    uint64_t bytes = 0;
    if (!checked_add(last, 1, bytes) || !checked_mul(bytes, element, bytes) || bytes > c.size)
      return fail("W2", "constant '{}''s shape and strides reach past its {} bytes", c.name, c.size);
    return {};
  }

  Status file_name(std::string_view rule, std::string_view kind, const std::string& name) const {
    if (!is_plain_name(name) || name.size() > kFileNameBytes)
      return fail(rule,
                  "{} name '{}' is not a plain file name of at most {} bytes (no '/', '\\', control "
                  "characters, '.' or '..')",
                  kind, name, kFileNameBytes);
    return {};
  }

  Status library(const LibraryInfo& l) const {
    MPK_CHECK(file_name("L1", "library", l.name));
    const std::string owner = fmt::format("library '{}'", l.name);
    if (l.weights < -1 || (l.weights >= 0 && uint64_t(l.weights) >= m_.weights.size()))
      return fail("L2", "{} refers to weights {}, but there are {}", owner, l.weights, m_.weights.size());
    const uint64_t stored = m_.segments[l.segment].size;
    uint64_t original = 0;
    if (!checked_add(stored, l.removed_size, original) || original != l.original_size)
      return fail("L3", "{}: stored size {:#x} + removed {:#x} does not give the original size {:#x}", owner, stored,
                  l.removed_size, l.original_size);
    if (l.removed_offset > stored)
      return fail("L4", "{}: removed offset {:#x} lies past the stored library ({:#x} bytes)", owner, l.removed_offset,
                  stored);
    if (l.removed_size > 0 && (l.weights < 0 || m_.segments[m_.weights[l.weights].segment].size != l.removed_size))
      return fail("L4", "{}: {:#x} bytes were removed but its weights segment does not hold them", owner,
                  l.removed_size);
    for (const auto& p : l.restore)
      if (!range_fits(p.offset, p.bytes.size(), l.original_size))
        return fail("L5", "{}: restore patch at {:#x} + {:#x} lies outside the original ({:#x} bytes)", owner, p.offset,
                    p.bytes.size(), l.original_size);
    if (l.region && l.region->end_vaddr < l.region->start_vaddr)
      return fail("L6", "{}: constants region ends before it starts", owner);
    for (uint32_t c : l.cubins) MPK_CHECK(file_name("L7", "cubin", m_.segments[c].name));
    return {};
  }

  // L8: what unpack writes (every library restored, external blobs, cubins) is bounded by the
  // container's own size, however the libraries share their weights.
  Status expansion() const {
    uint64_t total = 0;
    auto add = [&](uint64_t n) { total = checked_add(total, n, total) ? total : UINT64_MAX; };
    for (const auto& l : m_.libraries) {
      add(l.original_size);
      if (l.flavour == Flavour::ExternalBlob && l.weights >= 0) add(m_.segments[m_.weights[l.weights].segment].size);
      for (uint32_t c : l.cubins) add(m_.segments[c].size);
    }
    uint64_t bound = 0;
    if (!checked_mul(h_.file_size, kExpansionRatio, bound)) bound = UINT64_MAX;
    if (total > bound)
      return fail("L8", "unpacking would write {:#x} bytes, more than {} times the container's {:#x} bytes", total,
                  kExpansionRatio, h_.file_size);
    return {};
  }

  Status tensor(const TensorInfo& t) const {
    uint64_t bytes = dtype_size(t.dtype);
    if (bytes == 0) return fail("E2", "example tensor has unknown dtype {}", t.dtype);
    for (int64_t d : t.shape)
      if (d < 0 || !checked_mul(bytes, uint64_t(d), bytes))
        return fail("E2", "example tensor shape is negative or overflows");
    if (bytes != m_.segments[t.segment].size)
      return fail("E2", "example tensor needs {:#x} bytes but its segment holds {:#x}", bytes,
                  m_.segments[t.segment].size);
    return {};
  }

  Status example(const ExampleInfo& e) const {
    if (e.library >= m_.libraries.size())
      return fail("E1", "example refers to library {}, but there are {}", e.library, m_.libraries.size());
    for (const auto& t : e.inputs) MPK_CHECK(tensor(t));
    for (const auto& t : e.outputs) MPK_CHECK(tensor(t));
    return {};
  }

  const Manifest& m_;
  const Header& h_;
  std::string_view what_;
};

}  // namespace

bool is_plain_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    const auto ch = static_cast<unsigned char>(c);
    return ch < 0x20 || ch == 0x7f || ch == '/' || ch == '\\';
  });
}

Status validate_manifest(const Manifest& m, const Header& h, std::string_view what) {
  return Validator(m, h, what).run();
}

}  // namespace mpspack::format
