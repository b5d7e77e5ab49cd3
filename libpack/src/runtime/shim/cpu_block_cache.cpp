// Freed CPU blocks kept by size class (cpu_block_cache.hpp).
#include "cpu_block_cache.hpp"

#include "runtime/tuning/tuning.hpp"

#include <bit>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace mpspack::shim::cpu_blocks {
namespace {

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::size_t, std::vector<void*>> free_blocks;  // by block_bytes
  std::size_t bytes = 0;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: storages may be freed during static destruction
  return *c;
}

bool caching(std::size_t nbytes) { return nbytes >= kMinCachedBytes && tuning().cpu_block_cache; }

}  // namespace

std::size_t block_bytes(std::size_t nbytes) {
  if (nbytes < kMinCachedBytes) return (nbytes + 63) / 64 * 64;
  const std::size_t step = std::bit_floor(nbytes) / 8;
  return (nbytes + step - 1) / step * step;
}

void* take(std::size_t nbytes) {
  const std::size_t bytes = block_bytes(nbytes);
  if (bytes < nbytes) return nullptr;  // overflowed
  if (caching(nbytes)) {
    Cache& c = cache();
    std::lock_guard lock(c.mutex);
    if (auto it = c.free_blocks.find(bytes); it != c.free_blocks.end() && !it->second.empty()) {
      void* block = it->second.back();
      it->second.pop_back();
      c.bytes -= bytes;
      return block;
    }
  }
  return std::aligned_alloc(64, bytes);
}

void give_back(void* block, std::size_t nbytes) {
  if (block == nullptr) return;
  if (caching(nbytes)) {
    const std::size_t bytes = block_bytes(nbytes);
    Cache& c = cache();
    std::lock_guard lock(c.mutex);
    if (c.bytes + bytes <= kMaxCachedBytes) {
      c.free_blocks[bytes].push_back(block);
      c.bytes += bytes;
      return;
    }
  }
  std::free(block);
}

std::size_t cached_bytes() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.bytes;
}

void release_all() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  for (auto& [bytes, blocks] : c.free_blocks)
    for (void* block : blocks) std::free(block);
  c.free_blocks.clear();
  c.bytes = 0;
}

}  // namespace mpspack::shim::cpu_blocks
