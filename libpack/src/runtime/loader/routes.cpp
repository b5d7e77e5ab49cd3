// Routing decided after dlopen, before any weights move: the library's large mallocs and copies on several
// threads (large_blocks.hpp), an mmap-self library's mapping of its weights answered with the container's pages
// (self_mapping.hpp), its copies of its weights to the device made by the backend (import_slots.hpp), and its
// OpenMP regions' team size followed by the shim's (parallel.hpp).
#include "model_impl.hpp"

#include "import_slots.hpp"
#include "large_blocks.hpp"
#include "runtime/shim/parallel.hpp"
#include "self_mapping.hpp"
#include "runtime/tuning/tuning.hpp"
#include "mpspack/elf/elf_file.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace mpspack::runtime::loader {

const SegmentInfo& weights_segment(const Model::Impl& m) {
  const auto& manifest = m.container->manifest();
  return manifest.segments[manifest.weights[size_t(m.lib.weights)].segment];
}

bool weights_reach_threshold(const Model::Impl& m) {
  return m.lib.weights >= 0 && weights_segment(m).size >= std::max<uint64_t>(tuning().map_weights_min_bytes, 1);
}

bool may_map_weights(const Model::Impl& m) {
  if (m.lib.weights < 0 || m.backend->device() != "cpu" || m.container->file().fd() < 0) return false;
  const SegmentInfo& seg = weights_segment(m);
  // As aligned as the region.
  return seg.size > 0 && seg.size >= tuning().map_weights_min_bytes && seg.offset % 64 == 0;
}

// Only for a library whose constants fill a large block: Create mallocs one block of their size. Below that,
// reading the library's relocations would cost more than it could save. Also for a library whose weights
// may be offered as a mapped block (Tuning::map_weights_min_bytes).
void route_allocations(Model::Impl& m) {
  if (!tuning().large_blocks || m.lib.weights < 0) return;
  if (weights_segment(m).size < kLargeBlock && !may_map_weights(m)) return;
  auto elf = elf::ElfFile::parse(m.container->segment(m.lib.segment));
  if (!elf.ok()) return;  // the container was built from it: cannot fail
  m.routed = route_large_blocks(*elf, m.base, m.what().c_str());
}

// An mmap-self library's mapping of its weights answered with the container's pages, for weights that come from
// the container's file and reach the mapping threshold; otherwise, or when its mmap cannot be routed (it does not
// import it, or keeps its address elsewhere), the weights written into the hole left for them in its file.
Status route_self_mapping(Model::Impl& m) {
  if (!m.self_weights) return {};
  std::string why = "below the mapping threshold or not from a file";
  if (tuning().large_blocks && m.container->file().fd() >= 0 && weights_reach_threshold(m)) {
    Status offered = m.self_weights->offer_mapping(m.container->file().fd(), weights_segment(m).offset);
    const ImportRoute routes[] = {{"mmap", reinterpret_cast<void*>(&routed_self_mmap), true},
                                  {"mmap64", reinterpret_cast<void*>(&routed_self_mmap), true}};
    auto elf = elf::ElfFile::parse(m.container->segment(m.lib.segment));
    if (!offered.ok()) why = offered.error().message;
    else if (!elf.ok()) why = elf.error().message;
    else if (why = route_imports(*elf, m.base, routes, {}, "mmap"); !why.empty())
      why = route_imports(*elf, m.base, routes, {}, "mmap64");
  }
  m.self_mapped = why.empty();
  if (m.self_mapped) return {};
  spdlog::debug("{}: its weights written into its file: {}", m.what(), why);
  auto filled = m.self_weights->fill_hole();
  return filled.ok() ? filled : filled.error().context(m.what());
}

// The library's own copies of its weights to the device made by the backend (Backend::weight_copy_routes), for
// weights that come from the container's file and reach the mapping threshold.
void route_weight_copies(Model::Impl& m, const LoadOptions& o) {
  if (!tuning().large_blocks || o.copy_weights || m.container->file().fd() < 0) return;
  if (m.lib.flavour != Flavour::Embedded && m.lib.flavour != Flavour::ExternalBlob && !m.self_mapped) return;
  if (!weights_reach_threshold(m)) return;
  const std::vector<ImportRoute> routes = m.backend->weight_copy_routes();
  if (routes.empty()) return;
  auto elf = elf::ElfFile::parse(m.container->segment(m.lib.segment));
  if (!elf.ok()) return;  // the container was built from it: cannot fail
  std::string why = route_imports(*elf, m.base, routes);
  if (!why.empty()) spdlog::debug("{}: its copies of its weights to the device left to it: {}", m.what(), why);
  m.copies_routed = why.empty();
}

// The library's OpenMP regions through shim::model_parallel, which sizes the shim's and oneDNN's teams as the
// library's; a library that keeps GOMP_parallel's address elsewhere only bypasses that, which is safe.
// MPSPACK_MODEL_TEAMS=0 leaves them alone, for measurements (bench/openmp_teams.sh).
void route_openmp_teams(Model::Impl& m) {
  if (!tuning().model_teams) return;
  const auto& needed = m.lib.needed;
  if (std::find(needed.begin(), needed.end(), "libgomp.so.1") == needed.end() || !shim::openmp_available()) return;
  auto elf = elf::ElfFile::parse(m.container->segment(m.lib.segment));
  if (!elf.ok()) return;  // the container was built from it: cannot fail
  const ImportRoute routes[] = {{"GOMP_parallel", reinterpret_cast<void*>(&shim::model_parallel)}};
  std::string why = route_imports(*elf, m.base, routes);
  if (!why.empty()) spdlog::debug("{}: its OpenMP teams not followed: {}", m.what(), why);
}

}  // namespace mpspack::runtime::loader
