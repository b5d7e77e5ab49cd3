// The shape arithmetic of aten::convolution (conv_shape.hpp).
#include "conv_shape.hpp"

#include <string>

namespace mpspack::shim {
namespace {

std::vector<int64_t> expand_param(const int64_t* p, int64_t len, int64_t spatial, const char* name) {
  if (len != 1 && len != spatial)
    fail(std::string("convolution: ") + name + " has " + std::to_string(len) + " values for " +
         std::to_string(spatial) + " spatial dims");
  if (p == nullptr) fail(std::string("convolution: ") + name + " is null");
  std::vector<int64_t> v(static_cast<std::size_t>(spatial));
  for (int64_t i = 0; i < spatial; ++i) v[i] = p[len == 1 ? 0 : i];
  return v;
}

// torch picks a channels-last output when the input or the weight is channels-last (suggest_memory_format).
bool is_channels_last_4d(const Tensor& t) {
  if (t.dim() != 4) return false;
  const auto& s = t.strides;
  const auto& z = t.sizes;
  if (t.is_contiguous()) return false;  // ambiguous layouts count as contiguous
  return s[1] == 1 && s[3] == z[1] && s[2] == z[3] * z[1] && (z[0] == 1 || s[0] == z[2] * z[3] * z[1]);
}

}  // namespace

ConvShape convolution_shape(const Tensor& x, const Tensor& w, const Tensor* b, const int64_t* stride,
                          int64_t stride_len_, const int64_t* padding, int64_t padding_len_, const int64_t* dilation,
                          int64_t dilation_len_, int32_t transposed, int64_t groups) {
  if (transposed != 0) fail("convolution: transposed convolution is not supported by the mpspack shim");
  const int64_t nd = x.dim();
  if (nd != 3 && nd != 4)
    fail("convolution: only 1-D and 2-D convolutions are supported (input has " + std::to_string(nd) + " dims)");
  if (w.dim() != nd) fail("convolution: weight must have as many dims as the input");
  if (x.dtype != w.dtype || (b && b->dtype != x.dtype)) fail("convolution: input, weight and bias dtypes differ");
  const int32_t dt = x.dtype;
  if (dt != static_cast<int32_t>(DType::f32) && dt != static_cast<int32_t>(DType::f64) &&
      dt != static_cast<int32_t>(DType::f16) && dt != static_cast<int32_t>(DType::bf16))
    fail(std::string("convolution: dtype ") + dtype_name(dt) + " is not supported");
  const int64_t spatial = nd - 2;
  const auto st = expand_param(stride, stride_len_, spatial, "stride");
  const auto pd = expand_param(padding, padding_len_, spatial, "padding");
  const auto dl = expand_param(dilation, dilation_len_, spatial, "dilation");
  if (groups < 1) fail("convolution: groups must be >= 1");

  ConvShape s{};
  s.N = x.sizes[0];
  s.C = x.sizes[1];
  s.H = spatial == 2 ? x.sizes[2] : 1;
  s.W = x.sizes[nd - 1];
  s.O = w.sizes[0];
  s.KH = spatial == 2 ? w.sizes[2] : 1;
  s.KW = w.sizes[nd - 1];
  s.groups = groups;
  s.sh = spatial == 2 ? st[0] : 1;
  s.sw = st[spatial - 1];
  s.ph = spatial == 2 ? pd[0] : 0;
  s.pw = pd[spatial - 1];
  s.dh = spatial == 2 ? dl[0] : 1;
  s.dw = dl[spatial - 1];
  if (s.sh < 1 || s.sw < 1 || s.dh < 1 || s.dw < 1 || s.ph < 0 || s.pw < 0)
    fail("convolution: stride and dilation must be >= 1, padding >= 0");
  if (s.C % groups != 0 || s.O % groups != 0 || w.sizes[1] != s.C / groups)
    fail("convolution: weight of shape [" + std::to_string(s.O) + ", " + std::to_string(w.sizes[1]) +
         ", ...] does not fit " + std::to_string(s.C) + " input channels in " + std::to_string(groups) + " groups");
  if (b && (b->dim() != 1 || b->sizes[0] != s.O)) fail("convolution: bias must be [out_channels]");
  s.OH = (s.H + 2 * s.ph - s.dh * (s.KH - 1) - 1) / s.sh + 1;
  s.OW = (s.W + 2 * s.pw - s.dw * (s.KW - 1) - 1) / s.sw + 1;
  if (s.OH <= 0 || s.OW <= 0) fail("convolution: the (padded) input is smaller than the kernel");

  // Output layout as torch's: channels-last when the input or weight is, else contiguous.
  std::vector<int64_t>& out_sizes = s.out_sizes;
  out_sizes = {s.N, s.O};
  if (spatial == 2) out_sizes.push_back(s.OH);
  out_sizes.push_back(s.OW);
  std::vector<int64_t>& out_strides = s.out_strides;
  out_strides = contiguous_strides(out_sizes);
  if (spatial == 2 && (is_channels_last_4d(x) || is_channels_last_4d(w)))
    out_strides = {s.OH * s.OW * s.O, 1, s.OW * s.O, s.O};

  return s;
}

}  // namespace mpspack::shim
