// diff: pair the objects of two manifests by name, compare the fields that say what the model is, and the bytes:
// every segment compared is hashed from the file (a damaged container differs from an intact one), unless the
// caller asked for the metadata only, which compares the hashes the metadata records.
#include "mpspack/pack/diff.hpp"

#include "mpspack/format/hash.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

namespace mpspack::pack {
namespace {

using Side = std::optional<std::string>;

std::string hex64(uint64_t v) { return fmt::format("{:016x}", v); }

// XXH3-64 of byte ranges, each range hashed once however many constants name it: a table may
// list one range a million times, and hashing it per reference would make diff's work grow with
// the references instead of the file.
class RangeHashes {
 public:
  const std::string& get(const format::Container& c, uint32_t segment, uint64_t offset, uint64_t size) {
    auto [it, fresh] = cache_.try_emplace(Key{&c, segment, offset, size});
    if (fresh) {
      it->second = fmt::format("{:016x}", format::xxh3_64(c.segment(segment).span().subspan(offset, size)));
      bytes_hashed_ += size;
    }
    return it->second;
  }
  uint64_t bytes_hashed() const { return bytes_hashed_; }

 private:
  using Key = std::tuple<const format::Container*, uint32_t, uint64_t, uint64_t>;
  std::map<Key, std::string> cache_;
  uint64_t bytes_hashed_ = 0;
};

struct Differ {
  const format::Container& a;
  const format::Container& b;
  bool metadata_only;
  std::vector<Difference> out;
  RangeHashes hashes;

  // A segment's XXH3-64 as text: of its bytes, or as recorded with metadata_only.
  std::string segment_hash(const format::Container& c, uint32_t index) {
    const SegmentInfo& s = c.manifest().segments.at(index);
    return metadata_only ? hex64(s.xxh3) : hashes.get(c, index, 0, s.size);
  }

  void field(const std::string& path, const std::string& va, const std::string& vb) {
    if (va != vb) out.push_back({path, va, vb});
  }
  void one_side(const std::string& path, bool in_a) {
    out.push_back({path, in_a ? Side("present") : std::nullopt, in_a ? std::nullopt : Side("present")});
  }

  void libraries();
  void library(const std::string& path, const LibraryInfo& la, const LibraryInfo& lb);
  void weights(const std::string& path, const LibraryInfo& la, const LibraryInfo& lb);
  void constants(const std::string& path, const WeightsInfo& wa, const WeightsInfo& wb);
  std::string constant_hash(const format::Container& c, const WeightsInfo& w, const ConstantInfo& k);
  std::string cubins_text(const format::Container& c, const LibraryInfo& l);
  std::string tensor_text(const format::Container& c, const TensorInfo& t);
  void metadata();
};

std::string list_text(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s + "]";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}", i ? "," : "", shape[i]);
  return s + "]";
}

// "name:xxh3" of each cubin segment, in the library's order.
std::string Differ::cubins_text(const format::Container& c, const LibraryInfo& l) {
  std::vector<std::string> v;
  for (uint32_t s : l.cubins) v.push_back(c.manifest().segments.at(s).name + ":" + segment_hash(c, s));
  return list_text(v);
}

// XXH3-64 of a constant's byte range inside its weights segment; folded constants have none.
std::string Differ::constant_hash(const format::Container& c, const WeightsInfo& w, const ConstantInfo& k) {
  if (k.from_folded) return "folded";
  // Non-folded constants were checked to lie inside their segment when the container was opened.
  return hashes.get(c, w.segment, k.offset, k.size);
}

void Differ::libraries() {
  const auto& la = a.manifest().libraries;
  const auto& lb = b.manifest().libraries;
  std::map<std::string, const LibraryInfo*> by_name_b;
  for (const auto& l : lb) by_name_b.emplace(l.name, &l);
  for (const auto& l : la) {
    std::string path = "libraries[" + l.name + "]";
    auto it = by_name_b.find(l.name);
    if (it == by_name_b.end()) {
      one_side(path, true);
      continue;
    }
    library(path, l, *it->second);
    weights("weights[" + l.name + "]", l, *it->second);
  }
  std::map<std::string, bool> in_a;
  for (const auto& l : la) in_a[l.name] = true;
  for (const auto& l : lb)
    if (!in_a.count(l.name)) one_side("libraries[" + l.name + "]", false);
}

void Differ::library(const std::string& path, const LibraryInfo& la, const LibraryInfo& lb) {
  field(path + ".device", la.device, lb.device);
  field(path + ".machine", la.machine, lb.machine);
  field(path + ".abi", la.abi, lb.abi);
  field(path + ".flavour", to_string(la.flavour), to_string(lb.flavour));
  field(path + ".needed", list_text(la.needed), list_text(lb.needed));
  field(path + ".dropped_needed", list_text(la.dropped_needed), list_text(lb.dropped_needed));
  field(path + ".imports", list_text(la.imports), list_text(lb.imports));
  field(path + ".original_sha256", la.original_sha256, lb.original_sha256);
  field(path + ".library_xxh3", segment_hash(a, la.segment), segment_hash(b, lb.segment));
  field(path + ".cubins", cubins_text(a, la), cubins_text(b, lb));
}

void Differ::weights(const std::string& path, const LibraryInfo& la, const LibraryInfo& lb) {
  if (la.weights < 0 || lb.weights < 0) {
    if (la.weights >= 0 || lb.weights >= 0) one_side(path, la.weights >= 0);
    return;
  }
  const WeightsInfo& wa = a.manifest().weights.at(la.weights);
  const WeightsInfo& wb = b.manifest().weights.at(lb.weights);
  if (!wa.constants.empty() && !wb.constants.empty() && !metadata_only) return constants(path + ".constants", wa, wb);
  // Without a constants table on both sides, only the whole segments can be compared.
  field(path + ".constants_table", wa.constants.empty() ? "absent" : "present",
        wb.constants.empty() ? "absent" : "present");
  const auto& sa = a.manifest().segments.at(wa.segment);
  const auto& sb = b.manifest().segments.at(wb.segment);
  field(path + ".size", std::to_string(sa.size), std::to_string(sb.size));
  field(path + ".xxh3", segment_hash(a, wa.segment), segment_hash(b, wb.segment));
}

void Differ::constants(const std::string& path, const WeightsInfo& wa, const WeightsInfo& wb) {
  std::map<std::string, const ConstantInfo*> by_name_b;
  for (const auto& k : wb.constants) by_name_b.emplace(k.name, &k);
  std::map<std::string, bool> in_a;
  for (const auto& k : wa.constants) {
    in_a[k.name] = true;
    std::string p = path + "[" + k.name + "]";
    auto it = by_name_b.find(k.name);
    if (it == by_name_b.end()) {
      one_side(p, true);
      continue;
    }
    const ConstantInfo& kb = *it->second;
    field(p + ".dtype", dtype_name(k.dtype), dtype_name(kb.dtype));
    field(p + ".shape", shape_text(k.shape), shape_text(kb.shape));
    field(p + ".xxh3", constant_hash(a, wa, k), constant_hash(b, wb, kb));
  }
  for (const auto& k : wb.constants)
    if (!in_a.count(k.name)) one_side(path + "[" + k.name + "]", false);
}

std::string Differ::tensor_text(const format::Container& c, const TensorInfo& t) {
  return fmt::format("{}{} {}", dtype_name(t.dtype), shape_text(t.shape), segment_hash(c, t.segment));
}

void Differ::metadata() {
  const auto& ma = a.manifest();
  const auto& mb = b.manifest();
  field("producer", ma.producer, mb.producer);  // producer_version excluded: a rebuild is the same model
  field("sources.count", std::to_string(ma.sources.size()), std::to_string(mb.sources.size()));
  for (size_t i = 0; i < std::min(ma.sources.size(), mb.sources.size()); ++i) {
    const auto& sa = ma.sources[i];
    const auto& sb = mb.sources[i];
    std::string p = fmt::format("sources[{}]", i);
    // Where the input lay (its directory) is not part of the model; its file name is.
    field(p + ".name", std::filesystem::path(sa.name).filename().string(),
          std::filesystem::path(sb.name).filename().string());
    field(p + ".kind", sa.kind, sb.kind);
    field(p + ".size", std::to_string(sa.size), std::to_string(sb.size));
    field(p + ".sha256", sa.sha256, sb.sha256);
    field(p + ".flavour", sa.flavour, sb.flavour);
    // What unpack restores; a container that did not record it (format 1.0) says nothing either way.
    if (sa.mode != 0 && sb.mode != 0)
      field(p + ".mode", fmt::format("{:04o}", sa.mode), fmt::format("{:04o}", sb.mode));
  }
  field("examples.count", std::to_string(ma.examples.size()), std::to_string(mb.examples.size()));
  for (size_t i = 0; i < std::min(ma.examples.size(), mb.examples.size()); ++i) {
    auto texts = [&](const format::Container& c, const std::vector<TensorInfo>& ts) {
      std::vector<std::string> v;
      for (const auto& t : ts) v.push_back(tensor_text(c, t));
      return list_text(v);
    };
    std::string p = fmt::format("examples[{}]", i);
    field(p + ".library", ma.libraries.at(ma.examples[i].library).name, mb.libraries.at(mb.examples[i].library).name);
    field(p + ".inputs", texts(a, ma.examples[i].inputs), texts(b, mb.examples[i].inputs));
    field(p + ".outputs", texts(a, ma.examples[i].outputs), texts(b, mb.examples[i].outputs));
  }
}

}  // namespace

std::vector<Difference> diff(const format::Container& a, const format::Container& b, const DiffOptions& options,
                             DiffWork* work) {
  Differ d{a, b, options.metadata_only, {}, {}};
  d.libraries();
  d.metadata();
  if (work) work->bytes_hashed = d.hashes.bytes_hashed();
  return std::move(d.out);
}

}  // namespace mpspack::pack
