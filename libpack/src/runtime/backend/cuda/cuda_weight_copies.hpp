// The host-to-device copies of its weights a CUDA model library makes while it loads them, gathered instead of
// made, for the CUDA backend to make with its upload pipeline (Backend::defer_weight_copies).
//
// AOTInductor's CUDA Create (embedded weights) and UpdateConstantsFromBlob (a blob) cudaMalloc one block for all
// constants and copy each one in with a synchronous cudaMemcpy from pageable host memory, far slower than pread into
// pinned buffers on several threads (docs/PERFORMANCE.md, "CUDA weight upload").
// While a window is open, the library's cudaMalloc, cudaFree and cudaMemcpy (its GOT slots, loader/import_slots.hpp)
// reach the functions here: a copy from the window's mirror (the weights as the library reads them) into device
// memory the library allocated during the window is recorded as a piece and reported as done; every other call
// goes on to the CUDA runtime as asked. Between the library's call and the end of the window nothing reads the
// constants (AOTInductor folds constants in its first Run), so the pieces are uploaded when the window ends.
#pragma once

#include "runtime/backend/import_route.hpp"

#include <cstdint>
#include <vector>

namespace mpspack::runtime::cuda_copies {

struct Piece {
  uint8_t* dst;  // device address
  uint64_t src;  // offset in the mirror
  uint64_t len;
};

// The imports to route: cudaMalloc, cudaFree, cudaMemcpy.
std::vector<ImportRoute> routes();
// Opens the window over the mirror [mirror, mirror + size).
void begin(const void* mirror, uint64_t size);
struct Gathered {
  std::vector<Piece> pieces;  // in destination order, adjacent ones merged; none into memory freed meanwhile
  bool failed = false;        // a copy that had to be made during the window failed
};
// Closes the window.
Gathered end();

}  // namespace mpspack::runtime::cuda_copies
