// The XXH3 entry points hash.cpp dispatches between: the portable build (in hash.cpp) and, on
// x86-64, one compiled for AVX2 (hash_xxh3_avx2.cpp). The state type is the same in both: only the
// inner loops differ.
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace mpspack::format {

struct Xxh3Functions {
  uint64_t (*oneshot)(const void* data, size_t size);
  void (*reset)(XXH3_state_t* s);
  void (*update)(XXH3_state_t* s, const void* data, size_t size);
  uint64_t (*digest)(const XXH3_state_t* s);
};

#ifdef MPSPACK_XXH3_AVX2
namespace xxh3_avx2 {
uint64_t oneshot(const void* data, size_t size);
void reset(XXH3_state_t* s);
void update(XXH3_state_t* s, const void* data, size_t size);
uint64_t digest(const XXH3_state_t* s);
}  // namespace xxh3_avx2
#endif

}  // namespace mpspack::format
