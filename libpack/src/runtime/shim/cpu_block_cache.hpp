#pragma once
// Freed CPU storages of kMinCachedBytes or more, kept for the next allocation of the same size class.
//
// A model allocates and frees its intermediates in the same sizes at every run. From glibc, a block above its mmap
// threshold (at most 32 MiB) is a fresh mapping each time, and one below it may go back to the kernel when the heap's
// top is trimmed: either way the next run faults its pages in again, 4 KiB at a time, inside whichever kernel writes
// them first, and the free itself pays for the unmap. Kept here, the block comes back with its pages in place.
// MPSPACK_CPU_BLOCK_CACHE=off (docs/CLI.md) leaves every block to the C library.
#include <cstddef>

namespace mpspack::shim::cpu_blocks {

// Blocks smaller than this stay with the C library, whose own bins already reuse them.
inline constexpr std::size_t kMinCachedBytes = std::size_t(64) << 10;
// What the cache may hold at once; a freed block that would take it past this is freed.
inline constexpr std::size_t kMaxCachedBytes = std::size_t(4) << 30;

// The bytes a block for `nbytes` spans: its size class, at most 1/8 above `nbytes` (a multiple of 64 below
// kMinCachedBytes).
std::size_t block_bytes(std::size_t nbytes);

// A 64-byte aligned block of at least `nbytes` (> 0) bytes: a cached one of its size class when there is one. nullptr
// when out of memory.
void* take(std::size_t nbytes);
// Hands back a block `take(nbytes)` returned: kept for reuse, or freed.
void give_back(void* block, std::size_t nbytes);

std::size_t cached_bytes();
// Frees every cached block (the loader calls it when a model goes, so a process that loads a model after another does
// not keep the first one's blocks).
void release_all();

}  // namespace mpspack::shim::cpu_blocks
