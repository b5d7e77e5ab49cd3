// Embedded weights go back where the linker put them (the constants region the stored library has zeroed): the
// container's pages mapped over the region, or copied there where they cannot be, or with
// MPSPACK_EMBEDDED_WEIGHTS=memcpy (Tuning::embedded_weights says why mmap).
#include "model_impl.hpp"
#include "runtime/tuning/tuning.hpp"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>

namespace mpspack::runtime::loader {
namespace {

using Kind = Error::Kind;

struct PhdrQuery {
  ElfW(Addr) base = 0;
  uint64_t start = 0, end = 0;
  bool found = false;
  int prot = 0;
};

int find_load(struct dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<PhdrQuery*>(data);
  if (info->dlpi_addr != q->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || q->start < ph.p_vaddr || q->end > ph.p_vaddr + ph.p_memsz) continue;
    q->found = true;
    q->prot = ((ph.p_flags & PF_R) ? PROT_READ : 0) | ((ph.p_flags & PF_W) ? PROT_WRITE : 0) |
              ((ph.p_flags & PF_X) ? PROT_EXEC : 0);
    return 1;
  }
  return 0;
}

void by_memcpy(uint8_t* dst, ByteView weights) { std::memcpy(dst, weights.data(), weights.size()); }

// Whole pages mapped over the region (private, read-only: the model never sees the file change under it unless
// someone rewrites the container in place); the partial first and last pages copied, so the library's own bytes
// around the region stay as they were.
Status by_mmap(const Model::Impl& m, uint8_t* dst, ByteView weights, int fd, uint64_t offset, int prot, uint64_t page) {
  const uint64_t a = align_up(uint64_t(dst), page);
  const uint64_t b = (uint64_t(dst) + weights.size()) / page * page;
  if (b <= a) {
    std::memcpy(dst, weights.data(), weights.size());
    return {};
  }
  std::memcpy(dst, weights.data(), a - uint64_t(dst));
  const uint64_t tail = uint64_t(dst) + weights.size() - b;
  std::memcpy(reinterpret_cast<void*>(b), weights.data() + (b - uint64_t(dst)), tail);
  const off_t at = off_t(offset + (a - uint64_t(dst)));
  if (::mmap(reinterpret_cast<void*>(a), b - a, prot, MAP_PRIVATE | MAP_FIXED, fd, at) == MAP_FAILED)
    return sys_error(m.lib.name, "mmap of the weights segment over the constants region");
  return {};
}

// The mechanism asked for, or memcpy where it cannot apply. Mapping needs the container's file and the segment
// congruent to the region modulo the page size (the writer places it so, docs/FORMAT.md).
EmbeddedWeights usable(EmbeddedWeights how, const uint8_t* dst, int fd, uint64_t offset, uint64_t page) {
  const bool mappable = fd >= 0 && (uint64_t(dst) - offset) % page == 0;
  return mappable ? how : EmbeddedWeights::Memcpy;
}

// The constants region checked against the weights and found in the library's loaded segments; its protection.
Result<int> region_protection(const Model::Impl& m, ByteView weights) {
  const uint64_t start = m.lib.region->start_vaddr, end = m.lib.region->end_vaddr;
  if (end - start != weights.size())
    return m.error(Kind::Corrupt, fmt::format("constants region {:#x}..{:#x} does not match the weights segment "
                                              "({:#x} bytes)",
                                              start, end, weights.size()));
  PhdrQuery q{m.base, start, end};
  ::dl_iterate_phdr(find_load, &q);
  if (!q.found)
    return m.error(Kind::Corrupt, fmt::format("constants region {:#x}..{:#x} is in no loaded segment", start, end));
  if (void* sym = ::dlsym(m.dl, "_binary_constants_bin_start"); sym && sym != reinterpret_cast<void*>(m.base + start))
    return m.error(Kind::Corrupt, "_binary_constants_bin_start is not at base + region.start_vaddr");
  return q.prot;
}

}  // namespace

Status place_embedded(Model::Impl& m) {
  const LibraryInfo& lib = m.lib;
  if (lib.weights < 0) return {};  // no constants
  if (!lib.region) return m.error(Kind::Corrupt, "embedded weights but no constants region recorded");
  ByteView weights = m.container->segment(m.container->manifest().weights[size_t(lib.weights)].segment);
  MPK_TRY(const int prot, region_protection(m, weights));
  if (weights.size() == 0) return {};
  auto* dst = reinterpret_cast<uint8_t*>(m.base + lib.region->start_vaddr);
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t lo = uint64_t(dst) / page * page;
  const uint64_t hi = align_up(uint64_t(dst) + weights.size(), page);
  const uint64_t offset = weights_segment(m).offset;
  const int fd = m.container->file().fd();
  const EmbeddedWeights how = usable(tuning().embedded_weights, dst, fd, offset, page);
  if (::mprotect(reinterpret_cast<void*>(lo), hi - lo, prot | PROT_WRITE) != 0)
    return sys_error(lib.name, "mprotect of the constants region");
  switch (how) {
    case EmbeddedWeights::Memcpy: by_memcpy(dst, weights); break;
    case EmbeddedWeights::Mmap: MPK_CHECK(by_mmap(m, dst, weights, fd, offset, prot, page)); break;
  }
  if (::mprotect(reinterpret_cast<void*>(lo), hi - lo, prot) != 0)
    return sys_error(lib.name, "mprotect back of the constants region");
  m.mode = WeightsMode::EmbeddedCopied;
  return {};
}

}  // namespace mpspack::runtime::loader
