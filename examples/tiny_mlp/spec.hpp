// The tiny MLP's shape and weights, shared by the model library and its build-time generator.
// input [4,16] f32 -> Linear(16,32) -> ReLU -> Linear(32,8) -> output [4,8] f32.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace tiny_mlp {

constexpr int64_t kBatch = 4, kIn = 16, kHidden = 32, kOut = 8;
constexpr uint64_t kAlign = 64;  // AOTInductor pads every CPU constant to 64 bytes

struct Constant {
  const char* name;  // as AOTInductor names it (dots become underscores)
  const char* fqn;   // the state-dict key
  int64_t ndim;
  int64_t sizes[2];
  int64_t strides[2];
  double seed;
};

// In blob order. Each constant occupies padded_bytes(c) bytes of the blob.
constexpr Constant kConstants[] = {
    {"fc1_weight", "fc1.weight", 2, {kHidden, kIn}, {kIn, 1}, 1.0},
    {"fc1_bias", "fc1.bias", 1, {kHidden, 0}, {1, 0}, 2.0},
    {"fc2_weight", "fc2.weight", 2, {kOut, kHidden}, {kHidden, 1}, 3.0},
    {"fc2_bias", "fc2.bias", 1, {kOut, 0}, {1, 0}, 4.0},
};
constexpr size_t kNumConstants = sizeof(kConstants) / sizeof(kConstants[0]);

constexpr int64_t numel(const Constant& c) {
  int64_t n = 1;
  for (int64_t d = 0; d < c.ndim; ++d) n *= c.sizes[d];
  return n;
}
constexpr uint64_t padded_bytes(const Constant& c) { return (uint64_t(numel(c)) * 4 + kAlign - 1) / kAlign * kAlign; }
constexpr uint64_t blob_offset(size_t index) {
  uint64_t off = 0;
  for (size_t i = 0; i < index; ++i) off += padded_bytes(kConstants[i]);
  return off;
}
constexpr uint64_t kBlobSize = blob_offset(kNumConstants);

// Element i of a constant: deterministic, small, of both signs.
inline float weight_value(const Constant& c, int64_t i) {
  return static_cast<float>(std::sin(0.37 * double(i) + c.seed) * 0.1);
}
// Element i of the example input [4,16].
inline float input_value(int64_t i) { return static_cast<float>(std::cos(0.23 * double(i) + 0.5)); }

}  // namespace tiny_mlp
