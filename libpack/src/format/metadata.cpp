#include "mpspack/format/metadata.hpp"

#include "container_generated.h"
#include "metadata_bounds.hpp"
#include "rules.hpp"

namespace mpspack::format {
namespace {

namespace fb = mpspack::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// ---- encode ------------------------------------------------------------------------------

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> strings(FlatBufferBuilder& b,
                                                                 const std::vector<std::string>& v) {
  return b.CreateVectorOfStrings(v);
}

Offset<fb::Library> encode_library(FlatBufferBuilder& b, const LibraryInfo& l) {
  auto name = b.CreateString(l.name);
  auto device = b.CreateString(l.device);
  auto abi = b.CreateString(l.abi);
  auto machine = b.CreateString(l.machine);
  auto needed = strings(b, l.needed);
  auto dropped = strings(b, l.dropped_needed);
  auto imports = strings(b, l.imports);
  Offset<fb::ConstantsRegion> region = 0;
  if (l.region) {
    auto section = b.CreateString(l.region->section);
    region = fb::CreateConstantsRegion(b, l.region->start_vaddr, l.region->end_vaddr, l.region->file_offset, section,
                                       l.region->writable);
  }
  auto cubins = b.CreateVector(l.cubins);
  auto sha = b.CreateString(l.original_sha256);
  std::vector<Offset<fb::Patch>> patches;
  for (const auto& p : l.restore) patches.push_back(fb::CreatePatch(b, p.offset, b.CreateVector(p.bytes)));
  auto restore = b.CreateVector(patches);
  return fb::CreateLibrary(b, name, device, abi, machine, static_cast<fb::Flavour>(l.flavour), l.segment, needed,
                           dropped, imports, region, l.weights, cubins, l.original_size, sha, l.removed_offset,
                           l.removed_size, restore);
}

Offset<fb::Constant> encode_constant(FlatBufferBuilder& b, const ConstantInfo& c) {
  auto name = b.CreateString(c.name);
  auto fqn = b.CreateString(c.fqn);
  auto shape = b.CreateVector(c.shape);
  auto stride = b.CreateVector(c.stride);
  return fb::CreateConstant(b, name, fqn, c.dtype, shape, stride, c.storage_offset, c.offset, c.size, c.type,
                            c.from_folded);
}

Offset<fb::Tensor> encode_tensor(FlatBufferBuilder& b, const TensorInfo& t) {
  return fb::CreateTensor(b, t.dtype, b.CreateVector(t.shape), t.segment);
}

}  // namespace

std::vector<uint8_t> encode_metadata(const Manifest& m) {
  FlatBufferBuilder b(4096);
  // Every field written even when it holds its default, so the block's size depends only on
  // names and counts, never on values: the writer reserves space before offsets are known.
  b.ForceDefaults(true);
  auto producer = b.CreateString(m.producer);
  auto version = b.CreateString(m.producer_version);

  std::vector<Offset<fb::Source>> sources;
  for (const auto& s : m.sources)
    sources.push_back(fb::CreateSource(b, b.CreateString(s.name), s.size, b.CreateString(s.sha256),
                                       b.CreateString(s.kind), b.CreateString(s.flavour), s.mode));
  std::vector<Offset<fb::Segment>> segments;
  for (const auto& s : m.segments)
    segments.push_back(fb::CreateSegment(b, static_cast<fb::SegmentKind>(s.kind), b.CreateString(s.name), s.offset,
                                         s.size, s.alignment, s.xxh3, b.CreateVector(s.chunk_xxh3)));
  std::vector<Offset<fb::Library>> libraries;
  for (const auto& l : m.libraries) libraries.push_back(encode_library(b, l));
  std::vector<Offset<fb::Weights>> weights;
  for (const auto& w : m.weights) {
    std::vector<Offset<fb::Constant>> constants;
    for (const auto& c : w.constants) constants.push_back(encode_constant(b, c));
    weights.push_back(fb::CreateWeights(b, w.segment, b.CreateVector(constants)));
  }
  std::vector<Offset<fb::Example>> examples;
  for (const auto& e : m.examples) {
    std::vector<Offset<fb::Tensor>> in, out;
    for (const auto& t : e.inputs) in.push_back(encode_tensor(b, t));
    for (const auto& t : e.outputs) out.push_back(encode_tensor(b, t));
    examples.push_back(fb::CreateExample(b, e.library, b.CreateVector(in), b.CreateVector(out)));
  }
  auto root = fb::CreateMetadata(b, producer, version, b.CreateVector(sources), b.CreateVector(segments),
                                 b.CreateVector(libraries), b.CreateVector(weights), b.CreateVector(examples));
  fb::FinishMetadataBuffer(b, root);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

// ---- decode ------------------------------------------------------------------------------
namespace {

// Conversion with the caps of metadata.hpp; `path` names the field in errors.
class Decoder {
 public:
  explicit Decoder(std::string what) : what_(std::move(what)) {}

  Result<std::string> str(const flatbuffers::String* s, std::string_view path) const {
    if (!s) return std::string();
    if (s->size() > limits::name_bytes)
      return rule_error(what_, "M5",
                        fmt::format("metadata {} is {} bytes long (limit {})", path, s->size(), limits::name_bytes));
    return std::string(s->c_str(), s->size());
  }

  template <class T>
  Status count(const flatbuffers::Vector<T>* v, std::string_view path, uint64_t limit = limits::items) const {
    if (v && v->size() > limit)
      return rule_error(what_, "M3", fmt::format("metadata {} has {} entries (limit {})", path, v->size(), limit));
    return {};
  }

  Result<std::vector<std::string>> strs(const flatbuffers::Vector<Offset<flatbuffers::String>>* v,
                                        std::string_view path) const {
    MPK_CHECK(count(v, path));
    std::vector<std::string> out;
    if (!v) return out;
    out.reserve(v->size());
    for (auto s : *v) {
      MPK_TRY(auto x, str(s, path));
      out.push_back(std::move(x));
    }
    return out;
  }

  template <class T>
  Result<std::vector<T>> scalars(const flatbuffers::Vector<T>* v, std::string_view path,
                                 uint64_t limit = limits::items) const {
    MPK_CHECK(count(v, path, limit));
    if (!v) return std::vector<T>();
    // Element by element through memcpy: the Verifier of FlatBuffers 2.0 checks a vector's length
    // field for 4-byte alignment but not its 8-byte elements, so a crafted buffer can place them
    // misaligned, and reading them as T would be undefined behaviour (found by fuzz_container).
    std::vector<T> out(v->size());
    const uint8_t* p = reinterpret_cast<const uint8_t*>(v->Data());
    for (size_t i = 0; i < out.size(); ++i) {
      T x;
      std::memcpy(&x, p + i * sizeof(T), sizeof(T));
      out[i] = flatbuffers::EndianScalar(x);
    }
    return out;
  }

  Result<LibraryInfo> library(const fb::Library& l) const {
    LibraryInfo out;
    MPK_TRY(out.name, str(l.name(), "library.name"));
    MPK_TRY(out.device, str(l.device(), "library.device"));
    MPK_TRY(out.abi, str(l.abi(), "library.abi"));
    MPK_TRY(out.machine, str(l.machine(), "library.machine"));
    out.flavour = static_cast<Flavour>(l.flavour());
    if (out.flavour != Flavour::Embedded && out.flavour != Flavour::MmapSelf && out.flavour != Flavour::ExternalBlob)
      return rule_error(what_, "M6", fmt::format("library '{}' has unknown flavour {}", out.name, int(l.flavour())));
    out.segment = l.segment();
    MPK_TRY(out.needed, strs(l.needed(), "library.needed"));
    MPK_TRY(out.dropped_needed, strs(l.dropped_needed(), "library.dropped_needed"));
    MPK_TRY(out.imports, strs(l.imports(), "library.imports"));
    if (const auto* r = l.region()) {
      ConstantsRegion region;
      region.start_vaddr = r->start_vaddr();
      region.end_vaddr = r->end_vaddr();
      region.file_offset = r->file_offset();
      MPK_TRY(region.section, str(r->section(), "library.region.section"));
      region.writable = r->writable();
      out.region = region;
    }
    out.weights = l.weights();
    MPK_TRY(out.cubins, scalars(l.cubins(), "library.cubins"));
    out.original_size = l.original_size();
    MPK_TRY(out.original_sha256, str(l.original_sha256(), "library.original_sha256"));
    out.removed_offset = l.removed_offset();
    out.removed_size = l.removed_size();
    MPK_CHECK(count(l.restore(), "library.restore", limits::patches));
    if (l.restore()) {
      out.restore.reserve(l.restore()->size());
      for (const auto* p : *l.restore()) {
        MPK_TRY(auto bytes, scalars(p->bytes(), "library.restore.bytes", limits::patch_bytes));
        out.restore.push_back(Patch{p->offset(), std::move(bytes)});
      }
    }
    return out;
  }

  Result<ConstantInfo> constant(const fb::Constant& c) const {
    ConstantInfo out;
    MPK_TRY(out.name, str(c.name(), "constant.name"));
    MPK_TRY(out.fqn, str(c.fqn(), "constant.fqn"));
    out.dtype = c.dtype();
    MPK_TRY(out.shape, scalars(c.shape(), "constant.shape", limits::dims));
    MPK_TRY(out.stride, scalars(c.stride(), "constant.stride", limits::dims));
    out.storage_offset = c.storage_offset();
    out.offset = c.offset();
    out.size = c.size();
    out.type = c.type();
    out.from_folded = c.from_folded();
    return out;
  }

  Result<TensorInfo> tensor(const fb::Tensor& t) const {
    TensorInfo out;
    out.dtype = t.dtype();
    MPK_TRY(out.shape, scalars(t.shape(), "tensor.shape", limits::dims));
    out.segment = t.segment();
    return out;
  }

  Result<std::vector<TensorInfo>> tensors(const flatbuffers::Vector<Offset<fb::Tensor>>* v,
                                          std::string_view path) const {
    MPK_CHECK(count(v, path));
    std::vector<TensorInfo> out;
    if (v) out.reserve(v->size());
    if (v)
      for (const auto* t : *v) {
        MPK_TRY(auto x, tensor(*t));
        out.push_back(std::move(x));
      }
    return out;
  }

  Result<SourceInfo> source(const fb::Source& s) const {
    SourceInfo x;
    MPK_TRY(x.name, str(s.name(), "source.name"));
    x.size = s.size();
    MPK_TRY(x.sha256, str(s.sha256(), "source.sha256"));
    MPK_TRY(x.kind, str(s.kind(), "source.kind"));
    MPK_TRY(x.flavour, str(s.flavour(), "source.flavour"));
    x.mode = s.mode();
    return x;
  }

  // `index` is the segment's position, for the message.
  Result<SegmentInfo> segment(const fb::Segment& s, size_t index) const {
    SegmentInfo x;
    x.kind = static_cast<SegmentKind>(s.kind());
    if (uint8_t(x.kind) > uint8_t(SegmentKind::Example))
      return rule_error(what_, "M6", fmt::format("segment {} has unknown kind {}", index, int(s.kind())));
    MPK_TRY(x.name, str(s.name(), "segment.name"));
    x.offset = s.offset();
    x.size = s.size();
    x.alignment = s.alignment();
    x.xxh3 = s.xxh3();
    MPK_TRY(x.chunk_xxh3, scalars(s.chunk_xxh3(), "segment.chunk_xxh3"));
    return x;
  }

  Result<WeightsInfo> weights(const fb::Weights& w) const {
    WeightsInfo x;
    x.segment = w.segment();
    MPK_CHECK(count(w.constants(), "weights.constants"));
    if (w.constants()) x.constants.reserve(w.constants()->size());
    if (w.constants())
      for (const auto* c : *w.constants()) {
        MPK_TRY(auto k, constant(*c));
        x.constants.push_back(std::move(k));
      }
    return x;
  }

  Result<Manifest> manifest(const fb::Metadata& m) const {
    Manifest out;
    MPK_TRY(out.producer, str(m.producer(), "producer"));
    MPK_TRY(out.producer_version, str(m.producer_version(), "producer_version"));
    MPK_CHECK(count(m.sources(), "sources"));
    if (m.sources()) out.sources.reserve(m.sources()->size());
    if (m.sources())
      for (const auto* s : *m.sources()) {
        MPK_TRY(auto x, source(*s));
        out.sources.push_back(std::move(x));
      }
    MPK_CHECK(count(m.segments(), "segments"));
    if (m.segments()) out.segments.reserve(m.segments()->size());
    if (m.segments())
      for (const auto* s : *m.segments()) {
        MPK_TRY(auto x, segment(*s, out.segments.size()));
        out.segments.push_back(std::move(x));
      }
    MPK_CHECK(count(m.libraries(), "libraries"));
    if (m.libraries()) out.libraries.reserve(m.libraries()->size());
    if (m.libraries())
      for (const auto* l : *m.libraries()) {
        MPK_TRY(auto x, library(*l));
        out.libraries.push_back(std::move(x));
      }
    MPK_CHECK(count(m.weights(), "weights"));
    if (m.weights())
      for (const auto* w : *m.weights()) {
        MPK_TRY(auto x, weights(*w));
        out.weights.push_back(std::move(x));
      }
    MPK_CHECK(count(m.examples(), "examples"));
    if (m.examples())
      for (const auto* e : *m.examples()) {
        ExampleInfo x;
        x.library = e->library();
        MPK_TRY(x.inputs, tensors(e->inputs(), "example.inputs"));
        MPK_TRY(x.outputs, tensors(e->outputs(), "example.outputs"));
        out.examples.push_back(std::move(x));
      }
    return out;
  }

 private:
  std::string what_;
};

}  // namespace

Result<Manifest> decode_metadata(ByteView block) {
  if (block.size() > limits::metadata_bytes)
    return rule_error(block.what(), "M1",
                      fmt::format("metadata block is {} bytes (limit {})", block.size(), limits::metadata_bytes));
  // FlatBuffers reads scalars in place, so the buffer must start 8-byte aligned in memory; the
  // format allows a metadata offset that is not (header_size is any value in [128, 65536]). Such a
  // block is decoded from an aligned copy (at most the metadata cap; normal files never need it).
  std::vector<uint64_t> aligned;
  if (block.size() > 0 && reinterpret_cast<uintptr_t>(block.data()) % alignof(uint64_t) != 0) {
    aligned.resize((block.size() + 7) / 8);
    std::memcpy(aligned.data(), block.data(), block.size());
    block = ByteView({reinterpret_cast<const uint8_t*>(aligned.data()), block.size()}, block.what());
  }
  // Every offset is checked, and what decoding will produce is added up, before anything is read
  // through the buffer or allocated from it.
  MPK_CHECK(verify_bounded(block));
  return Decoder(block.what()).manifest(*fb::GetMetadata(block.data()));
}

}  // namespace mpspack::format
