// External weights after Create (an external blob): used in place from the container when its constants table
// matches the model's, else given to UpdateConstantsFromBlob, which copies them into a block it mallocs (offered
// mapped where it may: weights_offer.hpp); a GPU library's copies of them deferred to the backend.
#include "model_impl.hpp"

#include "weights_offer.hpp"

#include <spdlog/spdlog.h>

namespace mpspack::runtime::loader {
namespace {

using Kind = Error::Kind;

// Why the container's constants table cannot be used in place, or "" when it can.
std::string in_place_obstacle(Model::Impl& m, const WeightsInfo& w, ByteView blob) {
  if (m.lib.region && m.lib.region->writable && m.backend->device() == "cpu")
    return "the model may write to its constants (writable section), and the container is mapped read-only";
  if (w.constants.empty())
    return "the container has no constants table (shapes and strides are not available through the C API; "
           "a .pt2 input records them)";
  if (!m.api.num_constants || !m.api.constant_name || !m.api.constant_dtype || !m.api.constant_data_size ||
      !m.api.constant_from_folded || !m.api.update_user_managed_pairs)
    return "the library lacks the constant-info functions";
  size_t n = 0;
  if (m.api.num_constants(m.handle, &n) != 0 || n != w.constants.size())
    return fmt::format("the model has {} constants, the container's table {}", n, w.constants.size());
  uint64_t running = 0;
  for (size_t i = 0; i < n; ++i) {
    const ConstantInfo& c = w.constants[i];
    const char* name = nullptr;
    int32_t dt = -1;
    size_t size = 0;
    bool folded = false;
    if (m.api.constant_name(m.handle, i, &name) != 0 || m.api.constant_dtype(m.handle, i, &dt) != 0 ||
        m.api.constant_data_size(m.handle, i, &size) != 0 || m.api.constant_from_folded(m.handle, i, &folded) != 0)
      return fmt::format("the model did not describe constant {}", i);
    if (!name || c.name != name || c.dtype != dt || c.size != size || c.from_folded != folded)
      return fmt::format("constant {} differs between the model ({}) and the container's table ({})", i,
                         name ? name : "?", c.name);
    if (folded) continue;
    if (c.offset != running) return fmt::format("constant {} is at offset {:#x}, expected {:#x}", i, c.offset, running);
    // Its view (shape, strides, storage offset) reaches only inside its storage: checked when the
    // container was opened (docs/FORMAT.md, rule W2).
    running += size;
  }
  if (running > blob.size()) return fmt::format("constants need {:#x} bytes, the blob has {:#x}", running, blob.size());
  return {};
}

Status blob_in_place(Model::Impl& m, const LoadOptions& o, const WeightsInfo& w, ByteView blob) {
  const SegmentInfo& seg = m.container->manifest().segments[w.segment];
  MPK_TRY(m.staged, m.backend->stage_weights(blob, m.container->file().fd(), seg.offset));
  if (m.staged.owner) {
    m.t.upload_bytes = m.staged.bytes;
    m.t.upload_ms = m.staged.ms;
  }
  std::vector<AOTInductorConstantMapEntry> pairs;
  for (const ConstantInfo& c : w.constants) {
    if (c.from_folded) continue;
    void* data = m.staged.base + c.offset;  // the CPU shim never writes through it
    auto t = m.backend->wrap(data, c.dtype, c.shape, c.stride, c.storage_offset);
    if (!t.ok()) return t.error().context(m.what());
    m.weight_tensors.push_back(*t);
    pairs.push_back({c.name.c_str(), *t});
  }
  if (m.api.update_user_managed_pairs(m.handle, pairs.data(), pairs.size(), /*use_inactive=*/false,
                                      /*validate_full_update=*/true) != 0)
    return m.error(Kind::Runtime, "AOTInductorModelContainerUpdateUserManagedConstantBufferPairs failed (see above)");
  m.mode = m.staged.owner ? WeightsMode::BlobUploaded : WeightsMode::BlobInPlace;
  if (!m.staged.owner) populate_weights(m, blob.span());
  return {};
}

}  // namespace

Result<bool> with_weight_copies_deferred(Model::Impl& m, const void* mirror, const std::function<Status()>& load) {
  if (!m.copies_routed || !mirror) {
    MPK_CHECK(load());
    return false;
  }
  const SegmentInfo& seg = weights_segment(m);
  m.backend->defer_weight_copies(mirror, seg.size, m.container->file().fd(), seg.offset);
  Status loaded = load();
  auto moved = m.backend->finish_weight_copies();
  if (!loaded.ok()) return loaded.error();
  if (!moved.ok()) return moved.error().context(m.what());
  m.t.upload_bytes = moved->bytes;
  m.t.upload_ms = moved->ms;
  return moved->bytes > 0;
}

Status load_external_blob(Model::Impl& m, const LoadOptions& o) {
  if (m.lib.weights < 0) return m.error(Kind::Corrupt, "external-blob library without a weights segment");
  const WeightsInfo& w = m.container->manifest().weights[size_t(m.lib.weights)];
  ByteView blob = m.container->segment(w.segment);
  std::string obstacle = o.copy_weights ? "" : in_place_obstacle(m, w, blob);
  if (!o.copy_weights && obstacle.empty()) return blob_in_place(m, o, w, blob);
  if (!m.api.update_constants_from_blob)
    return m.error(Kind::Unsupported, "does not export AOTInductorModelUpdateConstantsFromBlob");
  // UpdateConstantsFromBlob reads the sum of the constants' sizes from the pointer it is given: never past the
  // segment.
  std::optional<ConstantsBlock> block;
  if (auto b = constants_block(m); b.ok()) {
    if (b->read > blob.size())
      return m.error(Kind::Corrupt, fmt::format("its constants need {:#x} bytes, the weights segment holds {:#x}",
                                                b->read, blob.size()));
    block = *b;
  }
  std::optional<WeightsOffer> offer;
  if (!o.copy_weights && block && m.routed && may_map_weights(m)) offer.emplace(m, blob.data(), block->block);
  if (!o.copy_weights && !offer && !m.copies_routed)
    spdlog::info("{}: weights copied into the model: {}", m.what(), obstacle);
  MPK_TRY(const bool uploaded, with_weight_copies_deferred(m, blob.data(), [&]() -> Status {
            if (m.api.update_constants_from_blob(m.handle, blob.data()) != 0)
              return m.error(Kind::Runtime, "AOTInductorModelUpdateConstantsFromBlob failed (see above)");
            return {};
          }));
  if (uploaded) {
    m.mode = WeightsMode::BlobUploaded;
    return {};
  }
  const bool mapped = offer && offer->finish();
  if (offer && !mapped)
    spdlog::info("{}: weights copied into the model: it did not allocate one block of {:#x} bytes for them", m.what(),
                 block->block);
  m.mode = mapped ? WeightsMode::BlobMapped : WeightsMode::BlobCopied;
  return {};
}

}  // namespace mpspack::runtime::loader
