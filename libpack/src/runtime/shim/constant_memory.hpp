// The memory of loaded models' constants that no run writes: parameters and tensor constants, registered by the
// loader once Create has placed them and withdrawn before that memory goes away. A product whose B lies there
// may keep B in another layout across calls (onednn_gemm.cpp packs it once); a buffer (a KV cache) is never
// registered, being written by the model's own runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mpspack::shim {

struct ConstantRange {
  const void* data = nullptr;
  std::size_t bytes = 0;
};

// Registers `ranges` for `owner` (the model), replacing any it had. Thread-safe, as are the two below.
void add_constant_ranges(const void* owner, std::vector<ConstantRange> ranges);

// Withdraws `owner`'s ranges, and drops what was derived from their bytes (oneDNN's packed copies): the memory
// may hold other data from here on.
void remove_constant_ranges(const void* owner);

// Whether [p, p + bytes) lies inside one registered range.
bool is_constant_memory(const void* p, std::size_t bytes);

}  // namespace mpspack::shim
