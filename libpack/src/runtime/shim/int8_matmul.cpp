// aten::_weight_int8pack_mm: out[m, n] = (sum over k of self[m, k] * mat2[n, k]) * scales[n], the weight-only
// int8 linear of quantized LLMs. self [M, K] float32, float16 or bfloat16; mat2 [N, K] int8; scales [N] of
// self's dtype; out [M, N] contiguous, self's dtype. Products are summed in float, as torch's CPU kernel does.
#include "aoti_shim.h"
#include "tensor.hpp"

#include <string>

using namespace mpspack::shim;

namespace {

void check_int8pack(const Tensor& a, const Tensor& b, const Tensor& scales) {
  for (const Tensor* t : {&a, &b, &scales}) require_cpu(*t, "_weight_int8pack_mm");
  const auto dt = static_cast<DType>(a.dtype);
  if (dt != DType::f32 && dt != DType::f16 && dt != DType::bf16)
    fail(std::string("_weight_int8pack_mm: self dtype ") + dtype_name(a.dtype) +
         " is not supported (float32, float16 or bfloat16)");
  if (b.dtype != static_cast<int32_t>(DType::i8))
    fail(std::string("_weight_int8pack_mm: mat2 must be int8, got ") + dtype_name(b.dtype));
  if (scales.dtype != a.dtype) fail("_weight_int8pack_mm: scales must have self's dtype");
  if (a.dim() != 2 || b.dim() != 2 || scales.dim() != 1) fail("_weight_int8pack_mm: expects self [M, K], mat2 [N, K], scales [N]");
  if (a.sizes[1] != b.sizes[1] || scales.sizes[0] != b.sizes[0])
    fail("_weight_int8pack_mm: self [" + std::to_string(a.sizes[0]) + ", " + std::to_string(a.sizes[1]) +
         "], mat2 [" + std::to_string(b.sizes[0]) + ", " + std::to_string(b.sizes[1]) + "] and scales [" +
         std::to_string(scales.sizes[0]) + "] do not match");
}

Tensor* int8pack_mm(const Tensor& a, const Tensor& b, const Tensor& scales) {
  check_int8pack(a, b, scales);
  const int64_t M = a.sizes[0], K = a.sizes[1], N = b.sizes[0];
  const int64_t sizes[2] = {M, N};
  TensorPtr out(new_contiguous(sizes, a.dtype));
  // The activations and scales as float once; the int8 weights are read in place.
  TensorPtr af = contiguous_as(a, static_cast<int32_t>(DType::f32));
  TensorPtr sf = contiguous_as(scales, static_cast<int32_t>(DType::f32));
  const float* A = reinterpret_cast<const float*>(af->data());
  const float* S = reinterpret_cast<const float*>(sf->data());
  const auto* B = reinterpret_cast<const int8_t*>(b.data());
  const int64_t bs0 = b.strides[0], bs1 = b.strides[1];
  const std::size_t osz = out->itemsize();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc += A[m * K + k] * static_cast<float>(B[n * bs0 + k * bs1]);
      store_from_double(out->data() + (m * N + n) * static_cast<int64_t>(osz), out->dtype, acc * S[n]);
    }
  return out.release();
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                            AtenTensorHandle scales, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("ret0 is null");
    *ret0 = int8pack_mm(deref(self, "self"), deref(mat2, "mat2"), deref(scales, "scales"));
  });
}
