#include "weights_offer.hpp"

#include "large_blocks.hpp"
#include "runtime/tuning/tuning.hpp"

#include <spdlog/spdlog.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14
#endif

#include <cerrno>

namespace mpspack::runtime::loader {

using Kind = Error::Kind;

void populate(std::span<const uint8_t> bytes) {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t lo = uint64_t(bytes.data()) / page * page;
  ::madvise(reinterpret_cast<void*>(lo), uint64_t(bytes.data()) + bytes.size() - lo, MADV_POPULATE_READ);
}

void populate_weights(Model::Impl& m, std::span<const uint8_t> bytes) {
  const PopulateWeights when = tuning().populate_weights;
  if (when == PopulateWeights::Off) return;
  if (when == PopulateWeights::AtLoad) return populate(bytes);
  if (m.populating.joinable()) m.populating.join();
  m.populating = std::thread([bytes] { populate(bytes); });
}

WeightsOffer::WeightsOffer(Model::Impl& m, const void* mirror, uint64_t size) : m_(m) {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t offset = weights_segment(m).offset, skip = offset % page;  // an embedded segment is placed
  mapped_ = align_up(skip + size, page);                                    // congruent to its region
  void* p =
      ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE, m.container->file().fd(), off_t(offset - skip));
  if (p == MAP_FAILED) {
    spdlog::debug("{}: weights not mapped for the model ({}): copied", m.what(), std::strerror(errno));
    return;
  }
  mapping_ = p;
  copied_before_ = routed_bytes_copied_from_mirror();
  offer_block({static_cast<uint8_t*>(p) + skip, mirror, size, mapping_, mapped_});
}

bool WeightsOffer::finish() {
  if (!mapping_) return taken_;
  taken_ = withdraw_offer();
  copied_ = routed_bytes_copied_from_mirror() - copied_before_;
  if (!taken_) ::munmap(mapping_, mapped_);
  if (taken_) populate_weights(m_, {static_cast<const uint8_t*>(mapping_), mapped_});
  mapping_ = nullptr;
  return taken_;
}

Result<ConstantsBlock> constants_block(const Model::Impl& m) {
  if (!m.api.num_constants || !m.api.constant_data_size || !m.api.constant_from_folded)
    return m.error(Kind::Unsupported, "lacks the constant-info functions");
  size_t n = 0;
  if (m.api.num_constants(m.handle, &n) != 0) return m.error(Kind::Runtime, "GetNumConstants failed");
  ConstantsBlock b;
  for (size_t i = 0; i < n; ++i) {
    size_t size = 0;
    bool folded = false;
    if (m.api.constant_data_size(m.handle, i, &size) != 0 || m.api.constant_from_folded(m.handle, i, &folded) != 0)
      return m.error(Kind::Runtime, fmt::format("the model did not describe constant {}", i));
    if (folded) continue;
    if (size > (uint64_t(1) << 60)) return m.error(Kind::Corrupt, fmt::format("constant {} claims {} bytes", i, size));
    b.read += size;
    b.block += align_up(uint64_t(size), 64);
  }
  return b;
}

}  // namespace mpspack::runtime::loader
