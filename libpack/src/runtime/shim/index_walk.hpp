// Walking every index of a shape, for the ops that address elements through strides (sorting, indexing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mpspack::shim {

// Calls f(idx) for every multi-index of `sizes` in row-major order: once with {} for a 0-d shape, never for a
// shape with a size-0 dim. `idx` is only valid during the call.
template <class F>
void for_each_index(std::span<const int64_t> sizes, F&& f) {
  for (int64_t s : sizes)
    if (s == 0) return;
  std::vector<int64_t> idx(sizes.size(), 0);
  while (true) {
    f(std::span<const int64_t>(idx));
    std::size_t d = sizes.size();
    for (; d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
    if (d == static_cast<std::size_t>(-1)) return;
  }
}

// Element offset of `idx` with `strides` (the same length).
inline int64_t offset_of(std::span<const int64_t> idx, std::span<const int64_t> strides) {
  int64_t off = 0;
  for (std::size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
  return off;
}

}  // namespace mpspack::shim
