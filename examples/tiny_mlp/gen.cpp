// Build-time generator for the tiny MLP: writes the constants blob (the bytes the library embeds
// between _binary_constants_bin_start and _end), the example input and the expected output,
// computed in double precision by plain loops and stored as f32 little-endian.
//   tiny_mlp_gen <constants.bin> <input0.bin> <expected0.bin>
#include "spec.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

using namespace tiny_mlp;

namespace {

void put_f32(std::vector<uint8_t>& out, uint64_t at, float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  for (int b = 0; b < 4; ++b) out[at + b] = uint8_t(u >> (8 * b));
}

bool write_file(const char* path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path, "wb");
  if (!f) {
    std::fprintf(stderr, "tiny_mlp_gen: cannot create %s\n", path);
    return false;
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) std::fprintf(stderr, "tiny_mlp_gen: cannot write %s\n", path);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: tiny_mlp_gen <constants.bin> <input0.bin> <expected0.bin>\n");
    return 2;
  }
  // Constants: in order, each zero-padded to 64 bytes.
  std::vector<uint8_t> blob(kBlobSize, 0);
  std::vector<std::vector<float>> w(kNumConstants);
  for (size_t c = 0; c < kNumConstants; ++c) {
    for (int64_t i = 0; i < numel(kConstants[c]); ++i) {
      w[c].push_back(weight_value(kConstants[c], i));
      put_f32(blob, blob_offset(c) + uint64_t(i) * 4, w[c].back());
    }
  }
  std::vector<float> x;
  for (int64_t i = 0; i < kBatch * kIn; ++i) x.push_back(input_value(i));

  // y = fc2(relu(fc1(x))) in double, from the f32 values the library holds.
  const auto &w1 = w[0], &b1 = w[1], &w2 = w[2], &b2 = w[3];
  std::vector<uint8_t> input(x.size() * 4), expected(size_t(kBatch * kOut) * 4);
  for (size_t i = 0; i < x.size(); ++i) put_f32(input, i * 4, x[i]);
  for (int64_t n = 0; n < kBatch; ++n) {
    double h[kHidden];
    for (int64_t j = 0; j < kHidden; ++j) {
      double acc = b1[j];
      for (int64_t k = 0; k < kIn; ++k) acc += double(x[n * kIn + k]) * double(w1[j * kIn + k]);
      h[j] = acc > 0 ? acc : 0;
    }
    for (int64_t o = 0; o < kOut; ++o) {
      double acc = b2[o];
      for (int64_t j = 0; j < kHidden; ++j) acc += h[j] * double(w2[o * kHidden + j]);
      put_f32(expected, uint64_t(n * kOut + o) * 4, float(acc));
    }
  }
  return write_file(argv[1], blob) && write_file(argv[2], input) && write_file(argv[3], expected) ? 0 : 1;
}
