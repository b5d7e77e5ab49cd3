// aten::_fused_rms_norm on the CPU, torch's rms_norm_composite: over the trailing normalized_shape dims,
// rstd = 1 / sqrt(mean(x^2) + eps) in x's compute type (float for float16/bfloat16), output = x * rstd rounded to
// x's dtype, then times weight when given (in float, or double for float64, rounded to x's dtype again). eps left
// out is the compute type's machine epsilon. Returns (output [x's shape, x's dtype, contiguous], rstd [x's shape with
// the normalized dims 1, the compute type, contiguous]).
#include "aoti_shim.h"
#include "linalg_util.hpp"
#include "tensor.hpp"

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::linalg;

namespace {

// v rounded to dtype's precision.
double round_to(int32_t dtype, double v) {
  alignas(8) char buf[8];
  store_from_double(buf, dtype, v);
  return load_as_double(buf, dtype);
}

// torch 2.11's CPU kernel reduces over the last len(normalized_shape) dims without comparing their sizes with
// normalized_shape, and multiplies by weight with broadcasting; the weight may not grow the result's shape here.
void check_rms_norm(const Tensor& x, std::span<const int64_t> shape, const Tensor* w) {
  require_cpu(x, "_fused_rms_norm");
  if (shape.empty())
    fail("_fused_rms_norm: Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
         "element, but got normalized_shape = []");
  if (x.dim() < static_cast<int64_t>(shape.size()))
    fail("_fused_rms_norm: Given normalized_shape=" + shape_str(shape) + ", expected input with at least " +
         std::to_string(shape.size()) + " dims, but got input of size" + shape_str(x.sizes));
  const auto d = static_cast<DType>(x.dtype);
  if (d != DType::f32 && d != DType::f64 && d != DType::f16 && d != DType::bf16)
    fail(std::string("_fused_rms_norm: dtype ") + dtype_name(x.dtype) + " is not supported (a floating type)");
  if (w != nullptr) {
    require_cpu(*w, "_fused_rms_norm");
    bool ok = w->dim() <= x.dim();
    for (int64_t i = 1; ok && i <= w->dim(); ++i) {
      const int64_t ws = w->sizes[std::size_t(w->dim() - i)], xs = x.sizes[std::size_t(x.dim() - i)];
      ok = ws == xs || ws == 1;
    }
    if (!ok)
      fail("_fused_rms_norm: weight of shape " + shape_str(w->sizes) + " does not broadcast to the input's shape " +
           shape_str(x.sizes));
  }
}

// rstd and the output of each row in one walk over the rows.
void rms_norm(const Tensor& x, std::span<const int64_t> shape, const Tensor* w, const double* eps, TensorPtr& out,
              TensorPtr& rstd) {
  check_rms_norm(x, shape, w);
  const bool wide = x.dtype == static_cast<int32_t>(DType::f64);
  const int32_t acc_dtype = wide ? x.dtype : static_cast<int32_t>(DType::f32);
  const double e = eps ? *eps : (wide ? DBL_EPSILON : double(FLT_EPSILON));
  const int32_t out_dtype = x.dtype;  // torch 2.11 keeps x's dtype whatever the weight's
  out.reset(new_contiguous(x.sizes, out_dtype));
  std::vector<int64_t> rsizes = x.sizes;
  int64_t inner = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    rsizes[rsizes.size() - 1 - i] = 1;
    inner *= x.sizes[x.sizes.size() - 1 - i];
  }
  rstd.reset(new_contiguous(rsizes, acc_dtype));
  TensorPtr xc = contiguous_as(x, x.dtype);
  const int64_t rows = inner == 0 ? rstd->numel() : x.numel() / inner;
  const int64_t xs = int64_t(x.itemsize()), rs = int64_t(rstd->itemsize());
  std::vector<double> y(static_cast<std::size_t>(x.numel()));
  for (int64_t r = 0; r < rows; ++r) {
    const char* xr = xc->data() + r * inner * xs;
    double sum = 0.0;
    for (int64_t k = 0; k < inner; ++k) {
      const double v = load_as_double(xr + k * xs, x.dtype);
      sum += v * v;
    }
    // The mean and rsqrt rounded to the compute type, as torch computes them there.
    const double mean = wide ? sum / double(inner) : double(float(sum) / float(inner));
    const double inv = wide ? 1.0 / std::sqrt(mean + e) : double(1.0f / std::sqrt(float(mean) + float(e)));
    store_from_double(rstd->data() + r * rs, rstd->dtype, inv);
    for (int64_t k = 0; k < inner; ++k) {
      const double v = load_as_double(xr + k * xs, x.dtype);
      y[std::size_t(r * inner + k)] = round_to(x.dtype, wide ? v * inv : double(float(v) * float(inv)));
    }
  }
  // times weight (broadcast), in the result's compute type
  const std::vector<int64_t> wst = w ? broadcast_strides(*out, *w) : std::vector<int64_t>{};
  const int64_t os = int64_t(out->itemsize());
  std::size_t e_ = 0;
  for_each_index(out->sizes, [&](std::span<const int64_t> idx) {
    double v = y[e_];
    if (w) {
      const double wv = load_as_double(w->data() + offset_of(idx, wst) * int64_t(w->itemsize()), w->dtype);
      v = out_dtype == static_cast<int32_t>(DType::f64) ? v * wv : double(float(v) * float(wv));
    }
    store_from_double(out->data() + int64_t(e_++) * os, out_dtype, v);
  });
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu__fused_rms_norm(AtenTensorHandle input, const int64_t* normalized_shape,
                                                         int64_t normalized_shape_len_, AtenTensorHandle* weight,
                                                         double* eps, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr || ret1 == nullptr) fail("_fused_rms_norm: ret0 or ret1 is null");
    if (normalized_shape_len_ < 0 || (normalized_shape_len_ > 0 && normalized_shape == nullptr))
      fail("_fused_rms_norm: normalized_shape is null");
    const Tensor* w = weight != nullptr && *weight != nullptr ? &deref(*weight, "weight") : nullptr;
    TensorPtr out, rstd;
    rms_norm(deref(input, "input"), std::span<const int64_t>(normalized_shape, std::size_t(normalized_shape_len_)), w,
             eps, out, rstd);
    *ret0 = out.release();
    *ret1 = rstd.release();
  });
}
