// The library's copies of its weights to the GPU gathered during a load (cuda_weight_copies.hpp).
#include "cuda_weight_copies.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

namespace mpspack::runtime::cuda_copies {
namespace {

struct Block {
  uint8_t* p;
  size_t n;
};

std::mutex g_mutex;
std::atomic<bool> g_open{false};    // read without the lock: outside a window every call goes straight through
const uint8_t* g_mirror = nullptr;  // the rest under g_mutex
uint64_t g_size = 0;
std::vector<Block> g_blocks;         // allocated by the library during the window
std::map<uint8_t*, Piece> g_pieces;  // by destination; no two overlap
bool g_failed = false;               // a copy made early (make_recorded_copies) failed

bool inside(const uint8_t* p, size_t n, const uint8_t* lo, uint64_t len) {
  return p >= lo && uint64_t(p - lo) <= len && n <= len - uint64_t(p - lo);
}

// Whether [d, d + n) overlaps a recorded piece's destination.
bool overlaps_piece(const uint8_t* d, size_t n) {
  auto next = g_pieces.lower_bound(const_cast<uint8_t*>(d));
  if (next != g_pieces.end() && next->first < d + n) return true;
  if (next == g_pieces.begin()) return false;
  const Piece& before = std::prev(next)->second;
  return before.dst + before.len > d;
}

// Makes the recorded copies now (synchronously, as the library asked for them), so that a later copy to the same
// place lands after them.
void make_recorded_copies() {
  for (const auto& [dst, piece] : g_pieces)
    if (cudaMemcpy(dst, g_mirror + piece.src, piece.len, cudaMemcpyHostToDevice) != cudaSuccess) g_failed = true;
  g_pieces.clear();
}

// Records the copy when it is one of the window's; false when it must be made now.
bool gather(void* dst, const void* src, size_t n) {
  std::lock_guard lock(g_mutex);
  if (!g_open.load(std::memory_order_relaxed) || n == 0) return false;
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  if (!inside(s, n, g_mirror, g_size)) return false;
  if (std::none_of(g_blocks.begin(), g_blocks.end(), [&](const Block& b) { return inside(d, n, b.p, b.n); }))
    return false;
  // A second copy to the same place (AOTInductor makes none): the recorded ones first, then this one, as asked.
  if (overlaps_piece(d, n)) {
    make_recorded_copies();
    return false;
  }
  try {
    g_pieces.emplace(d, Piece{d, uint64_t(s - g_mirror), n});
  } catch (const std::bad_alloc&) {
    make_recorded_copies();
    return false;
  }
  return true;
}

cudaError_t routed_malloc(void** p, size_t n) {
  const cudaError_t e = cudaMalloc(p, n);
  if (e == cudaSuccess && g_open.load(std::memory_order_acquire)) {
    std::lock_guard lock(g_mutex);
    try {
      if (g_open.load(std::memory_order_relaxed)) g_blocks.push_back({static_cast<uint8_t*>(*p), n});
    } catch (const std::bad_alloc&) {  // not recorded: copies into it are made as asked
    }
  }
  return e;
}

cudaError_t routed_free(void* p) {
  if (g_open.load(std::memory_order_acquire)) {
    std::lock_guard lock(g_mutex);
    auto b = std::find_if(g_blocks.begin(), g_blocks.end(), [p](const Block& x) { return x.p == p; });
    if (b != g_blocks.end()) {
      std::erase_if(g_pieces, [&](const auto& c) { return inside(c.second.dst, c.second.len, b->p, b->n); });
      g_blocks.erase(b);
    }
  }
  return cudaFree(p);
}

cudaError_t routed_memcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  if (g_open.load(std::memory_order_acquire) && (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDefault) &&
      gather(dst, src, n))
    return cudaSuccess;
  return cudaMemcpy(dst, src, n, kind);
}

}  // namespace

std::vector<ImportRoute> routes() {
  return {{"cudaMalloc", reinterpret_cast<void*>(&routed_malloc)},
          {"cudaFree", reinterpret_cast<void*>(&routed_free)},
          {"cudaMemcpy", reinterpret_cast<void*>(&routed_memcpy)}};
}

void begin(const void* mirror, uint64_t size) {
  std::lock_guard lock(g_mutex);
  g_mirror = static_cast<const uint8_t*>(mirror);
  g_size = size;
  g_blocks.clear();
  g_pieces.clear();
  g_failed = false;
  g_open.store(true, std::memory_order_release);
}

Gathered end() {
  std::lock_guard lock(g_mutex);
  g_open.store(false, std::memory_order_release);
  std::map<uint8_t*, Piece> pieces = std::move(g_pieces);
  g_pieces.clear();
  g_blocks.clear();
  std::vector<Piece> merged;
  for (const auto& [dst, p] : pieces) {
    if (!merged.empty()) {
      Piece& last = merged.back();
      if (last.dst + last.len == p.dst && last.src + last.len == p.src) {
        last.len += p.len;
        continue;
      }
    }
    merged.push_back(p);
  }
  return {std::move(merged), std::exchange(g_failed, false)};
}

}  // namespace mpspack::runtime::cuda_copies
