// The TensorOptions arguments of torch's factory functions (rand, randint, randperm, hann_window, ...) as the C
// shim passes them: `int32_t*` dtype/layout/device/pin_memory, each null for torch's default.
#pragma once

#include "tensor.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mpspack::shim {

// The dtype a factory function makes: *dtype, or `fallback` (torch's default for that function) when null.
// Fails, naming `op`, for a layout other than strided, a device other than the CPU or a dtype the shim does not
// know. pin_memory is not looked at: pinned host memory only changes how a CUDA copy of the result is made, not
// its values, and the CPU shim has no CUDA to pin for.
inline int32_t factory_dtype(const char* op, const int32_t* dtype, int32_t fallback, const int32_t* layout,
                             const int32_t* device) {
  if (layout != nullptr && *layout != kLayoutStrided)
    fail(std::string(op) + ": layout code " + std::to_string(*layout) + " is not supported (only strided, 0)");
  if (device != nullptr && *device != kCpu)
    fail(std::string(op) + ": device type " + std::to_string(*device) + " is not the CPU (0)");
  const int32_t dt = dtype != nullptr ? *dtype : fallback;
  if (find_dtype(dt) == nullptr) fail(std::string(op) + ": dtype code " + std::to_string(dt) + " is not supported");
  return dt;
}

// The `size` list of a factory function, as torch refuses it: a negative size fails with torch's words.
inline std::vector<int64_t> factory_sizes(const char* op, const int64_t* size, int64_t size_len) {
  if (size_len < 0 || (size_len > 0 && size == nullptr)) fail(std::string(op) + ": size is null");
  std::vector<int64_t> sizes(size, size + size_len);
  for (int64_t s : sizes) {
    if (s >= 0) continue;
    std::string list;
    for (int64_t x : sizes) list += (list.empty() ? "" : ", ") + std::to_string(x);
    fail(std::string(op) + ": Trying to create tensor with negative dimension " + std::to_string(s) + ": [" + list +
         "]");
  }
  return sizes;
}

}  // namespace mpspack::shim
