// fbgemm's Linear layers as torch's generic shim wraps them: the fp16-weight one (aoti_torch_cpu_wrapped_fbgemm_*)
// on OpenBLAS, and the int8 one with a prepacked weight (aoti_torch_cpu__wrapped_*) by integer loops.
//
// torch packs a weight into an fbgemm object that lives only in the process (a tensor holding a pointer), so a
// model calls pack and linear through the same shim: mpspack's packed forms can be its own.
// - fp16: the weight [N, K] clamped to float16's range (as fbgemm's packing saturates) and rounded to float16;
//   linear widens it to float32 and multiplies in float32, which is what fbgemm's fp16 GEMM computes (fp16 B,
//   fp32 A and accumulator).
// - int8: a uint8 tensor of bytes: a header (scale, zero point, sizes), the float bias, the weight quantized as
//   torch's quantize_per_tensor does to qint8. linear quantizes the input to quint8, multiplies in integers,
//   requantizes to quint8 with the output's scale and zero point as fbgemm's ReQuantizeOutput does, and gives
//   the dequantized float32 values, as torch's _wrapped_quantized_linear_prepacked.
#include "aoti_shim.h"
#include "blas.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace mpspack::shim;

namespace {

constexpr float kHalfMax = 65504.f;

TensorPtr pack_fp16(const Tensor& weight) {
  require_cpu(weight, "wrapped_fbgemm_pack_gemm_matrix_fp16");
  if (weight.dim() != 2) fail("fbgemm weight packing only packs matrices not vectors.");
  if (weight.dtype != static_cast<int32_t>(DType::f32))
    fail(std::string("wrapped_fbgemm_pack_gemm_matrix_fp16: expected scalar type Float but found ") +
         dtype_name(weight.dtype));
  const TensorPtr w = contiguous_as(weight, weight.dtype);
  TensorPtr packed(new_contiguous(weight.sizes, static_cast<int32_t>(DType::f16)));
  const auto* src = reinterpret_cast<const float*>(w->data());
  auto* dst = reinterpret_cast<uint16_t*>(packed->data());
  for (int64_t i = 0; i < w->numel(); ++i) dst[i] = float_to_half(std::clamp(src[i], -kHalfMax, kHalfMax));
  return packed;
}

// input [..., K] float32 (at least 2-D), packed [N, K] float16 -> [..., N] float32, + bias broadcast.
TensorPtr linear_fp16(const Tensor& input, const Tensor& packed, const Tensor* bias) {
  const char* op = "wrapped_fbgemm_linear_fp16_weight";
  require_cpu(input, op);
  require_cpu(packed, op);
  const auto f32 = static_cast<int32_t>(DType::f32);
  if (input.dtype != f32) fail(std::string(op) + ": expected scalar type Float but found " + dtype_name(input.dtype));
  if (packed.dim() != 2 || packed.dtype != static_cast<int32_t>(DType::f16))
    fail(std::string(op) + ": the weight is not one wrapped_fbgemm_pack_gemm_matrix_fp16 packed");
  if (input.dim() < 2) fail(std::string(op) + ": input must be at least 2-D, got " + std::to_string(input.dim()));
  const int64_t K = packed.sizes[1], N = packed.sizes[0];
  if (input.sizes.back() != K)
    fail(std::string(op) + ": input's last size " + std::to_string(input.sizes.back()) + " differs from the weight's " +
         std::to_string(K));
  std::vector<int64_t> out_sizes = input.sizes;
  out_sizes.back() = N;
  TensorPtr out(new_contiguous(out_sizes, f32));
  const int64_t M = input.numel() / std::max<int64_t>(K, 1);
  float beta = 0.f;
  if (bias != nullptr) {
    require_cpu(*bias, op);
    copy_into(*out, *bias);  // torch adds it afterwards (output.add_(bias)); the product accumulates onto it
    beta = 1.f;
  } else if (out->numel() > 0) {
    std::memset(out->data(), 0, static_cast<std::size_t>(out->numel()) * sizeof(float));
  }
  if (M == 0 || N == 0 || K == 0) return out;
  for (int64_t v : {M, N, K})
    if (v > INT_MAX) fail(std::string(op) + ": sizes beyond the BLAS's int range");
  const TensorPtr x = contiguous_as(input, f32);
  const TensorPtr w = contiguous_as(packed, f32);
  gemm<float>(false, true, M, N, K, 1.f, reinterpret_cast<const float*>(x->data()), K,
              reinterpret_cast<const float*>(w->data()), K, beta, reinterpret_cast<float*>(out->data()), N);
  return out;
}

// ---- int8 weights ------------------------------------------------------------------------------------------

struct QuantHeader {
  char magic[4];
  float scale;
  int32_t zero_point;
  int32_t has_bias;
  int64_t n, k;
};
constexpr char kQuantMagic[4] = {'M', 'P', 'Q', '8'};

// The one value of a 0-d or one-element tensor (torch's .item()).
double item(const Tensor& t, const char* op, const char* what) {
  require_cpu(t, op);
  if (t.numel() != 1) fail(std::string(op) + ": " + what + " must have one element, got " + std::to_string(t.numel()));
  return load_as_double(t.data(), t.dtype);
}

// fbgemm's Quantize (the legacy rounding torch uses): zero_point + nearbyint(v * (1 / scale)) in float, clamped.
int32_t quantize(float v, float inv_scale, int32_t zero_point, int32_t lo, int32_t hi) {
  const float q = float(zero_point) + std::nearbyint(v * inv_scale);
  return int32_t(std::clamp(q, float(lo), float(hi)));
}

TensorPtr prepack_int8(const Tensor& weight, const Tensor& scale_t, const Tensor& zero_point_t, const Tensor* bias) {
  const char* op = "_wrapped_linear_prepack";
  require_cpu(weight, op);
  if (weight.dim() != 2) fail("fbgemm weight packing only packs matrices not vectors.");
  const auto f32 = static_cast<int32_t>(DType::f32);
  if (weight.dtype != f32)
    fail(std::string(op) + ": quantize only works on Float tensors, got " + dtype_name(weight.dtype));
  QuantHeader h{};
  std::memcpy(h.magic, kQuantMagic, 4);
  h.scale = float(item(scale_t, op, "weight_scale"));
  h.zero_point = int32_t(item(zero_point_t, op, "weight_zero_point"));
  h.n = weight.sizes[0], h.k = weight.sizes[1];
  if (!(h.scale > 0)) fail(std::string(op) + ": weight_scale must be positive");
  if (bias != nullptr) {
    require_cpu(*bias, op);
    if (bias->dim() != 1 || bias->sizes[0] != h.n)
      fail(std::string(op) + ": bias must be a vector of " + std::to_string(h.n) + " values");
    h.has_bias = 1;
  }
  const int64_t bias_bytes = h.has_bias ? h.n * 4 : 0, total = int64_t(sizeof h) + bias_bytes + h.n * h.k;
  TensorPtr packed(new_contiguous(std::vector<int64_t>{total}, static_cast<int32_t>(DType::u8)));
  char* p = packed->data();
  std::memcpy(p, &h, sizeof h);
  if (bias != nullptr) {
    const TensorPtr b = contiguous_as(*bias, f32);
    std::memcpy(p + sizeof h, b->data(), std::size_t(bias_bytes));
  }
  const TensorPtr w = contiguous_as(weight, f32);
  const auto* src = reinterpret_cast<const float*>(w->data());
  auto* dst = reinterpret_cast<int8_t*>(p + sizeof h + bias_bytes);
  const float inv = 1.f / h.scale;
  for (int64_t i = 0; i < h.n * h.k; ++i) dst[i] = int8_t(quantize(src[i], inv, h.zero_point, -128, 127));
  return packed;
}

QuantHeader packed_header(const Tensor& packed, const char* op) {
  require_cpu(packed, op);
  QuantHeader h{};
  const bool bytes = packed.dtype == static_cast<int32_t>(DType::u8) && packed.dim() == 1 && packed.is_contiguous();
  if (bytes && packed.numel() >= int64_t(sizeof h)) std::memcpy(&h, packed.data(), sizeof h);
  if (!bytes || std::memcmp(h.magic, kQuantMagic, 4) != 0 ||
      packed.numel() != int64_t(sizeof h) + (h.has_bias ? h.n * 4 : 0) + h.n * h.k)
    fail(std::string(op) + ": the weight is not one _wrapped_linear_prepack packed");
  return h;
}

// The whole quantized product in fbgemm's order: quantize, integer products, requantize, dequantize.
TensorPtr quantized_linear(const Tensor& input, const Tensor& in_scale_t, const Tensor& in_zp_t, const Tensor& packed,
                           const Tensor& out_scale_t, const Tensor& out_zp_t) {
  const char* op = "_wrapped_quantized_linear_prepacked";
  require_cpu(input, op);
  const QuantHeader h = packed_header(packed, op);
  const auto f32 = static_cast<int32_t>(DType::f32);
  if (input.dtype != f32)
    fail(std::string(op) + ": quantize only works on Float tensors, got " + dtype_name(input.dtype));
  if (input.dim() < 1 || input.sizes.back() != h.k)
    fail(std::string(op) + ": the input's last size must be the weight's " + std::to_string(h.k));
  const auto in_scale = float(item(in_scale_t, op, "input_scale"));
  const auto out_scale = float(item(out_scale_t, op, "output_scale"));
  const auto in_zp = int32_t(item(in_zp_t, op, "input_zero_point"));
  const auto out_zp = int32_t(item(out_zp_t, op, "output_zero_point"));
  if (!(in_scale > 0) || !(out_scale > 0)) fail(std::string(op) + ": scales must be positive");
  std::vector<int64_t> out_sizes = input.sizes;
  out_sizes.back() = h.n;
  TensorPtr out(new_contiguous(out_sizes, f32));
  const int64_t M = h.k > 0 ? input.numel() / h.k : out->numel() / std::max<int64_t>(h.n, 1);
  const TensorPtr x = contiguous_as(input, f32);
  const auto* xs = reinterpret_cast<const float*>(x->data());
  std::vector<int32_t> qx(std::size_t(M * h.k));
  const float in_inv = 1.f / in_scale;
  for (std::size_t i = 0; i < qx.size(); ++i) qx[i] = quantize(xs[i], in_inv, in_zp, 0, 255) - in_zp;
  const char* p = packed.data() + sizeof h;
  std::vector<float> bias(std::size_t(h.n), 0.f);
  if (h.has_bias) std::memcpy(bias.data(), p, bias.size() * 4);
  const auto* w = reinterpret_cast<const int8_t*>(p + (h.has_bias ? h.n * 4 : 0));
  const float act_times_w_scale = in_scale * h.scale, multiplier = act_times_w_scale / out_scale;
  auto* o = reinterpret_cast<float*>(out->data());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < h.n; ++n) {
      int64_t raw = 0;
      for (int64_t k = 0; k < h.k; ++k) raw += int64_t(qx[m * h.k + k]) * (int32_t(w[n * h.k + k]) - h.zero_point);
      const float raw_f = float(raw) + (h.has_bias ? bias[n] / act_times_w_scale : 0.f);
      const long q = std::clamp<long>(std::lrintf(raw_f * multiplier) + out_zp, 0, 255);
      o[m * h.n + n] = out_scale * float(q - out_zp);
    }
  return out;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_wrapped_fbgemm_pack_gemm_matrix_fp16(AtenTensorHandle weight, AtenTensorHandle* out) {
  return guarded(__func__, [&] {
    if (out == nullptr) fail("out is null");
    *out = pack_fp16(deref(weight, "weight")).release();
  });
}

// out_channel only gives torch's shape function the output's last size; the kernel takes it from the weight.
AOTITorchError aoti_torch_cpu_wrapped_fbgemm_linear_fp16_weight(AtenTensorHandle input, AtenTensorHandle weight,
                                                                AtenTensorHandle bias, int64_t out_channel,
                                                                AtenTensorHandle* out) {
  return guarded(__func__, [&] {
    if (out == nullptr) fail("out is null");
    const Tensor* b = bias != nullptr ? &deref(bias, "bias") : nullptr;
    *out = linear_fp16(deref(input, "input"), deref(weight, "weight"), b).release();
  });
}

AOTITorchError aoti_torch_cpu__wrapped_linear_prepack(AtenTensorHandle weight, AtenTensorHandle weight_scale,
                                                      AtenTensorHandle weight_zero_point, AtenTensorHandle bias,
                                                      AtenTensorHandle* out) {
  return guarded(__func__, [&] {
    if (out == nullptr) fail("out is null");
    const Tensor* b = bias != nullptr ? &deref(bias, "bias") : nullptr;
    *out = prepack_int8(deref(weight, "weight"), deref(weight_scale, "weight_scale"),
                        deref(weight_zero_point, "weight_zero_point"), b)
               .release();
  });
}

// out_channel only gives torch's shape function the output's last size; the kernel takes it from the weight.
AOTITorchError aoti_torch_cpu__wrapped_quantized_linear_prepacked(AtenTensorHandle input, AtenTensorHandle input_scale,
                                                                  AtenTensorHandle input_zero_point,
                                                                  AtenTensorHandle weight, AtenTensorHandle out_scale,
                                                                  AtenTensorHandle out_zeropoint, int64_t out_channel,
                                                                  AtenTensorHandle* out) {
  return guarded(__func__, [&] {
    if (out == nullptr) fail("out is null");
    *out = quantized_linear(deref(input, "input"), deref(input_scale, "input_scale"),
                            deref(input_zero_point, "input_zero_point"), deref(weight, "weight"),
                            deref(out_scale, "out_scale"), deref(out_zeropoint, "out_zeropoint"))
               .release();
  });
}

}  // extern "C"
