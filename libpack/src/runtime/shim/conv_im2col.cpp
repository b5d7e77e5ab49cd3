// The CPU convolution's built-in path (conv_cpu.hpp): im2col, then one GEMM per (image, group) on OpenBLAS
// (blas.hpp). float64 is computed in double; every other floating dtype in float32 and converted back.
#include "blas.hpp"
#include "conv_cpu.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace mpspack::shim {
namespace {

template <class T>
void gemm_nn(int64_t M, int64_t N, int64_t K, const T* A, const T* B, T* C) {
  gemm(false, false, M, N, K, T(1), A, std::max<int64_t>(K, 1), B, std::max<int64_t>(N, 1), T(0), C,
       std::max<int64_t>(N, 1));
}

// A 1-D or 2-D convolution's numbers, 1-D ones as 2-D with H = KH = 1.
struct Plane {
  int64_t N, C, H, W, O, KH, KW, OH, OW, groups, sh, sw, ph, pw, dh, dw;
};

Plane plane_of(const ConvShape& c, int32_t dtype) {
  if (c.spatial > 2 || c.transposed)
    fail("convolution: the built-in path has no kernel for " + std::string(dtype_name(dtype)) + " " + c.describe());
  const int h = c.spatial == 2 ? 0 : -1, w = c.spatial - 1;  // index of the H and W dims; -1: absent
  auto at = [](const std::array<int64_t, 3>& v, int i, int64_t absent) { return i < 0 ? absent : v[i]; };
  return {c.N,
          c.C,
          at(c.in, h, 1),
          c.in[w],
          c.O,
          at(c.kernel, h, 1),
          c.kernel[w],
          at(c.out, h, 1),
          c.out[w],
          c.groups,
          at(c.stride, h, 1),
          c.stride[w],
          at(c.pad, h, 0),
          c.pad[w],
          at(c.dilation, h, 1),
          c.dilation[w]};
}

// in: [N,C,H,W] contiguous, wt: [O,C/g,KH,KW] contiguous, bias: [O] or null, out: [N,O,OH,OW] contiguous.
template <class T>
void conv2d(const Plane& s, const T* in, const T* wt, const T* bias, T* out) {
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

void convolution_im2col(const ConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& out) {
  const Plane p = plane_of(s, x.dtype);
  const int32_t ct = x.dtype == static_cast<int32_t>(DType::f64) ? x.dtype : static_cast<int32_t>(DType::f32);
  TensorPtr xc = contiguous_as(x, ct), wc = contiguous_as(w, ct);
  TensorPtr bc = b ? contiguous_as(*b, ct) : nullptr;
  TensorPtr yc(new_contiguous(s.out_sizes, ct));
  if (ct == static_cast<int32_t>(DType::f64)) {
    conv2d<double>(p, reinterpret_cast<const double*>(xc->data()), reinterpret_cast<const double*>(wc->data()),
                   bc ? reinterpret_cast<const double*>(bc->data()) : nullptr, reinterpret_cast<double*>(yc->data()));
  } else {
    conv2d<float>(p, reinterpret_cast<const float*>(xc->data()), reinterpret_cast<const float*>(wc->data()),
                  bc ? reinterpret_cast<const float*>(bc->data()) : nullptr, reinterpret_cast<float*>(yc->data()));
  }
  copy_into(out, *yc);
}

}  // namespace mpspack::shim
