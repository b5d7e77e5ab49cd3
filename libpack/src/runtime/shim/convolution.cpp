// aten::convolution for 1-D and 2-D inputs on the CPU: im2col, then one GEMM per (image, group) on OpenBLAS.
// float64 is computed in double; every other floating dtype in float32 and converted back.
#include "aoti_shim.h"
#include "tensor.hpp"

#include <cblas.h>

#include <string>
#include <vector>

using namespace mpspack::shim;

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

template <class T>
void gemm_nn(int64_t M, int64_t N, int64_t K, const T* A, const T* B, T* C) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, A, int(std::max<int64_t>(K, 1)),
                B, int(std::max<int64_t>(N, 1)), 0.0f, C, int(std::max<int64_t>(N, 1)));
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N), int(K), 1.0, A, int(std::max<int64_t>(K, 1)),
                B, int(std::max<int64_t>(N, 1)), 0.0, C, int(std::max<int64_t>(N, 1)));
  }
}

struct ConvShape {
  int64_t N, C, H, W, O, KH, KW, OH, OW, groups;
  int64_t sh, sw, ph, pw, dh, dw;
};

// in: [N,C,H,W] contiguous, wt: [O,C/g,KH,KW] contiguous, bias: [O] or null, out: [N,O,OH,OW] contiguous.
template <class T>
void conv2d(const ConvShape& s, const T* in, const T* wt, const T* bias, T* out) {
  const int64_t Cg = s.C / s.groups, Og = s.O / s.groups;
  const int64_t rows = Cg * s.KH * s.KW, cols = s.OH * s.OW;
  std::vector<T> col(static_cast<std::size_t>(std::max<int64_t>(rows * cols, 1)));
  for (int64_t n = 0; n < s.N; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      const T* x = in + (n * s.C + g * Cg) * s.H * s.W;
      // im2col: col[(c, kh, kw), (oh, ow)] = x[c, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] (0 outside)
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t kh = 0; kh < s.KH; ++kh)
          for (int64_t kw = 0; kw < s.KW; ++kw) {
            T* dst = col.data() + ((c * s.KH + kh) * s.KW + kw) * cols;
            for (int64_t oh = 0; oh < s.OH; ++oh) {
              const int64_t ih = oh * s.sh - s.ph + kh * s.dh;
              T* row = dst + oh * s.OW;
              if (ih < 0 || ih >= s.H) {
                for (int64_t ow = 0; ow < s.OW; ++ow) row[ow] = T(0);
                continue;
              }
              const T* src = x + (c * s.H + ih) * s.W;
              for (int64_t ow = 0; ow < s.OW; ++ow) {
                const int64_t iw = ow * s.sw - s.pw + kw * s.dw;
                row[ow] = (iw >= 0 && iw < s.W) ? src[iw] : T(0);
              }
            }
          }
      T* y = out + (n * s.O + g * Og) * cols;
      gemm_nn<T>(Og, cols, rows, wt + g * Og * rows, col.data(), y);
      if (bias != nullptr)
        for (int64_t o = 0; o < Og; ++o) {
          const T b = bias[g * Og + o];
          for (int64_t i = 0; i < cols; ++i) y[o * cols + i] += b;
        }
    }
  }
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu_convolution(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride,
    int64_t stride_len_, const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,
    int32_t transposed, const int64_t* output_padding, int64_t output_padding_len_, int64_t groups,
    AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    const Tensor& x = deref(input, "input");
    const Tensor& w = deref(weight, "weight");
    const Tensor* b = (bias != nullptr && *bias != nullptr) ? *bias : nullptr;
    if (ret0 == nullptr) fail("ret0 is null");
    if (transposed != 0) fail("convolution: transposed convolution is not supported by the mpspack CPU shim");
    require_cpu(x, "convolution");
    require_cpu(w, "convolution");
    if (b) require_cpu(*b, "convolution");
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
    std::vector<int64_t> out_sizes{s.N, s.O};
    if (spatial == 2) out_sizes.push_back(s.OH);
    out_sizes.push_back(s.OW);
    std::vector<int64_t> out_strides = contiguous_strides(out_sizes);
    if (spatial == 2 && (is_channels_last_4d(x) || is_channels_last_4d(w)))
      out_strides = {s.OH * s.OW * s.O, 1, s.OW * s.O, s.O};
    TensorPtr out(new_tensor(out_sizes, out_strides, dt));

    const int32_t ct = dt == static_cast<int32_t>(DType::f64) ? dt : static_cast<int32_t>(DType::f32);
    TensorPtr xc = contiguous_as(x, ct), wc = contiguous_as(w, ct);
    TensorPtr bc = b ? contiguous_as(*b, ct) : nullptr;
    TensorPtr yc(new_contiguous(out_sizes, ct));
    if (ct == static_cast<int32_t>(DType::f64)) {
      conv2d<double>(s, reinterpret_cast<const double*>(xc->data()), reinterpret_cast<const double*>(wc->data()),
                     bc ? reinterpret_cast<const double*>(bc->data()) : nullptr, reinterpret_cast<double*>(yc->data()));
    } else {
      conv2d<float>(s, reinterpret_cast<const float*>(xc->data()), reinterpret_cast<const float*>(wc->data()),
                    bc ? reinterpret_cast<const float*>(bc->data()) : nullptr, reinterpret_cast<float*>(yc->data()));
    }
    copy_into(*out, *yc);
    *ret0 = out.release();
  });
}
