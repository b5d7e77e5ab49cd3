// Routing decided after dlopen, before any weights move: the library's large mallocs and copies on several
// threads (large_blocks.hpp), and its copies of its weights to the device made by the backend (import_slots.hpp).
#include "model_impl.hpp"

#include "import_slots.hpp"
#include "large_blocks.hpp"
#include "mpspack/elf/elf_file.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace mpspack::runtime::loader {

const SegmentInfo& weights_segment(const Model::Impl& m) {
  const auto& manifest = m.container->manifest();
  return manifest.segments[manifest.weights[size_t(m.lib.weights)].segment];
}

bool may_map_weights(const Model::Impl& m, const LoadOptions& o) {
  if (m.lib.weights < 0 || m.backend->device() != "cpu" || m.container->file().fd() < 0) return false;
  if (m.lib.flavour != Flavour::Embedded && m.lib.flavour != Flavour::ExternalBlob) return false;
  const SegmentInfo& seg = weights_segment(m);
  return seg.size > 0 && seg.size >= o.map_weights_min_bytes && seg.offset % 64 == 0;  // as aligned as the region
}

// Only for a library whose constants fill a large block: Create mallocs one block of their size. Below that,
// reading the library's relocations would cost more (~0.3 ms) than it could save. Also for a library whose weights
// may be offered as a mapped block (map_weights_min_bytes).
void route_allocations(Model::Impl& m, const LoadOptions& o) {
  if (!o.prefault_large_blocks || m.lib.weights < 0) return;
  if (weights_segment(m).size < kLargeBlock && !may_map_weights(m, o)) return;
  auto elf = elf::ElfFile::parse(m.container->segment(m.lib.segment));
  if (!elf.ok()) return;  // the container was built from it: cannot fail
  m.routed = route_large_blocks(*elf, m.base, m.what().c_str());
}

// The library's own copies of its weights to the device made by the backend (Backend::weight_copy_routes), for
// weights that come from the container's file and reach the mapping threshold.
void route_weight_copies(Model::Impl& m, const LoadOptions& o) {
  if (!o.prefault_large_blocks || o.copy_weights || m.lib.weights < 0 || m.container->file().fd() < 0) return;
  if (m.lib.flavour != Flavour::Embedded && m.lib.flavour != Flavour::ExternalBlob) return;
  if (weights_segment(m).size < std::max<uint64_t>(o.map_weights_min_bytes, 1)) return;
  const std::vector<ImportRoute> routes = m.backend->weight_copy_routes();
  if (routes.empty()) return;
  auto elf = elf::ElfFile::parse(m.container->segment(m.lib.segment));
  if (!elf.ok()) return;  // the container was built from it: cannot fail
  std::string why = route_imports(*elf, m.base, routes);
  if (!why.empty()) spdlog::debug("{}: its copies of its weights to the device left to it: {}", m.what(), why);
  m.copies_routed = why.empty();
}

}  // namespace mpspack::runtime::loader
