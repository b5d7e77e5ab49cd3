// mmap-self weights from the container's pages (self_mapping.hpp).
#include "self_mapping.hpp"

#include "mpspack/fd_io.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

namespace mpspack::runtime::loader {
namespace {

using Kind = Error::Kind;

std::mutex g_mutex;
std::vector<SelfMappedWeights*> g_offers;  // under g_mutex: the libraries' files whose mmap is answered here

Error io_error(const char* what) {
  return make_error(Kind::Io, "mmap-self weights: {}: {}", what, std::strerror(errno));
}

}  // namespace

Result<std::unique_ptr<SelfMappedWeights>> SelfMappedWeights::write(int memfd, std::span<const uint8_t> stored,
                                                                    uint64_t hole, std::span<const uint8_t> weights) {
  if (hole > stored.size()) return make_error(Kind::Corrupt, "mmap-self weights: hole at {:#x} past the file", hole);
  std::unique_ptr<SelfMappedWeights> w(new SelfMappedWeights);
  w->memfd_ = memfd;
  w->hole_ = hole;
  w->weights_ = weights;
  w->tail_ = stored.subspan(hole);
  struct stat st {};
  if (::fstat(memfd, &st) != 0) return io_error("fstat of the library's file");
  w->dev_ = st.st_dev, w->ino_ = st.st_ino;
  if (!pwrite_all(memfd, stored.data(), hole, 0) ||
      !pwrite_all(memfd, w->tail_.data(), w->tail_.size(), hole + weights.size()))
    return io_error("write to memfd");
  return w;
}

SelfMappedWeights::~SelfMappedWeights() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::erase(g_offers, this);
  if (mapping_ && !taken_) ::munmap(mapping_, mapped_);
}

Status SelfMappedWeights::fill_hole() {
  if (filled_) return {};
  if (!pwrite_all(memfd_, weights_.data(), weights_.size(), hole_)) return io_error("write to memfd");
  filled_ = true;
  return {};
}

// Whole pages of the segment mapped from the file over an anonymous reservation; the last part page and the tail
// copied after them, where the library looks for its magic.
Status SelfMappedWeights::offer_mapping(int fd, uint64_t file_offset) {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  if (file_offset % page != 0) return make_error(Kind::Invalid, "mmap-self weights: segment not page-aligned");
  const uint64_t length = weights_.size() + tail_.size(), whole = weights_.size() / page * page;
  mapped_ = (length + page - 1) / page * page;
  // Placed at an address congruent to the segment's file offset modulo 2 MiB, so that the page cache's 2 MiB
  // folios of the segment can be mapped a PMD at a time (format/writer.cpp says why that matters): a reservation
  // 2 MiB larger, trimmed to the congruent start.
  constexpr uint64_t kHuge = uint64_t(2) << 20;
  void* p = ::mmap(nullptr, mapped_ + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return io_error("reserving the mapping");
  auto* reserved = static_cast<uint8_t*>(p);
  mapping_ = reserved + (file_offset - uint64_t(reserved)) % kHuge;  // both page-aligned: so is the result
  if (mapping_ > reserved) ::munmap(reserved, size_t(mapping_ - reserved));
  ::munmap(mapping_ + mapped_, size_t(reserved + mapped_ + kHuge - (mapping_ + mapped_)));
  if (whole > 0 &&
      ::mmap(mapping_, whole, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, off_t(file_offset)) == MAP_FAILED)
    return io_error("mapping the weights segment");
  std::memcpy(mapping_ + whole, weights_.data() + whole, weights_.size() - whole);
  std::memcpy(mapping_ + weights_.size(), tail_.data(), tail_.size());
  std::lock_guard<std::mutex> lock(g_mutex);
  g_offers.push_back(this);
  return {};
}

bool SelfMappedWeights::taken() const {
  std::lock_guard<std::mutex> lock(g_mutex);
  return taken_;
}

// The offered mapping for exactly the library's own request (no address, the weights' offset, their length plus
// the tail's, private), once; null otherwise.
void* SelfMappedWeights::hand_out(void* addr, size_t length, int prot, int flags, off_t offset) {
  const bool asked = addr == nullptr && !(flags & MAP_FIXED) && (flags & MAP_TYPE) == MAP_PRIVATE &&
                     uint64_t(offset) == hole_ && length == weights_.size() + tail_.size();
  if (!asked || !mapping_ || taken_ || ::mprotect(mapping_, mapped_, prot) != 0) return nullptr;
  taken_ = true;
  return mapping_;
}

void* routed_self_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0) {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (SelfMappedWeights* w : g_offers) {
      if (w->dev_ != st.st_dev || w->ino_ != st.st_ino) continue;
      if (void* p = w->hand_out(addr, length, prot, flags, offset)) return p;
      // Any other view of the file must see the weights where torch wrote them.
      if (!w->fill_hole().ok()) return MAP_FAILED;  // errno from the write
    }
  }
  return ::mmap(addr, length, prot, flags, fd, offset);
}

}  // namespace mpspack::runtime::loader
