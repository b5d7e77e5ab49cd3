#include "mpspack/format/writer.hpp"

#include "mpspack/format/hash.hpp"
#include "mpspack/file.hpp"
#include "mpspack/format/metadata.hpp"

#include <bit>

namespace mpspack::format {
namespace {

// An anchored segment keeps the alignment its anchor has (at most 64 KiB).
uint64_t anchored_alignment(uint64_t anchor) {
  uint64_t low = anchor % kSegmentAlignment;
  return low == 0 ? kSegmentAlignment : (uint64_t(1) << std::countr_zero(low));
}

}  // namespace

std::vector<SegmentInfo> lay_out(const std::vector<PendingSegment>& pending, uint64_t data_offset) {
  std::vector<SegmentInfo> out;
  uint64_t cursor = data_offset;
  for (const auto& p : pending) {
    SegmentInfo s;
    s.kind = p.kind;
    s.name = p.name;
    s.size = p.bytes.size();
    s.chunk_xxh3.assign(hash_chunk_count(s.size), 0);  // filled in as the segment is written
    uint64_t start = align_up(cursor, kSegmentAlignment);
    if (p.congruent_to) {
      uint64_t want = *p.congruent_to % kSegmentAlignment;
      // Back up into the previous 64 KiB window when the anchor allows it without overlap.
      uint64_t candidate = start - kSegmentAlignment + want;
      start = (start >= kSegmentAlignment && candidate >= cursor) ? candidate : start + want;
      s.alignment = anchored_alignment(*p.congruent_to);
    } else {
      s.alignment = kSegmentAlignment;
    }
    s.offset = start;
    cursor = start + s.size;
    out.push_back(std::move(s));
  }
  return out;
}

// Each segment is hashed and written in pieces that end on 2 MiB boundaries of the file: a write that covers a
// whole aligned 2 MiB leaves it in the page cache as one 2 MiB folio, which a model's mapping of the weights then
// gets a PMD at a time, where smaller writes leave small folios, a page-table entry per 4 KiB and a slower first
// run (docs/PERFORMANCE.md, "Weights without a copy"). Not larger: with 16 MiB pieces the bytes the hash has just
// read are no longer in cache for the write's copy, which costs build system time.
constexpr uint64_t kPiece = 2ull << 20;

namespace {

// The reader's own checks on what is about to be written: the metadata decoded back from its
// bytes (limits M1..M6) and the structural rules, against the header it will have. Whatever
// passes here opens; whatever fails is refused before the output is renamed into place.
Status check_as_reader(const std::vector<uint8_t>& metadata, const Header& h, const std::filesystem::path& path) {
  MPK_TRY(Manifest decoded, decode_metadata(ByteView(metadata, path.string())));
  return validate_manifest(decoded, h, path.string());
}

}  // namespace

Result<Manifest> write_container(const std::filesystem::path& path, Manifest manifest,
                                 const std::vector<PendingSegment>& pending, const Progress& progress,
                                 const std::function<Status(Manifest&)>& complete, Durability durability) {
  // The metadata's size does not depend on offsets or hashes (encode_metadata forces every
  // field), so a first encoding with placeholder values tells where the data region starts.
  manifest.segments = lay_out(pending, 0);
  uint64_t metadata_size = encode_metadata(manifest).size();
  uint64_t data_offset = align_up(kHeaderSize + metadata_size, kSegmentAlignment);
  manifest.segments = lay_out(pending, data_offset);

  uint64_t total = 0;
  for (const auto& p : pending) total += p.bytes.size();
  uint64_t file_size =
      manifest.segments.empty() ? data_offset : manifest.segments.back().offset + manifest.segments.back().size;
  Header h;
  h.metadata_offset = kHeaderSize;
  h.metadata_size = metadata_size;
  h.data_offset = data_offset;
  h.data_size = file_size - data_offset;
  h.file_size = file_size;
  // Refused before a byte is written: nothing is left behind, and no time is spent on the data.
  MPK_CHECK(check_as_reader(encode_metadata(manifest), h, path));

  MPK_TRY(auto out, AtomicWriter::create(path, durability));
  MPK_CHECK(out.write_zeros(data_offset));  // header + metadata are filled in last
  uint64_t done = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    auto& seg = manifest.segments[i];
    MPK_CHECK(out.write_zeros(seg.offset - out.position()));
    SegmentHasher hasher(seg.size);
    const uint8_t* p = pending[i].bytes.data();
    for (uint64_t off = 0; off < seg.size;) {
      const uint64_t n = std::min<uint64_t>(seg.size - off, kPiece - (seg.offset + off) % kPiece);
      hasher.update(p + off, n);
      MPK_CHECK(out.write_sparse(p + off, n));
      off += n;
      done += n;
      if (progress) progress(done, total);
    }
    seg.xxh3 = hasher.digest();
    seg.chunk_xxh3 = hasher.chunk_digests();
  }
  if (out.position() != file_size)
    return make_error(Error::Kind::Runtime, "{}: internal error: wrote {} bytes, planned {}", path.string(),
                      out.position(), file_size);

  if (complete) MPK_CHECK(complete(manifest));
  std::vector<uint8_t> metadata = encode_metadata(manifest);
  if (metadata.size() != metadata_size)
    return make_error(Error::Kind::Runtime, "{}: internal error: metadata size changed from {} to {}", path.string(),
                      metadata_size, metadata.size());
  MPK_CHECK(check_as_reader(metadata, h, path));
  auto header = encode_header(h);
  h.checksum = header_checksum(ByteView(header), ByteView(metadata));
  header = encode_header(h);
  MPK_CHECK(out.pwrite(0, header.data(), header.size()));
  MPK_CHECK(out.pwrite(kHeaderSize, metadata.data(), metadata.size()));
  MPK_CHECK(out.commit());
  return manifest;
}

}  // namespace mpspack::format
