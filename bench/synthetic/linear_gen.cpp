// Writes the SYNTHETIC Linear model's data (bench/synthetic/linear.cpp): constants.bin (W [OUT, IN] then b [OUT],
// each padded to 64 bytes, AOTInductor's blob layout), input0.bin (x [1, IN]) and expected0.bin (y [1, OUT], summed
// in double). Deterministic: the same bytes on every machine.
//   linear_gen IN OUT constants.bin input0.bin expected0.bin
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
float value(uint64_t i, uint64_t salt) {  // in [-0.5, 0.5): a multiplicative hash, no state
  const uint64_t h = (i + salt) * 0x9E3779B97F4A7C15ull;
  return float((h >> 40) & 0xffff) / 65536.0f - 0.5f;
}
bool write(FILE* f, const void* p, size_t n) { return std::fwrite(p, 1, n, f) == n; }
}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) return std::fprintf(stderr, "usage: linear_gen IN OUT constants.bin input0.bin expected0.bin\n"), 2;
  const uint64_t in = std::strtoull(argv[1], nullptr, 10), out = std::strtoull(argv[2], nullptr, 10);
  std::vector<float> x(in), row(in);
  for (uint64_t i = 0; i < in; ++i) x[i] = value(i, 1);
  std::vector<double> y(out);
  FILE* c = std::fopen(argv[3], "wb");
  if (!c) return 1;
  for (uint64_t o = 0; o < out; ++o) {
    double s = 0;
    for (uint64_t i = 0; i < in; ++i) {
      row[i] = value(o * in + i, 2) / 16;
      s += double(row[i]) * x[i];
    }
    y[o] = s;
    if (!write(c, row.data(), in * 4)) return 1;
  }
  const uint64_t w_bytes = out * in * 4, pad_w = (64 - w_bytes % 64) % 64;
  std::vector<uint8_t> zeros(64, 0);
  if (!write(c, zeros.data(), pad_w)) return 1;
  std::vector<float> b(out), yf(out);
  for (uint64_t o = 0; o < out; ++o) {
    b[o] = value(o, 3);
    yf[o] = float(y[o] + b[o]);
  }
  const uint64_t pad_b = (64 - out * 4 % 64) % 64;
  if (!write(c, b.data(), out * 4) || !write(c, zeros.data(), pad_b) || std::fclose(c) != 0) return 1;
  FILE* fx = std::fopen(argv[4], "wb");
  FILE* fy = std::fopen(argv[5], "wb");
  if (!fx || !fy || !write(fx, x.data(), in * 4) || !write(fy, yf.data(), out * 4)) return 1;
  return std::fclose(fx) == 0 && std::fclose(fy) == 0 ? 0 : 1;
}
