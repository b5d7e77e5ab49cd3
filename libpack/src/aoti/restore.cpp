// restore_library: stream the original library back out of (stored, removed, patches).
#include "mpspack/aoti/split.hpp"

#include <algorithm>
#include <cstring>

namespace mpspack::aoti {
namespace {

using Kind = Error::Kind;

// Bytes handed to the sink at once. Chunks without a patch go straight from the (mapped) input;
// only a chunk that a patch touches is copied, so memory use stays at one chunk whatever the size.
constexpr uint64_t kChunk = uint64_t(1) << 20;

Status check_patches(const std::vector<Patch>& patches, uint64_t total) {
  uint64_t previous_end = 0;
  for (size_t i = 0; i < patches.size(); ++i) {
    const Patch& p = patches[i];
    if (!range_fits(p.offset, p.bytes.size(), total))
      return make_error(Kind::Corrupt, "restore patch {} at {:#x} + {:#x} is outside the library ({:#x} bytes)", i,
                        p.offset, p.bytes.size(), total);
    if (p.offset < previous_end)
      return make_error(Kind::Corrupt,
                        "restore patch {} at {:#x} overlaps or precedes the previous one (ends at "
                        "{:#x})",
                        i, p.offset, previous_end);
    previous_end = p.offset + p.bytes.size();
  }
  return {};
}

// Emits the output range [out, out + size) whose unpatched bytes are `data`, applying the patches
// that intersect it. `next` is the first patch that may still matter (patches are sorted).
class PatchedWriter {
 public:
  PatchedWriter(const std::vector<Patch>& patches, const ByteSink& sink) : patches_(patches), sink_(sink) {}

  Status write(const uint8_t* data, uint64_t size, uint64_t out) {
    for (uint64_t done = 0; done < size;) {
      uint64_t len = std::min(kChunk, size - done);
      MPK_CHECK(write_chunk(data + done, len, out + done));
      done += len;
    }
    return {};
  }

 private:
  Status write_chunk(const uint8_t* data, uint64_t len, uint64_t out) {
    while (next_ < patches_.size() && patches_[next_].offset + patches_[next_].bytes.size() <= out) ++next_;
    if (next_ == patches_.size() || patches_[next_].offset >= out + len) return sink_(data, len);
    buffer_.assign(data, data + len);
    for (size_t q = next_; q < patches_.size() && patches_[q].offset < out + len; ++q) {
      const Patch& p = patches_[q];
      uint64_t from = std::max(p.offset, out);
      uint64_t to = std::min(p.offset + p.bytes.size(), out + len);
      std::memcpy(buffer_.data() + (from - out), p.bytes.data() + (from - p.offset), to - from);
    }
    return sink_(buffer_.data(), len);
  }

  const std::vector<Patch>& patches_;
  const ByteSink& sink_;
  size_t next_ = 0;
  std::vector<uint8_t> buffer_;
};

}  // namespace

Status restore_library(ByteView stored, ByteView removed, uint64_t removed_offset, const std::vector<Patch>& restore,
                       const ByteSink& sink) {
  if (removed_offset > stored.size())
    return make_error(Kind::Corrupt,
                      "{}: removed range offset {:#x} is past the end of the stored library ({:#x} bytes)",
                      stored.what(), removed_offset, stored.size());
  uint64_t total = 0;
  if (!checked_add(stored.size(), removed.size(), total))
    return make_error(Kind::Corrupt, "{}: restored size overflows", stored.what());
  MPK_CHECK(check_patches(restore, total));

  PatchedWriter w(restore, sink);
  MPK_CHECK(w.write(stored.data(), removed_offset, 0));
  MPK_CHECK(w.write(removed.data(), removed.size(), removed_offset));
  return w.write(stored.data() + removed_offset, stored.size() - removed_offset, removed_offset + removed.size());
}

}  // namespace mpspack::aoti
