// XXH3 compiled for AVX2, chosen at run time by hash.cpp when the CPU has it. xxhash picks its
// vector code at compile time; the portable build (SSE2) hashes at ~8 GB/s on our machines, the
// AVX2 build at ~34 GB/s, which is what lets `verify` and `build` run at the speed of the page
// cache rather than of the hash. This file is compiled with -mavx2, so it includes nothing but
// xxhash (no inline code from other headers may end up with AVX2 instructions on older CPUs);
// every function here runs only after hash.cpp has checked the CPU. Same hash values as the
// portable code: the vector variant changes speed, never the result.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash_xxh3_variants.hpp"

namespace mpspack::format::xxh3_avx2 {

#include "hash_xxh3_functions.inc"

}  // namespace mpspack::format::xxh3_avx2
