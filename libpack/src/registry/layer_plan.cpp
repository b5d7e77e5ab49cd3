// Cutting a container into layers (artifact.hpp says why the cuts fall where they do).
#include "mpspack/registry/artifact.hpp"

#include "mpspack/dtype.hpp"

#include <algorithm>
#include <cstring>

namespace mpspack::registry {
namespace {

// The bytes a constant's view reaches, without the padding AOTInductor puts after it (which differs between
// CPU and CUDA builds): the same tensor gives the same bytes whatever the build.
uint64_t exact_bytes(const ConstantInfo& c) {
  const uint64_t element = dtype_size(c.dtype);
  uint64_t last = uint64_t(c.storage_offset);
  for (size_t d = 0; d < c.shape.size(); ++d) {
    if (c.shape[d] == 0) return 0;
    last += uint64_t(c.shape[d] - 1) * uint64_t(c.stride[d]);
  }
  return std::min(c.size, (last + 1) * element);
}

void add_chunks(std::vector<Layer>& out, const Layer& whole) {
  for (uint64_t done = 0; done < whole.size; done += kChunkBytes) {
    Layer piece = whole;
    piece.offset = whole.offset + done;
    piece.size = std::min(kChunkBytes, whole.size - done);
    out.push_back(piece);
  }
}

const WeightsInfo* weights_of_segment(const Manifest& m, uint32_t segment) {
  for (const auto& w : m.weights)
    if (w.segment == segment && !w.constants.empty()) return &w;
  return nullptr;
}

// One layer per large constant, one per run of small ones; bytes between them are left to fill_gaps().
void add_constants(std::vector<Layer>& out, const SegmentInfo& seg, uint32_t index, const WeightsInfo& w) {
  std::vector<const ConstantInfo*> stored;
  for (const auto& c : w.constants)
    if (c.type != 4 && !c.from_folded) stored.push_back(&c);
  std::sort(stored.begin(), stored.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  const size_t first_new = out.size();
  bool run_open = false;
  for (const ConstantInfo* c : stored) {
    const uint64_t begin = seg.offset + c->offset, size = exact_bytes(*c), end = begin + size;
    if (size == 0) continue;
    Layer* last = out.size() > first_new ? &out.back() : nullptr;
    // Views that share storage overlap: the earlier layer grows to cover both.
    if (last && begin < last->offset + last->size) {
      last->size = std::max(last->offset + last->size, end) - last->offset;
      continue;
    }
    const bool small = stored.size() > kGroupConstantsAbove && size < kSmallConstantBytes;
    if (small && run_open) {
      last->size = end - last->offset;
      last->kind = "constants";
      continue;
    }
    out.push_back({"constant", begin, size, int64_t(index), c->name, ""});
    run_open = small;
  }
}

bool all_zero(const uint8_t* p, uint64_t n) {
  static const uint8_t zeros[4096] = {};
  for (uint64_t done = 0; done < n;) {
    const uint64_t step = std::min<uint64_t>(sizeof zeros, n - done);
    if (std::memcmp(p + done, zeros, step) != 0) return false;
    done += step;
  }
  return true;
}

// Bytes no layer covers are zero in a valid container; any that are not become filler layers, so the file
// rebuilt from the layers is the same whatever it holds.
std::vector<Layer> fill_gaps(const format::Container& c, std::vector<Layer> layers) {
  std::vector<Layer> out;
  uint64_t covered = 0;
  const uint8_t* base = c.file().data();
  auto gap = [&](uint64_t end) {
    if (end > covered && !all_zero(base + covered, end - covered))
      add_chunks(out, {"filler", covered, end - covered, -1, "", ""});
  };
  for (auto& l : layers) {
    gap(l.offset);
    covered = l.offset + l.size;
    out.push_back(std::move(l));
  }
  gap(c.file().size());
  return out;
}

}  // namespace

std::vector<Layer> plan_layers(const format::Container& c) {
  const Manifest& m = c.manifest();
  std::vector<Layer> layers;
  layers.push_back({"header", 0, c.header().metadata_offset + c.header().metadata_size, -1, "", ""});
  for (uint32_t i = 0; i < m.segments.size(); ++i) {
    const SegmentInfo& seg = m.segments[i];
    if (seg.size == 0) continue;
    if (seg.kind == SegmentKind::Library) {
      layers.push_back({"library", seg.offset, seg.size, int64_t(i), seg.name, ""});
    } else if (const WeightsInfo* w = seg.kind == SegmentKind::Weights ? weights_of_segment(m, i) : nullptr) {
      add_constants(layers, seg, i, *w);
    } else {
      add_chunks(layers, {"chunk", seg.offset, seg.size, int64_t(i), seg.name, ""});
    }
  }
  return fill_gaps(c, std::move(layers));
}

}  // namespace mpspack::registry
