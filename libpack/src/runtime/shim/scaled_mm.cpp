// aten::_scaled_mm and _scaled_mm.out on the CPU, as torch 2.11's emulated CPU kernel computes them: float8 mat_a
// [M, K] and mat_b [K, N] decoded to float (fp8.hpp), each multiplied by its one-element scale, one float32
// product, plus bias, divided by scale_result when the output is float8, then converted to the output dtype
// (out_dtype, else mat_a's). torch 2.11 refuses per-row scales on the CPU, and so does this (later torch adds
// them). On CPUs with AMX torch runs oneDNN's kernel instead; on an AMX host its results matched these within
// float32 rounding (the conformance cases).
#include "aoti_shim.h"
#include "blas.hpp"
#include "fp8.hpp"
#include "linalg_util.hpp"
#include "tensor.hpp"

#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::linalg;

namespace {

bool is_scalar(const Tensor& s) { return s.numel() == 1; }

struct ScaledArgs {
  const Tensor *a, *b, *sa, *sb, *bias, *scale_result;
};

// torch 2.11's checks, in its order and words.
void check_scaled_mm(const ScaledArgs& s, int32_t out_dtype) {
  const Tensor &a = *s.a, &b = *s.b;
  for (const Tensor* t : {s.a, s.b, s.sa, s.sb}) require_cpu(*t, "_scaled_mm");
  if (a.dim() != 2) fail("_scaled_mm: mat1 must be a matrix");
  if (b.dim() != 2) fail("_scaled_mm: mat2 must be a matrix");
  if (a.sizes[1] != b.sizes[0])
    fail("_scaled_mm: mat1 and mat2 shapes cannot be multiplied (" + std::to_string(a.sizes[0]) + "x" +
         std::to_string(a.sizes[1]) + " and " + std::to_string(b.sizes[0]) + "x" + std::to_string(b.sizes[1]) + ")");
  if (!is_scalar(*s.sa) || !is_scalar(*s.sb))
    fail("_scaled_mm: Now _scaled_mm only supports per-tensor scaling for CPU backend.");
  if (s.scale_result && !is_scalar(*s.scale_result)) fail("_scaled_mm: scale_result must be a float scalar");
  if (s.bias && s.bias->numel() != b.sizes[1])
    fail("_scaled_mm: Bias must be size " + std::to_string(b.sizes[1]) + " but got " + std::to_string(s.bias->numel()));
  if (!fp8::is_fp8(a.dtype))
    fail(std::string("_scaled_mm: Expected mat1 to be Float8 matrix got ") + dtype_name(a.dtype));
  if (!fp8::is_fp8(b.dtype))
    fail(std::string("_scaled_mm: Expected mat2 to be Float8 matrix got ") + dtype_name(b.dtype));
  const auto od = static_cast<DType>(out_dtype);
  if (!fp8::is_fp8(out_dtype) && od != DType::f32 && od != DType::f16 && od != DType::bf16 && od != DType::f64)
    fail(std::string("_scaled_mm: out_dtype ") + dtype_name(out_dtype) + " is not supported");
}

// torch's scale.item<float>().
float scalar_of(const Tensor& t) { return static_cast<float>(load_as_double(t.data(), t.dtype)); }

// mat (fp8, rows x cols) decoded to a row-major float matrix, each element times the scale.
std::vector<float> scaled_matrix(const Tensor& m, float scale) {
  const int64_t R = m.sizes[0], C = m.sizes[1];
  std::vector<float> out(static_cast<std::size_t>(R * C));
  const auto* p = reinterpret_cast<const uint8_t*>(m.data());
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j)
      out[std::size_t(i * C + j)] = fp8::decode(p[i * m.strides[0] + j * m.strides[1]], m.dtype) * scale;
  return out;
}

// out <- the scaled product plus bias (over scale_result for float8 outputs), in out's dtype and layout.
void scaled_mm_into(Tensor& out, const ScaledArgs& s) {
  check_scaled_mm(s, out.dtype);
  const int64_t M = s.a->sizes[0], K = s.a->sizes[1], N = s.b->sizes[1];
  if (out.dim() != 2 || out.sizes[0] != M || out.sizes[1] != N)
    fail("_scaled_mm: out has shape " + shape_str(out.sizes) + ", expected [" + std::to_string(M) + ", " +
         std::to_string(N) + "]");
  if (M == 0 || N == 0) return;
  std::vector<float> c(static_cast<std::size_t>(M * N), 0.0f);
  if (K > 0) {
    const std::vector<float> a = scaled_matrix(*s.a, scalar_of(*s.sa));
    const std::vector<float> b = scaled_matrix(*s.b, scalar_of(*s.sb));
    gemm<float>(false, false, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(), N);
  }
  if (s.bias) {
    require_cpu(*s.bias, "_scaled_mm");
    TensorPtr bc = contiguous_as(*s.bias, static_cast<int32_t>(DType::f32));
    const auto* bv = reinterpret_cast<const float*>(bc->data());
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) c[std::size_t(i * N + j)] += bv[j];
  }
  const bool f8_out = fp8::is_fp8(out.dtype);
  const float inv_scale = f8_out && s.scale_result ? 1.0f / scalar_of(*s.scale_result) : 1.0f;
  const auto isz = static_cast<int64_t>(out.itemsize());
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      char* p = out.data() + (i * out.strides[0] + j * out.strides[1]) * isz;
      const float v = c[std::size_t(i * N + j)];
      if (f8_out) *reinterpret_cast<uint8_t*>(p) = fp8::encode(v * inv_scale, out.dtype);
      else store_from_double(p, out.dtype, double(v));
    }
}

ScaledArgs args_of(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                   AtenTensorHandle* bias, AtenTensorHandle* scale_result) {
  return {&deref(self, "self"),
          &deref(mat2, "mat2"),
          &deref(scale_a, "scale_a"),
          &deref(scale_b, "scale_b"),
          bias && *bias ? &deref(*bias, "bias") : nullptr,
          scale_result && *scale_result ? &deref(*scale_result, "scale_result") : nullptr};
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__scaled_mm(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scale_a,
                                         AtenTensorHandle scale_b, AtenTensorHandle* bias,
                                         AtenTensorHandle* scale_result, int32_t* out_dtype, int32_t use_fast_accum,
                                         AtenTensorHandle* ret0) {
  (void)use_fast_accum;  // torch's CPU kernel ignores it too
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("_scaled_mm: ret0 is null");
    const ScaledArgs s = args_of(self, mat2, scale_a, scale_b, bias, scale_result);
    const int32_t od = out_dtype ? *out_dtype : s.a->dtype;
    check_scaled_mm(s, od);  // before the shapes are used
    const int64_t sizes[2] = {s.a->sizes[0], s.b->sizes[1]};
    TensorPtr out(new_contiguous(sizes, od));
    scaled_mm_into(*out, s);
    *ret0 = out.release();
  });
}

AOTITorchError aoti_torch_cpu__scaled_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2,
                                             AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle* bias,
                                             AtenTensorHandle* scale_result, int32_t* out_dtype,
                                             int32_t use_fast_accum) {
  (void)use_fast_accum;
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    require_cpu(o, "_scaled_mm");
    if (out_dtype && *out_dtype != o.dtype) fail("_scaled_mm: out_dtype must match output matrix type");
    scaled_mm_into(o, args_of(self, mat2, scale_a, scale_b, bias, scale_result));
  });
}

}  // extern "C"
