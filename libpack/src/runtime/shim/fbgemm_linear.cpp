// fbgemm's fp16-weight Linear as torch's generic shim wraps it (aoti_torch_cpu_wrapped_fbgemm_*), on OpenBLAS.
//
// torch packs the weight into an fbgemm object that lives only in the process (a tensor holding a pointer), so a
// model calls pack and linear through the same shim: mpspack's packed form can be its own. It is the weight
// [N, K] clamped to float16's range (as fbgemm's packing saturates) and rounded to float16; linear widens it to
// float32 and multiplies in float32, which is what fbgemm's fp16 GEMM computes (fp16 B, fp32 A and accumulator).
#include "aoti_shim.h"
#include "blas.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <climits>
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
  if (input.dtype != f32)
    fail(std::string(op) + ": expected scalar type Float but found " + dtype_name(input.dtype));
  if (packed.dim() != 2 || packed.dtype != static_cast<int32_t>(DType::f16))
    fail(std::string(op) + ": the weight is not one wrapped_fbgemm_pack_gemm_matrix_fp16 packed");
  if (input.dim() < 2) fail(std::string(op) + ": input must be at least 2-D, got " + std::to_string(input.dim()));
  const int64_t K = packed.sizes[1], N = packed.sizes[0];
  if (input.sizes.back() != K)
    fail(std::string(op) + ": input's last size " + std::to_string(input.sizes.back()) +
         " differs from the weight's " + std::to_string(K));
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

}  // extern "C"
