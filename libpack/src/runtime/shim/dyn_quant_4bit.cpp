// aten::_dyn_quant_pack_4bit_weight and _dyn_quant_matmul_4bit as torch's reference CPU kernels compute them (the
// path torch takes on every CPU but Arm ones with KleidiAI; KleidiAI's packed layout is Arm-only and not read here).
//
// Packing is a concatenation: the uint8 weights (two 4-bit values a byte, [N, K/2], low nibble first, each value
// stored + 8), the scales ([N, K/block_size]) and the bias ([N], optional), all as float32, one 1-D tensor.
//
// The product quantizes each input row to int8 with its own scale and zero point (asymmetric, over the row's
// range and 0), sums int8 x int4 products in int32 per block, and scales back in float: channel-wise (block_size
// == K) or group-wise (block_size a multiple of 32 dividing K) for float32 inputs, channel-wise only for bfloat16,
// whose output is truncated to bfloat16 (not rounded). The bias, when packed, is added last. Every float step is
// written in float, in torch's order, so results agree to the last bit where the compiler keeps float arithmetic
// (no fast-math here).
#include "aoti_shim.h"
#include "linalg_util.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::linalg;

namespace {

void check_block_size(int64_t block_size, int64_t K, const char* op) {
  if (!(block_size == K || (block_size > 0 && block_size % 32 == 0 && K % block_size == 0)))
    fail(std::string(op) + ": Group size should be multiple of 32, in_features [" + std::to_string(K) + "]. Provided " +
         std::to_string(block_size));
}

TensorPtr pack(const Tensor& w, const Tensor& scales, const Tensor* bias, int64_t block_size, int64_t K) {
  require_cpu(w, "_dyn_quant_pack_4bit_weight");
  require_cpu(scales, "_dyn_quant_pack_4bit_weight");
  if (w.dtype != static_cast<int32_t>(DType::u8)) fail("_dyn_quant_pack_4bit_weight_cpu : expect weight to be kByte.");
  check_block_size(block_size, K, "_dyn_quant_pack_4bit_weight_cpu");
  if (bias) require_cpu(*bias, "_dyn_quant_pack_4bit_weight");
  const int64_t n = w.numel() + scales.numel() + (bias ? bias->numel() : 0);
  const int64_t sizes[1] = {n};
  TensorPtr out(new_contiguous(sizes, static_cast<int32_t>(DType::f32)));
  auto* dst = reinterpret_cast<float*>(out->data());
  for (const Tensor* t : {&w, &scales, bias}) {
    if (t == nullptr) continue;
    TensorPtr c = contiguous_as(*t, static_cast<int32_t>(DType::f32));
    std::memcpy(dst, c->data(), std::size_t(t->numel()) * sizeof(float));
    dst += t->numel();
  }
  return out;
}

// One input row quantized to int8: q[k] = clamp(round(x[k] * scale) + zero_point), and what undoes it.
struct QuantRow {
  std::vector<int8_t> q;
  float recip_scale;
  int32_t offset;  // -zero_point
};

QuantRow quantize_row(const float* x, int64_t K) {
  float mx = -FLT_MAX, mn = FLT_MAX;
  for (int64_t k = 0; k < K; ++k) {
    mx = std::max(x[k], mx);
    mn = std::min(x[k], mn);
  }
  const float qmin = float(INT8_MIN), qmax = float(INT8_MAX);
  const float rmin = std::min(0.0f, mn), rmax = std::max(0.0f, mx);
  const float scale = rmin == rmax ? 1.f : (qmax - qmin) / (rmax - rmin);
  const float recip = scale != 0.0f ? 1.0f / scale : 0.0f;
  const float dmin = rmin * scale, dmax = rmax * scale;
  float zp = (qmin + dmin) + (qmax + dmax) > 0 ? qmin - dmin : qmax - dmax;
  zp = std::min(std::max(zp, qmin), qmax);
  const auto zpi = static_cast<int32_t>(std::lrint(zp));
  QuantRow r{std::vector<int8_t>(static_cast<std::size_t>(K)), recip, -zpi};
  for (int64_t k = 0; k < K; ++k) {
    int32_t v = static_cast<int32_t>(std::round(x[k] * scale)) + zpi;
    r.q[std::size_t(k)] = static_cast<int8_t>(std::clamp(v, int32_t(INT8_MIN), int32_t(INT8_MAX)));
  }
  return r;
}

int32_t nibble(const uint8_t* row, int64_t k) {
  const uint8_t b = row[k / 2];
  return (k % 2 == 0 ? int32_t(b & 0x0F) : int32_t(b >> 4)) - 8;
}

// sum over k in [k0, k1) of (q[k] + offset) * w[k], in int32 as torch sums.
int32_t block_dot(const QuantRow& r, const uint8_t* wrow, int64_t k0, int64_t k1) {
  int32_t acc = 0;
  for (int64_t k = k0; k < k1; ++k) {
    const int32_t rv = nibble(wrow, k);
    acc += int32_t(r.q[std::size_t(k)]) * rv;
    acc += r.offset * rv;
  }
  return acc;
}

struct Packed {
  std::vector<uint8_t> weights;  // [N, ceil(K/2)]
  const float* scales;
  const float* bias;  // nullptr when the packing has none
};

// Each input row quantized once, then summed against every weight row: channel-wise or group-wise.
void matmul_rows(const Tensor& inp, const Packed& p, int64_t N, int64_t K, int64_t bl, Tensor& out) {
  const bool bf16 = inp.dtype == static_cast<int32_t>(DType::bf16);
  TensorPtr xf = contiguous_as(inp, static_cast<int32_t>(DType::f32));  // bfloat16 widens exactly
  const auto* x = reinterpret_cast<const float*>(xf->data());
  const int64_t M = inp.sizes[0], stride = (K + 1) / 2, blocks = K / bl;
  for (int64_t m = 0; m < M; ++m) {
    const QuantRow r = quantize_row(x + m * K, K);
    for (int64_t n = 0; n < N; ++n) {
      const uint8_t* wrow = p.weights.data() + n * stride;
      float acc;
      if (bl == K) {
        acc = float(block_dot(r, wrow, 0, K)) * p.scales[n] * r.recip_scale;
      } else {
        acc = 0.0f;
        for (int64_t b = 0; b < blocks; ++b)
          acc += float(block_dot(r, wrow, b * bl, (b + 1) * bl)) * p.scales[b + n * blocks];
        acc = acc * r.recip_scale;
      }
      if (p.bias) acc += p.bias[n];
      if (bf16) {
        acc = std::clamp(acc, -3.38953139e+38f, 3.38953139e+38f);
        uint32_t bits;
        std::memcpy(&bits, &acc, sizeof bits);
        reinterpret_cast<uint16_t*>(out.data())[m * N + n] = static_cast<uint16_t>(bits >> 16);
      } else {
        reinterpret_cast<float*>(out.data())[m * N + n] = std::clamp(acc, -FLT_MAX, FLT_MAX);
      }
    }
  }
}

TensorPtr matmul(const Tensor& inp, const Tensor& packed, int64_t bl, int64_t K, int64_t N) {
  static const char* op = "_dyn_quant_matmul_4bit_cpu";
  require_cpu(inp, op);
  require_cpu(packed, op);
  const bool f32 = inp.dtype == static_cast<int32_t>(DType::f32), bf16 = inp.dtype == static_cast<int32_t>(DType::bf16);
  if (!(f32 || (bf16 && bl == K))) fail(std::string(op) + " : expect input to be float32 or bfloat16 tensor.");
  check_block_size(bl, K, op);
  if (inp.dim() != 2 || inp.sizes[1] != K)
    fail(std::string(op) + ": expects input [M, in_features=" + std::to_string(K) + "], got " + shape_str(inp.sizes));
  if (N < 0 || K % 2 != 0) fail(std::string(op) + ": in_features must be even and out_features non-negative");
  const int64_t wsize = N * K / 2, nscales = N * (K / bl);
  if (packed.dim() != 1 || packed.numel() < wsize + nscales)
    fail(std::string(op) + ": Invalid packed weight tensor size: " + std::to_string(packed.numel()) +
         " elements, expected at least " + std::to_string(wsize + nscales) + " (weights and scales)");
  TensorPtr pf = contiguous_as(packed, static_cast<int32_t>(DType::f32));
  const auto* pv = reinterpret_cast<const float*>(pf->data());
  Packed p{std::vector<uint8_t>(static_cast<std::size_t>(wsize)), pv + wsize, nullptr};
  for (int64_t i = 0; i < wsize; ++i) p.weights[std::size_t(i)] = static_cast<uint8_t>(pv[i]);
  if (packed.numel() > wsize + nscales) {
    if (packed.numel() - wsize - nscales != N)
      fail(std::string(op) + ": Expected bias length to match output dimension");
    p.bias = pv + wsize + nscales;
  }
  const int64_t sizes[2] = {inp.sizes[0], N};
  TensorPtr out(new_contiguous(sizes, inp.dtype));
  if (out->numel() > 0) matmul_rows(inp, p, N, K, bl, *out);
  return out;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__dyn_quant_pack_4bit_weight(AtenTensorHandle weights, AtenTensorHandle scales_zeros,
                                                          AtenTensorHandle* bias, int64_t block_size,
                                                          int64_t in_features, int64_t out_features,
                                                          AtenTensorHandle* ret0) {
  (void)out_features;  // the packing is a concatenation; N is implied by the weights
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("_dyn_quant_pack_4bit_weight: ret0 is null");
    const Tensor* b = bias && *bias ? &deref(*bias, "bias") : nullptr;
    *ret0 = pack(deref(weights, "weights"), deref(scales_zeros, "scales_zeros"), b, block_size, in_features).release();
  });
}

AOTITorchError aoti_torch_cpu__dyn_quant_matmul_4bit(AtenTensorHandle inp, AtenTensorHandle packed_weights,
                                                     int64_t block_size, int64_t in_features, int64_t out_features,
                                                     AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("_dyn_quant_matmul_4bit: ret0 is null");
    *ret0 = matmul(deref(inp, "inp"), deref(packed_weights, "packed_weights"), block_size, in_features, out_features)
                .release();
  });
}

}  // extern "C"
