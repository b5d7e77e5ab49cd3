// aten::_fused_moving_avg_obs_fq_helper (and its functional form) on the CPU: the moving-average min/max
// observer and the fake quantization of quantization-aware training, in one op, as torch's CPU kernel does it:
//   1. observer_on: running_min/max <- the input's min/max (per row of a 2-D input when per_row_fake_quant), or
//      their moving average running + c * (current - running) once they hold a finite value;
//   2. fake_quant_on: scale/zero_point <- torch's ChooseQuantizationParams of running_min/max, and the output is
//      the input quantized and dequantized with them, the mask saying which elements were inside [qmin, qmax];
//      otherwise the output is a copy and the mask all true.
// The arithmetic follows torch's statement by statement (float where it uses float, its casts and its rounding),
// so results match it bit for bit; it is torch's own ChooseQuantizationParams (quant_utils), which fbgemm's
// is documented to equal.
#include "aoti_shim.h"
#include "element.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

constexpr const char* kOp = "_fused_moving_avg_obs_fq_helper";

// A float32 tensor's elements in row-major order, and back.
std::vector<float> read_floats(const Tensor& t, const char* what) {
  require_cpu(t, kOp);
  if (t.dtype != int32_t(DType::f32))
    fail(std::string(kOp) + ": " + what + " must be float32, got " + dtype_name(t.dtype));
  std::vector<float> v;
  const float* base = reinterpret_cast<const float*>(t.data());
  for_each_index(t.sizes, [&](std::span<const int64_t> idx) { v.push_back(base[offset_of(idx, t.strides)]); });
  return v;
}
void write_floats(Tensor& t, const std::vector<float>& v) {
  float* base = reinterpret_cast<float*>(t.data());
  std::size_t i = 0;
  for_each_index(t.sizes, [&](std::span<const int64_t> idx) { base[offset_of(idx, t.strides)] = v[i++]; });
}

// The first element of a flag tensor (observer_on, fake_quant_on) as torch's item().toInt() reads it.
int64_t flag(const Tensor& t, const char* what) {
  require_cpu(t, kOp);
  if (t.numel() < 1) fail(std::string(kOp) + ": " + what + " is empty");
  return static_cast<int64_t>(load_as_double(t.data(), t.dtype));
}

// min and max with NaN propagating, as torch's aminmax.
void min_max(float x, float& lo, float& hi) {
  if (std::isnan(x) || std::isnan(lo)) lo = std::numeric_limits<float>::quiet_NaN();
  else lo = std::min(lo, x);
  if (std::isnan(x) || std::isnan(hi)) hi = std::numeric_limits<float>::quiet_NaN();
  else hi = std::max(hi, x);
}

// Step 1: the moving averages of the input's min and max (per row: over dim 1, for each index of the others).
void observe(const Tensor& self, Tensor& running_min, Tensor& running_max, float c, bool per_row, int64_t ch_axis) {
  if (self.numel() == 0) fail(std::string(kOp) + ": cannot compute aminmax over an empty input");
  const std::vector<float> x = read_floats(self, "self");
  std::vector<float> lo, hi;
  if (per_row) {
    if (ch_axis != 0)
      fail(std::string(kOp) +
           ": Per-channel FakeQuant in fused_moving_avg_obs_fake_quant is only supported on axis == 0");
    if (self.dim() < 2) fail(std::string(kOp) + ": per-row observation needs an input of at least 2 dims");
    const int64_t rows = self.sizes[0], cols = self.sizes[1], inner = self.numel() / (rows * cols);
    lo.assign(std::size_t(rows * inner), std::numeric_limits<float>::infinity());
    hi.assign(lo.size(), -std::numeric_limits<float>::infinity());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        for (int64_t i = 0; i < inner; ++i) {
          const std::size_t at = std::size_t(r * inner + i);
          min_max(x[std::size_t((r * cols + k) * inner + i)], lo[at], hi[at]);
        }
  } else {
    lo.assign(1, std::numeric_limits<float>::infinity());
    hi.assign(1, -std::numeric_limits<float>::infinity());
    for (float v : x) min_max(v, lo[0], hi[0]);
  }
  std::vector<float> rmin = read_floats(running_min, "running_min"), rmax = read_floats(running_max, "running_max");
  if (rmin.size() < lo.size() || rmax.size() < lo.size())
    fail(std::string(kOp) + ": running_min/running_max have fewer elements (" + std::to_string(rmin.size()) +
         ") than the observed min/max (" + std::to_string(lo.size()) + ")");
  for (std::size_t i = 0; i < lo.size(); ++i) {
    rmin[i] = std::isinf(rmin[i]) ? lo[i] : rmin[i] + c * (lo[i] - rmin[i]);
    rmax[i] = std::isinf(rmax[i]) ? hi[i] : rmax[i] + c * (hi[i] - rmax[i]);
  }
  write_floats(running_min, rmin);
  write_floats(running_max, rmax);
}

struct QParams {
  double scale;
  int32_t zero_point;
};

// torch's quant_utils::ChooseQuantizationParams (force_scale_power_of_two and reduce_range false).
QParams choose_qparams(float min, float max, int32_t qmin, int32_t qmax, bool preserve_sparsity) {
  if (!(min <= max)) fail(std::string(kOp) + ": In ChooseQuantizationParams, min should be less than or equal to max");
  if (min < 0 && max > 0 && preserve_sparsity) {
    const int symmetric_qmin = -((qmax - qmin) / 2 + 1), symmetric_qmax = (qmax - qmin) / 2;
    const double max_scale = std::max(std::fabs(min / symmetric_qmin), std::fabs(max / symmetric_qmax));
    min = float(max_scale * symmetric_qmin);
    max = float(max_scale * symmetric_qmax);
  }
  min = std::min(min, 0.f);
  max = std::max(max, 0.f);
  if (!(qmin < qmax)) fail(std::string(kOp) + ": In ChooseQuantizationParams, qmin should be less than qmax");
  double scale = (static_cast<double>(max) - min) / (qmax - qmin);
  if (float(scale) == 0.0f || std::isinf(1.0f / float(scale))) scale = 0.1;  // keeps 1/scale finite
  constexpr float kSmallScale = 6.1e-5f;  // fp16's smallest normal: no scales in its subnormal range
  if (scale < kSmallScale) {
    const float org_scale = float(scale);
    scale = kSmallScale;
    if (min == 0.0f) {
      max = kSmallScale * float(qmax - qmin);
    } else if (max == 0.0f) {
      min = -kSmallScale * float(qmax - qmin);
    } else {
      const float amplifier = kSmallScale / org_scale;
      min *= amplifier;
      max *= amplifier;
    }
  }
  // The zero point from whichever of (min, qmin) and (max, qmax) adds the smaller terms, then nudged to an integer.
  const double from_min = qmin - min / scale, from_max = qmax - max / scale;
  const double from_min_error = std::abs(qmin) - std::abs(min / scale);
  const double from_max_error = std::abs(qmax) - std::abs(max / scale);
  double initial = from_min_error < from_max_error ? from_min : from_max;
  if (min < 0 && max > 0 && preserve_sparsity) initial = static_cast<double>(qmin + qmax) / 2;
  int32_t nudged = 0;
  if (initial < qmin) nudged = qmin;
  else if (initial > qmax) nudged = qmax;
  else nudged = static_cast<int32_t>(std::nearbyint(initial));
  return {scale, nudged};
}

// A float-to-int64 conversion as x86-64's cvttss2si does it: NaN and out-of-range values give INT64_MIN (torch
// casts such values; C++ leaves that undefined).
int64_t to_i64(double v) {
  if (!(v >= -9.2233720368547758e18 && v < 9.2233720368547758e18)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// Per-tensor fake quantization with torch's types: x * inv_scale and its rounding in float, the zero point
// added as float, the clamp in double, the result (q - zp) * scale in float.
void fake_quant_tensor(const std::vector<float>& x, float sc, int64_t zp, int64_t qmin, int64_t qmax,
                       std::vector<float>& out, std::vector<bool>& mask) {
  const float inv_scale = 1.0f / sc;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float qval_f = float(zp) + std::nearbyint(x[i] * inv_scale);
    const int64_t qval = to_i64(std::fmin(std::fmax(double(qval_f), double(qmin)), double(qmax)));
    out[i] = float(qval - zp) * sc;
    mask[i] = float(qmin) <= qval_f && qval_f <= float(qmax);
  }
}

// Per-channel fake quantization along dim 0 (torch's integer zero-point kernel).
void fake_quant_channels(const Tensor& self, const std::vector<float>& x, const std::vector<float>& scale,
                         const std::vector<int64_t>& zp, int64_t qmin, int64_t qmax, std::vector<float>& out,
                         std::vector<bool>& mask) {
  const int64_t channels = self.sizes[0], per = self.numel() / std::max<int64_t>(channels, 1);
  if (int64_t(scale.size()) != channels || int64_t(zp.size()) != channels)
    fail(std::string(kOp) + ": dimensions of scale and zero-point are not consistent with input tensor");
  for (int64_t c = 0; c < channels; ++c) {
    const float inv_scale = 1.0f / scale[std::size_t(c)];
    const int32_t z = static_cast<int32_t>(zp[std::size_t(c)]);
    for (int64_t j = 0; j < per; ++j) {
      const std::size_t i = std::size_t(c * per + j);
      const int64_t qval = to_i64(double(float(z) + std::nearbyint(x[i] * inv_scale)));
      mask[i] = qmin <= qval && qval <= qmax;
      const double clamped = std::fmin(std::fmax(double(qval), double(qmin)), double(qmax));
      out[i] = float((clamped - z) * scale[std::size_t(c)]);
    }
  }
}

std::vector<int64_t> read_ints(const Tensor& t) {
  std::vector<int64_t> v;
  const auto* base = static_cast<const unsigned char*>(static_cast<const void*>(t.data()));
  const int64_t isz = int64_t(t.itemsize());
  for_each_index(t.sizes, [&](std::span<const int64_t> idx) {
    v.push_back(static_cast<int64_t>(load_as_double(base + offset_of(idx, t.strides) * isz, t.dtype)));
  });
  return v;
}
void write_ints(Tensor& t, const std::vector<int64_t>& v) {
  auto* base = static_cast<unsigned char*>(static_cast<void*>(t.data()));
  const int64_t isz = int64_t(t.itemsize());
  std::size_t i = 0;
  for_each_index(t.sizes, [&](std::span<const int64_t> idx) {
    store_from_double(base + offset_of(idx, t.strides) * isz, t.dtype, double(v[i++]));
  });
}

struct Params {
  double averaging_const;
  int64_t quant_min, quant_max, ch_axis;
  bool per_row, symmetric;
};

// Step 2: scale/zero_point from running_min/max (written back), and the fake-quantized values and mask.
void choose_and_fake_quant(const Tensor& self, const Tensor& running_min, const Tensor& running_max, Tensor& scale,
                           Tensor& zero_point, const Params& p, std::vector<float>& out, std::vector<bool>& mask) {
  require_cpu(scale, kOp);
  require_cpu(zero_point, kOp);
  const std::vector<float> rmin = read_floats(running_min, "running_min");
  const std::vector<float> rmax = read_floats(running_max, "running_max");
  std::vector<float> sc = read_floats(scale, "scale");
  std::vector<int64_t> zp = read_ints(zero_point);
  const std::size_t count = p.per_row ? rmin.size() : 1;
  if (p.per_row && p.ch_axis != 0)
    fail(std::string(kOp) + ": per-row fake quantization is only supported on axis 0, got ch_axis " +
         std::to_string(p.ch_axis));
  if (p.per_row && zero_point.dtype != int32_t(DType::i32) && zero_point.dtype != int32_t(DType::i64))
    fail(std::string(kOp) + ": per-row zero_point must be int32, got " + dtype_name(zero_point.dtype));
  if (!p.per_row && (rmin.size() != 1 || rmax.size() != 1))
    fail(std::string(kOp) + ": running_min/running_max must hold one element for per-tensor fake quantization");
  if (rmax.size() < count || sc.size() < count || zp.size() < count)
    fail(std::string(kOp) + ": scale/zero_point/running_max have fewer elements than running_min");
  for (std::size_t i = 0; i < count; ++i) {
    const QParams q = choose_qparams(rmin[i], rmax[i], int32_t(p.quant_min), int32_t(p.quant_max), p.symmetric);
    sc[i] = float(q.scale);
    zp[i] = q.zero_point;
  }
  write_floats(scale, sc);
  write_ints(zero_point, zp);
  const std::vector<float> x = read_floats(self, "self");
  if (p.per_row) fake_quant_channels(self, x, sc, zp, p.quant_min, p.quant_max, out, mask);
  else fake_quant_tensor(x, sc[0], zp[0], p.quant_min, p.quant_max, out, mask);
}

// The whole op on the given running_min/running_max/scale/zero_point (updated in place); the output and mask
// have torch.empty_like(self)'s strides.
void fused_helper(const Tensor& self, const Tensor& observer_on, const Tensor& fake_quant_on, Tensor& running_min,
                  Tensor& running_max, Tensor& scale, Tensor& zero_point, const Params& p, AtenTensorHandle* ret0,
                  AtenTensorHandle* ret1) {
  require_cpu(self, kOp);
  if (ret0 == nullptr || ret1 == nullptr) fail(std::string(kOp) + ": ret0/ret1 is null");
  if (self.dtype != int32_t(DType::f32))
    fail(std::string(kOp) + ": self must be float32, got " + dtype_name(self.dtype));
  if (flag(observer_on, "observer_on") != 0)
    observe(self, running_min, running_max, float(p.averaging_const), p.per_row, p.ch_axis);
  const std::vector<int64_t> strides = empty_like_strides(self);
  TensorPtr out(new_tensor(self.sizes, strides, self.dtype));
  TensorPtr mask(new_tensor(self.sizes, strides, int32_t(DType::boolean)));
  if (flag(fake_quant_on, "fake_quant_on") != 0) {
    std::vector<float> values(static_cast<std::size_t>(self.numel()));
    std::vector<bool> keep(values.size());
    choose_and_fake_quant(self, running_min, running_max, scale, zero_point, p, values, keep);
    write_floats(*out, values);
    bool* m = reinterpret_cast<bool*>(mask->data());
    std::size_t i = 0;
    for_each_index(self.sizes, [&](std::span<const int64_t> idx) { m[offset_of(idx, strides)] = keep[i++]; });
  } else {
    copy_into(*out, self);
    std::fill_n(reinterpret_cast<bool*>(mask->data()), mask->numel(), true);  // dense: numel elements
  }
  *ret0 = out.release();
  *ret1 = mask.release();
}

// torch.clone(t): new storage, empty_like's strides.
TensorPtr clone_of(const Tensor& t) {
  require_cpu(t, kOp);
  TensorPtr c(new_tensor(t.sizes, empty_like_strides(t), t.dtype));
  copy_into(*c, t);
  return c;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__fused_moving_avg_obs_fq_helper(
    AtenTensorHandle self, AtenTensorHandle observer_on, AtenTensorHandle fake_quant_on, AtenTensorHandle running_min,
    AtenTensorHandle running_max, AtenTensorHandle scale, AtenTensorHandle zero_point, double averaging_const,
    int64_t quant_min, int64_t quant_max, int64_t ch_axis, int32_t per_row_fake_quant, int32_t symmetric_quant,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return guarded(__func__, [&] {
    const Params p{averaging_const, quant_min, quant_max, ch_axis, per_row_fake_quant != 0, symmetric_quant != 0};
    fused_helper(deref(self, "self"), deref(observer_on, "observer_on"), deref(fake_quant_on, "fake_quant_on"),
                 deref(running_min, "running_min"), deref(running_max, "running_max"), deref(scale, "scale"),
                 deref(zero_point, "zero_point"), p, ret0, ret1);
  });
}

// The same on copies of running_min, running_max, scale and zero_point, returned as ret2..ret5.
AOTITorchError aoti_torch_cpu__fused_moving_avg_obs_fq_helper_functional(
    AtenTensorHandle self, AtenTensorHandle observer_on, AtenTensorHandle fake_quant_on, AtenTensorHandle running_min,
    AtenTensorHandle running_max, AtenTensorHandle scale, AtenTensorHandle zero_point, double averaging_const,
    int64_t quant_min, int64_t quant_max, int64_t ch_axis, int32_t per_row_fake_quant, int32_t symmetric_quant,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3,
    AtenTensorHandle* ret4, AtenTensorHandle* ret5) {
  return guarded(__func__, [&] {
    if (ret2 == nullptr || ret3 == nullptr || ret4 == nullptr || ret5 == nullptr)
      fail(std::string(kOp) + "_functional: ret2..ret5 is null");
    const Params p{averaging_const, quant_min, quant_max, ch_axis, per_row_fake_quant != 0, symmetric_quant != 0};
    TensorPtr rmin = clone_of(deref(running_min, "running_min")), rmax = clone_of(deref(running_max, "running_max"));
    TensorPtr sc = clone_of(deref(scale, "scale")), zp = clone_of(deref(zero_point, "zero_point"));
    AtenTensorHandle out = nullptr, mask = nullptr;
    fused_helper(deref(self, "self"), deref(observer_on, "observer_on"), deref(fake_quant_on, "fake_quant_on"), *rmin,
                 *rmax, *sc, *zp, p, &out, &mask);
    *ret0 = out;
    *ret1 = mask;
    *ret2 = rmin.release();
    *ret3 = rmax.release();
    *ret4 = sc.release();
    *ret5 = zp.release();
  });
}

}  // extern "C"
