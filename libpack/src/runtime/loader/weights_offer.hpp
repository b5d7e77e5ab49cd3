// The weights block offered to Create or UpdateConstantsFromBlob (large_blocks.hpp, OfferedBlock): the weights
// segment mapped from the container in place of the copy the library would malloc and fill.
#pragma once

#include "model_impl.hpp"

#include <span>

namespace mpspack::runtime::loader {

// Maps the pages of `bytes` (the weights, mapped from the container) into this process now, in one call, rather
// than one fault per 64 KiB in the first run (bench/zero_copy.sh; docs/PERFORMANCE.md, "Weights without a copy").
// The pages are in the page cache (warm) or read on the way. A kernel before 5.14 lacks it: the first run faults.
void populate(std::span<const uint8_t> bytes);
// populate() as MPSPACK_POPULATE_WEIGHTS (Tuning) asks: not at all, now, or on a thread of the model's own (joined
// with the model).
void populate_weights(Model::Impl& m, std::span<const uint8_t> bytes);

// While it lives, the weights segment mapped from the container (private: the model's writes stay its own) is
// offered as the library's block of `size` bytes mirroring `mirror`; finish() says whether the library took it.
class WeightsOffer {
 public:
  WeightsOffer(Model::Impl& m, const void* mirror, uint64_t size);
  ~WeightsOffer() { finish(); }
  WeightsOffer(const WeightsOffer&) = delete;
  WeightsOffer& operator=(const WeightsOffer&) = delete;

  // Ends the offer; true when the library took the block (it is the library's now).
  bool finish();
  // After finish(): bytes the library copied out of `mirror` itself (into a block of its own), not skipped.
  uint64_t copied() const { return copied_; }

 private:
  Model::Impl& m_;
  void* mapping_ = nullptr;
  uint64_t mapped_ = 0;
  bool taken_ = false;
  uint64_t copied_before_ = 0, copied_ = 0;
};

// The block AOTInductor's load_constants mallocs: every non-folded constant's data_size rounded up to 64 bytes.
// Also what it reads from the source (the unrounded sizes), which must lie inside the weights.
struct ConstantsBlock {
  uint64_t block = 0, read = 0;
};

Result<ConstantsBlock> constants_block(const Model::Impl& m);

}  // namespace mpspack::runtime::loader
