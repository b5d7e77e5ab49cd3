// A writer of format 1.0 metadata, as mpspack wrote it before `Source.mode` was appended (format 1.1): the same
// tables without that field, so a test can hand the reader a container an older mpspack wrote.
#pragma once

#include "container_generated.h"
#include "crafted_container.hpp"
#include "mpspack/manifest.hpp"

#include <cstdint>
#include <vector>

namespace mpspack::test {

inline std::vector<uint8_t> encode_metadata_1_0(const Manifest& m) {
  namespace fb = mpspack::fb;
  using flatbuffers::Offset;
  flatbuffers::FlatBufferBuilder b;
  b.ForceDefaults(true);
  auto producer = b.CreateString(m.producer);
  auto version = b.CreateString(m.producer_version);
  std::vector<Offset<fb::Source>> sources;
  for (const auto& s : m.sources) {
    auto name = b.CreateString(s.name), sha = b.CreateString(s.sha256), kind = b.CreateString(s.kind),
         flavour = b.CreateString(s.flavour);
    fb::SourceBuilder sb(b);  // every 1.0 field, and no mode
    sb.add_name(name);
    sb.add_size(s.size);
    sb.add_sha256(sha);
    sb.add_kind(kind);
    sb.add_flavour(flavour);
    sources.push_back(sb.Finish());
  }
  std::vector<Offset<fb::Segment>> segments;
  for (const auto& s : m.segments)
    segments.push_back(fb::CreateSegment(b, static_cast<fb::SegmentKind>(s.kind), b.CreateString(s.name), s.offset,
                                         s.size, s.alignment, s.xxh3));
  std::vector<Offset<fb::Library>> libraries;
  for (const auto& l : m.libraries) {
    Offset<fb::ConstantsRegion> region = 0;
    if (l.region)
      region = fb::CreateConstantsRegion(b, l.region->start_vaddr, l.region->end_vaddr, l.region->file_offset,
                                         b.CreateString(l.region->section), l.region->writable);
    std::vector<Offset<fb::Patch>> patches;
    for (const auto& p : l.restore) patches.push_back(fb::CreatePatch(b, p.offset, b.CreateVector(p.bytes)));
    libraries.push_back(fb::CreateLibrary(b, b.CreateString(l.name), b.CreateString(l.device), b.CreateString(l.abi),
                                          b.CreateString(l.machine), static_cast<fb::Flavour>(l.flavour), l.segment,
                                          b.CreateVectorOfStrings(l.needed), b.CreateVectorOfStrings(l.dropped_needed),
                                          b.CreateVectorOfStrings(l.imports), region, l.weights,
                                          b.CreateVector(l.cubins), l.original_size, b.CreateString(l.original_sha256),
                                          l.removed_offset, l.removed_size, b.CreateVector(patches)));
  }
  std::vector<Offset<fb::Weights>> weights;
  for (const auto& w : m.weights) {
    std::vector<Offset<fb::Constant>> constants;
    for (const auto& c : w.constants)
      constants.push_back(fb::CreateConstant(b, b.CreateString(c.name), b.CreateString(c.fqn), c.dtype,
                                             b.CreateVector(c.shape), b.CreateVector(c.stride), c.storage_offset,
                                             c.offset, c.size, c.type, c.from_folded));
    weights.push_back(fb::CreateWeights(b, w.segment, b.CreateVector(constants)));
  }
  std::vector<Offset<fb::Example>> examples;
  for (const auto& e : m.examples) {
    auto tensors = [&](const std::vector<TensorInfo>& ts) {
      std::vector<Offset<fb::Tensor>> out;
      for (const auto& t : ts) out.push_back(fb::CreateTensor(b, t.dtype, b.CreateVector(t.shape), t.segment));
      return b.CreateVector(out);
    };
    auto in = tensors(e.inputs);
    auto out = tensors(e.outputs);
    examples.push_back(fb::CreateExample(b, e.library, in, out));
  }
  auto root = fb::CreateMetadata(b, producer, version, b.CreateVector(sources), b.CreateVector(segments),
                                 b.CreateVector(libraries), b.CreateVector(weights), b.CreateVector(examples));
  fb::FinishMetadataBuffer(b, root);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

// `file` (a whole container) rewritten as format 1.0 with the manifest `m`: header version 1.0, the 1.0
// metadata, the data region unchanged at the same offset (the new block must fit before it).
inline std::vector<uint8_t> as_format_1_0(const std::vector<uint8_t>& file, const Manifest& m) {
  namespace f = format::field;
  const std::vector<uint8_t> meta = encode_metadata_1_0(m);
  const uint64_t data_offset = load_u64le(file.data() + f::data_offset);
  if (format::kHeaderSize + meta.size() > data_offset) throw std::runtime_error("1.0 metadata does not fit");
  std::vector<uint8_t> out(file);
  std::fill(out.begin() + format::kHeaderSize, out.begin() + static_cast<ptrdiff_t>(data_offset), 0);
  std::memcpy(out.data() + format::kHeaderSize, meta.data(), meta.size());
  store_u16le(out.data() + f::version_minor, 0);
  store_u64le(out.data() + f::metadata_size, meta.size());
  fix_checksum(out);
  return out;
}

}  // namespace mpspack::test
