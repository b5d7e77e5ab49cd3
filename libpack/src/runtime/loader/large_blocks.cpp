// Large blocks for the model library, faulted in by several threads, and large copies on several threads; its
// GOT slots for malloc, free, realloc, memcpy and __memcpy_chk pointed at them (large_blocks.hpp says why).
#include "large_blocks.hpp"

#include "import_slots.hpp"
#include "runtime/shim/parallel.hpp"

#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

extern "C" void* __memcpy_chk(void* dst, const void* src, size_t n, size_t dst_size);  // glibc, GLIBC_2.3.4

namespace mpspack::runtime {
namespace {

struct Block {
  void* p;
  size_t n;
  void* mapping;  // where the mapping holding p starts (p, but for an offered block)
};

std::mutex g_mutex;
std::vector<Block> g_blocks;      // the large blocks handed out, under g_mutex
std::atomic<size_t> g_live{0};    // g_blocks.size(), read without the lock: free() of a small block stays lock-free
std::atomic<size_t> g_copies{0};  // large copies made
std::atomic<size_t> g_not_copied{0};
std::atomic<size_t> g_copied_from_mirror{0};

// The offer (offer_block): pending until malloc takes it, then the block it became, until withdraw_offer().
OfferedBlock g_offer;                          // under g_mutex
std::atomic<bool> g_offered{false};            // an offer is pending: malloc looks under the lock only then
std::atomic<uint8_t*> g_taken_block{nullptr};  // malloc took it (not null): copies into it are looked at
std::atomic<const uint8_t*> g_taken_mirror{nullptr};
std::atomic<size_t> g_taken_size{0};
// The offer's mirror from offer_block() to withdraw_offer(), taken or not: copies out of it are counted.
std::atomic<const uint8_t*> g_mirror_lo{nullptr}, g_mirror_hi{nullptr};

size_t page_size() {
  static const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  return page;
}

// Runs part(at, len) over [0, n) cut into up to min(kLargeBlockThreads, cores) parts on 2 MiB boundaries (no two
// threads share a huge page), one part on this thread, and returns when all are done. Threads of its own, not
// shim::run_parts: this runs inside the library's malloc and memcpy, which its OpenMP loops (the team run_parts
// uses) may call, and wants kLargeBlockThreads threads, not one per core.
template <class Part>
void on_threads(size_t n, Part part) {
  const size_t huge = size_t(2) << 20;
  const unsigned threads = std::min(kLargeBlockThreads, shim::usable_cores());
  const size_t len = std::max(huge, (n / threads + huge - 1) / huge * huge);
  std::vector<std::thread> helpers;
  for (size_t at = len; at < n; at += len) {
    try {
      helpers.emplace_back(part, at, std::min(len, n - at));
    } catch (const std::system_error&) {  // no thread to be had: this one does that part
      part(at, std::min(len, n - at));
    }
  }
  part(0, std::min(len, n));
  for (std::thread& t : helpers) t.join();
}

// Faults [p, p + n) in for writing. MADV_POPULATE_WRITE does it without a trap per page; where the kernel lacks it
// (before 5.14), one write per page does it the slow way, still on every thread.
void fault_in(uint8_t* p, size_t n) {
  on_threads(n, [p](size_t at, size_t len) {
    if (::madvise(p + at, len, MADV_POPULATE_WRITE) == 0) return;
    for (size_t i = 0; i < len; i += page_size()) p[at + i] = 0;
  });
}

// The block at p, or {nullptr, 0} when p is not one of them; taken out of the list when `take`.
Block find_block(void* p, bool take) {
  if (!p || g_live.load(std::memory_order_acquire) == 0) return {nullptr, 0, nullptr};
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = std::find_if(g_blocks.begin(), g_blocks.end(), [p](const Block& b) { return b.p == p; });
  if (it == g_blocks.end()) return {nullptr, 0, nullptr};
  Block b = *it;
  if (take) {
    g_blocks.erase(it);
    g_live.store(g_blocks.size(), std::memory_order_release);
  }
  return b;
}

}  // namespace

void offer_block(const OfferedBlock& offer) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_offer = offer;
  g_taken_block.store(nullptr, std::memory_order_release);
  const auto* mirror = static_cast<const uint8_t*>(offer.mirror);
  g_mirror_lo.store(mirror, std::memory_order_release);
  g_mirror_hi.store(mirror + offer.size, std::memory_order_release);
  g_offered.store(true, std::memory_order_release);
}

bool withdraw_offer() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_offered.store(false, std::memory_order_release);
  g_mirror_lo.store(nullptr, std::memory_order_release);
  g_mirror_hi.store(nullptr, std::memory_order_release);
  g_offer = {};
  return g_taken_block.exchange(nullptr, std::memory_order_acq_rel) != nullptr;
}

size_t routed_bytes_not_copied() { return g_not_copied.load(std::memory_order_relaxed); }
size_t routed_bytes_copied_from_mirror() { return g_copied_from_mirror.load(std::memory_order_relaxed); }

namespace {

// The offered block, when it is pending and `n` is its size: from here on the library's.
void* take_offer(size_t n) {
  if (!g_offered.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_offered.load(std::memory_order_relaxed) || n != g_offer.size) return nullptr;
  try {
    g_blocks.push_back({g_offer.block, g_offer.mapped, g_offer.mapping});
  } catch (const std::bad_alloc&) {
    return nullptr;  // a malloc of its own instead: the copies fill it
  }
  g_live.store(g_blocks.size(), std::memory_order_release);
  g_offered.store(false, std::memory_order_release);
  g_taken_mirror.store(static_cast<const uint8_t*>(g_offer.mirror), std::memory_order_release);
  g_taken_size.store(g_offer.size, std::memory_order_release);
  g_taken_block.store(static_cast<uint8_t*>(g_offer.block), std::memory_order_release);
  return g_offer.block;
}

// Whether copying [src, src + n) to dst would write what the taken block already holds there.
bool already_there(const void* dst, const void* src, size_t n) {
  const uint8_t* block = g_taken_block.load(std::memory_order_acquire);
  if (!block) return false;
  const auto* d = static_cast<const uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  const uint8_t* mirror = g_taken_mirror.load(std::memory_order_acquire);
  const size_t size = g_taken_size.load(std::memory_order_acquire);
  if (d < block || s < mirror) return false;
  const size_t at = size_t(d - block);
  return size_t(s - mirror) == at && at <= size && n <= size - at;
}

// Counts a copy that reads the offered mirror (g_copied_from_mirror).
void note_copy_from_mirror(const void* src, size_t n) {
  const uint8_t* lo = g_mirror_lo.load(std::memory_order_acquire);
  const auto* s = static_cast<const uint8_t*>(src);
  if (lo && s >= lo && s < g_mirror_hi.load(std::memory_order_acquire))
    g_copied_from_mirror.fetch_add(n, std::memory_order_relaxed);
}

}  // namespace

void* routed_malloc(size_t n) {
  if (void* p = take_offer(n)) return p;
  if (n < kLargeBlock) return std::malloc(n);
  const size_t len = (n + page_size() - 1) / page_size() * page_size();
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    errno = ENOMEM;
    return nullptr;
  }
  fault_in(static_cast<uint8_t*>(p), len);
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_blocks.push_back({p, len, p});
    g_live.store(g_blocks.size(), std::memory_order_release);
  } catch (const std::bad_alloc&) {
    ::munmap(p, len);
    errno = ENOMEM;
    return nullptr;
  }
  return p;
}

void routed_free(void* p) {
  if (!p) return;
  if (Block b = find_block(p, /*take=*/true); b.p) {
    ::munmap(b.mapping, b.n);
    return;
  }
  std::free(p);
}

void* routed_realloc(void* p, size_t n) {
  const Block old = find_block(p, /*take=*/false);
  if (!old.p) return std::realloc(p, n);  // the C library's block (or none): it stays the C library's
  if (n == 0) {                           // as glibc: realloc(p, 0) frees p
    routed_free(p);
    return nullptr;
  }
  void* q = routed_malloc(n);
  if (!q) return nullptr;  // p is left as it was
  std::memcpy(q, p, std::min(n, old.n - size_t(static_cast<uint8_t*>(old.p) - static_cast<uint8_t*>(old.mapping))));
  routed_free(p);
  return q;
}

void* routed_memcpy(void* dst, const void* src, size_t n) {
  if (already_there(dst, src, n)) {
    g_not_copied.fetch_add(n, std::memory_order_relaxed);
    return dst;
  }
  note_copy_from_mirror(src, n);
  if (n < kLargeBlock) return std::memcpy(dst, src, n);
  auto* d = static_cast<uint8_t*>(dst);
  auto* s = static_cast<const uint8_t*>(src);
  on_threads(n, [d, s](size_t at, size_t len) { std::memcpy(d + at, s + at, len); });
  g_copies.fetch_add(1, std::memory_order_relaxed);
  return dst;
}

// The fortified memcpy (_FORTIFY_SOURCE, the default of Ubuntu's compilers) where the compiler knows the
// destination's size: the same, after its check. A copy that would overflow goes to the C library's, which
// reports it and aborts.
void* routed_memcpy_chk(void* dst, const void* src, size_t n, size_t dst_size) {
  if (n > dst_size) return __memcpy_chk(dst, src, n, dst_size);
  return routed_memcpy(dst, src, n);
}

size_t routed_blocks_live() { return g_live.load(std::memory_order_acquire); }
size_t routed_copies_made() { return g_copies.load(std::memory_order_relaxed); }

bool route_large_blocks(const elf::ElfFile& lib, uintptr_t base, const char* what) {
  // free and realloc before malloc: until malloc's slot is written no block of ours exists to reach them.
  const ImportRoute routes[] = {{"free", reinterpret_cast<void*>(&routed_free), true},
                                {"realloc", reinterpret_cast<void*>(&routed_realloc), true},
                                {"malloc", reinterpret_cast<void*>(&routed_malloc)},
                                {"memcpy", reinterpret_cast<void*>(&routed_memcpy)},
                                {"__memcpy_chk", reinterpret_cast<void*>(&routed_memcpy_chk)}};
  const std::string_view refused[] = {"reallocarray", "malloc_usable_size"};
  if (std::string why = route_imports(lib, base, routes, refused, "malloc"); !why.empty()) {
    spdlog::debug("{}: large allocations left to the C library: {}", what, why);
    return false;
  }
  spdlog::debug("{}: blocks of {} MiB or more it mallocs are faulted in up front, and copies that large made, "
                "on {} threads",
                what, kLargeBlock >> 20, std::min(kLargeBlockThreads, shim::usable_cores()));
  return true;
}

}  // namespace mpspack::runtime
