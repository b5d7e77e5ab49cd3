#include "mpspack/pack/subset.hpp"

#include "mpspack/format/writer.hpp"

#include <map>

namespace mpspack::pack {

Result<uint32_t> find_library(const Manifest& m, std::string_view name, std::string_view what) {
  std::string names;
  for (uint32_t i = 0; i < m.libraries.size(); ++i) {
    if (m.libraries[i].name == name) return i;
    names += (names.empty() ? "" : ", ") + m.libraries[i].name;
  }
  return make_error(Error::Kind::Invalid, "{}: no library named '{}' (it holds: {})", what, name, names);
}

std::set<uint32_t> library_segments(const Manifest& m, uint32_t library) {
  const LibraryInfo& l = m.libraries[library];
  std::set<uint32_t> s{l.segment};
  if (l.weights >= 0) s.insert(m.weights[size_t(l.weights)].segment);
  s.insert(l.cubins.begin(), l.cubins.end());
  for (const auto& e : m.examples) {
    if (e.library != library) continue;
    for (const auto* list : {&e.inputs, &e.outputs})
      for (const auto& t : *list) s.insert(t.segment);
  }
  return s;
}

Result<Manifest> write_library_subset(const format::Container& c, uint32_t library, const std::filesystem::path& output,
                                      const format::Progress& progress) {
  const Manifest& m = c.manifest();
  const LibraryInfo& lib = m.libraries[library];
  // Old segment index -> new, in the original order (segments stay in file order).
  std::map<uint32_t, uint32_t> renumber;
  std::vector<format::PendingSegment> pending;
  for (uint32_t old : library_segments(m, library)) {
    renumber[old] = uint32_t(pending.size());
    const SegmentInfo& s = m.segments[old];
    std::optional<uint64_t> anchor;
    // An embedded library's weights go where their pages can be mapped over its constants region, as build puts them.
    if (s.kind == SegmentKind::Weights && lib.flavour == Flavour::Embedded && lib.region)
      anchor = lib.region->start_vaddr;
    pending.push_back({s.kind, s.name, c.segment(old), anchor});
  }
  Manifest out;
  out.producer = m.producer;
  out.producer_version = m.producer_version;
  out.sources = m.sources;
  LibraryInfo l = lib;
  l.segment = renumber[lib.segment];
  for (auto& cubin : l.cubins) cubin = renumber[cubin];
  if (lib.weights >= 0) {
    WeightsInfo w = m.weights[size_t(lib.weights)];
    w.segment = renumber[w.segment];
    out.weights.push_back(std::move(w));
    l.weights = 0;
  }
  out.libraries.push_back(std::move(l));
  for (const auto& e : m.examples) {
    if (e.library != library) continue;
    ExampleInfo copy = e;
    copy.library = 0;
    for (auto* list : {&copy.inputs, &copy.outputs})
      for (auto& t : *list) t.segment = renumber[t.segment];
    out.examples.push_back(std::move(copy));
  }
  return format::write_container(output, std::move(out), pending, progress);
}

}  // namespace mpspack::pack
