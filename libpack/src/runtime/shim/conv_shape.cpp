// The shape arithmetic of aten::convolution (conv_shape.hpp).
#include "conv_shape.hpp"

#include <string>

namespace mpspack::shim {
namespace {

// A per-spatial-dim argument: one value for every dim, or one value each.
std::array<int64_t, 3> expand_param(const int64_t* p, int64_t len, int spatial, const char* name) {
  if (len != 1 && len != spatial)
    fail(std::string("convolution: ") + name + " has " + std::to_string(len) + " values for " +
         std::to_string(spatial) + " spatial dims");
  if (p == nullptr) fail(std::string("convolution: ") + name + " is null");
  std::array<int64_t, 3> v{};
  for (int i = 0; i < spatial; ++i) v[i] = p[len == 1 ? 0 : i];
  return v;
}

std::string joined(const std::array<int64_t, 3>& v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

std::string ConvShape::describe() const {
  std::string s = std::string(transposed ? "conv_transpose" : "conv") + std::to_string(spatial) +
                  "d N=" + std::to_string(N) + " C=" + std::to_string(C) + " O=" + std::to_string(O) +
                  " in=" + joined(in, spatial) + " kernel=" + joined(kernel, spatial) +
                  " stride=" + joined(stride, spatial) + " padding=" + joined(pad, spatial) +
                  " dilation=" + joined(dilation, spatial) + " groups=" + std::to_string(groups);
  if (transposed) s += " output_padding=" + joined(out_pad, spatial);
  return s;
}

ConvShape convolution_shape(const Tensor& x, const Tensor& w, const Tensor* b, const int64_t* stride,
                            int64_t stride_len_, const int64_t* padding, int64_t padding_len_, const int64_t* dilation,
                            int64_t dilation_len_, int32_t transposed, const int64_t* output_padding,
                            int64_t output_padding_len_, int64_t groups) {
  const int64_t nd = x.dim();
  if (nd < 3 || nd > 5)
    fail("convolution: only 1-, 2- and 3-D convolutions are supported (input has " + std::to_string(nd) + " dims)");
  if (w.dim() != nd) fail("convolution: weight must have as many dims as the input");
  if (x.dtype != w.dtype || (b && b->dtype != x.dtype)) fail("convolution: input, weight and bias dtypes differ");
  const int32_t dt = x.dtype;
  if (dt != static_cast<int32_t>(DType::f32) && dt != static_cast<int32_t>(DType::f64) &&
      dt != static_cast<int32_t>(DType::f16) && dt != static_cast<int32_t>(DType::bf16))
    fail(std::string("convolution: dtype ") + dtype_name(dt) + " is not supported");
  if (groups < 1) fail("convolution: groups must be >= 1");

  ConvShape s;
  s.spatial = static_cast<int>(nd - 2);
  s.transposed = transposed != 0;
  s.groups = groups;
  s.stride = expand_param(stride, stride_len_, s.spatial, "stride");
  s.pad = expand_param(padding, padding_len_, s.spatial, "padding");
  s.dilation = expand_param(dilation, dilation_len_, s.spatial, "dilation");
  if (s.transposed) s.out_pad = expand_param(output_padding, output_padding_len_, s.spatial, "output_padding");
  s.N = x.sizes[0];
  s.C = x.sizes[1];
  // weight: [O, C/groups, k...] for a convolution, [C, O/groups, k...] for a transposed one
  s.O = s.transposed ? w.sizes[1] * groups : w.sizes[0];
  const int64_t w_in = s.transposed ? w.sizes[0] : w.sizes[1] * groups;
  const int64_t w_out_dim = s.transposed ? w.sizes[1] : w.sizes[0];
  if (s.C % groups != 0 || w_in != s.C || (!s.transposed && w_out_dim % groups != 0))
    fail("convolution: weight of shape [" + std::to_string(w.sizes[0]) + ", " + std::to_string(w.sizes[1]) +
         ", ...] does not fit " + std::to_string(s.C) + " input channels in " + std::to_string(groups) + " groups");
  if (b && (b->dim() != 1 || b->sizes[0] != s.O)) fail("convolution: bias must be [out_channels]");
  for (int d = 0; d < s.spatial; ++d) {
    s.in[d] = x.sizes[2 + d];
    s.kernel[d] = w.sizes[2 + d];
    if (s.stride[d] < 1 || s.dilation[d] < 1 || s.pad[d] < 0 || s.out_pad[d] < 0)
      fail("convolution: stride and dilation must be >= 1, padding and output_padding >= 0");
    if (s.transposed && s.out_pad[d] >= s.stride[d] && s.out_pad[d] >= s.dilation[d])
      fail("convolution: output_padding must be smaller than stride or dilation");
    const int64_t reach = s.dilation[d] * (s.kernel[d] - 1) + 1;
    s.out[d] = s.transposed ? (s.in[d] - 1) * s.stride[d] - 2 * s.pad[d] + reach + s.out_pad[d]
                            : (s.in[d] + 2 * s.pad[d] - reach) / s.stride[d] + 1;
    if (s.out[d] <= 0 || (!s.transposed && s.in[d] + 2 * s.pad[d] < reach))
      fail("convolution: the (padded) input is smaller than the kernel (" + s.describe() + ")");
  }

  // Output layout as torch's: channels-last when the input or the weight is, else contiguous.
  s.out_sizes = {s.N, s.O};
  for (int d = 0; d < s.spatial; ++d) s.out_sizes.push_back(s.out[d]);
  // torch's suggest_memory_format of either operand (mkldnn_conv_use_channels_last, cudnn_conv_suggest_memory_format).
  s.channels_last = s.spatial >= 2 && (strides_like_channels_last(x) || strides_like_channels_last(w));
  s.out_strides = s.channels_last ? channels_last_strides(s.out_sizes) : contiguous_strides(s.out_sizes);
  return s;
}

}  // namespace mpspack::shim
