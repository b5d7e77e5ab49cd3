// aoti_torch_cuda_convolution: 1-D and 2-D, not transposed. im2col on the GPU, then per group one batched
// cuBLAS product over the images; the bias enters as the product's beta term (the output first holds the
// bias broadcast). The shape rules are the CPU shim's (conv_shape.hpp), so both answer alike.
#include "aoti_shim_cuda.h"
#include "conv_shape.hpp"
#include "cuda_common.hpp"

#include <string>

namespace mpspack::shim::cuda {
namespace {

// col[n][(c*KH + kh)*KW + kw][oh*OW + ow] = x[n][c0 + c][oh*sh - ph + kh*dh][ow*sw - pw + kw*dw], 0 outside.
// The numbers of a ConvShape, as a kernel argument (trivially copyable).
struct Geometry {
  int64_t C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw;
};

// 1-D convolutions as 2-D ones with H = KH = 1.
Geometry geometry_of(const ConvShape& c) {
  const int h = c.spatial == 2 ? 0 : -1, w = c.spatial - 1;  // index of the H and W dims; -1: absent
  auto at = [](const std::array<int64_t, 3>& v, int i, int64_t absent) { return i < 0 ? absent : v[i]; };
  return {c.C, at(c.in, h, 1), c.in[w], at(c.kernel, h, 1), c.kernel[w], at(c.out, h, 1), c.out[w],
          at(c.stride, h, 1), c.stride[w], at(c.pad, h, 0), c.pad[w], at(c.dilation, h, 1), c.dilation[w]};
}

template <class T>
__global__ void im2col_kernel(const T* x, T* col, Geometry s, int64_t c0, int64_t Cg, int64_t total) {
  const int64_t L = s.OH * s.OW, rows = Cg * s.KH * s.KW;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t l = i % L, r = (i / L) % rows, n = i / (L * rows);
    const int64_t ow = l % s.OW, oh = l / s.OW;
    const int64_t kw = r % s.KW, kh = (r / s.KW) % s.KH, c = r / (s.KW * s.KH);
    const int64_t ih = oh * s.sh - s.ph + kh * s.dh, iw = ow * s.sw - s.pw + kw * s.dw;
    T v{};
    if (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W) v = x[((n * s.C + c0 + c) * s.H + ih) * s.W + iw];
    col[i] = v;
  }
}

void im2col(const Tensor& x, Tensor& col, const ConvShape& s, int64_t c0, int64_t Cg) {
  const int64_t total = col.numel();
  if (total == 0) return;
  const int threads = 256;
  const int blocks = int(std::min<int64_t>(ceil_div(total, threads), 65535));
  const Geometry k = geometry_of(s);
  cudaStream_t st = current_stream();
  switch (x.itemsize()) {
    case 2: im2col_kernel<<<blocks, threads, 0, st>>>((const uint16_t*)x.data(), (uint16_t*)col.data(), k, c0, Cg, total); break;
    case 4: im2col_kernel<<<blocks, threads, 0, st>>>((const uint32_t*)x.data(), (uint32_t*)col.data(), k, c0, Cg, total); break;
    case 8: im2col_kernel<<<blocks, threads, 0, st>>>((const uint64_t*)x.data(), (uint64_t*)col.data(), k, c0, Cg, total); break;
    default: fail("convolution: unsupported element size");
  }
  check(cudaGetLastError(), "im2col kernel launch");
}

// A view of `base`'s storage with the given geometry.
Tensor view(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  Tensor t;
  t.storage = base.storage;
  t.dtype = base.dtype;
  t.storage_offset = offset;
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  return t;
}

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" AOTITorchError aoti_torch_cuda_convolution(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride,
    int64_t stride_len_, const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,
    int32_t transposed, const int64_t* output_padding, int64_t output_padding_len_, int64_t groups,
    AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    const Tensor& x = deref(input, "input");
    const Tensor& w = deref(weight, "weight");
    const Tensor* b = (bias != nullptr && *bias != nullptr) ? *bias : nullptr;
    if (ret0 == nullptr) fail("ret0 is null");
    require_cuda(x, "convolution");
    require_cuda(w, "convolution");
    if (b) require_cuda(*b, "convolution");
    const ConvShape s = convolution_shape(x, w, b, stride, stride_len_, padding, padding_len_, dilation,
                                          dilation_len_, transposed, output_padding, output_padding_len_, groups);
    if (s.spatial > 2 || s.transposed) fail("convolution: not supported by the mpspack CUDA shim: " + s.describe());
    const Geometry geo = geometry_of(s);
    const int64_t Cg = s.C / s.groups, Og = s.O / s.groups, rows = Cg * geo.KH * geo.KW, L = geo.OH * geo.OW;
    TensorPtr xc = contiguous(x), wc = contiguous(w);
    TensorPtr y(new_tensor_on(kCuda, x.storage->device_index, s.out_sizes, contiguous_strides(s.out_sizes), x.dtype));
    // y viewed as [N, O, L]
    const Tensor y3 = view(*y, {s.N, s.O, L}, {s.O * L, L, 1}, 0);
    double beta = 0;
    if (b) {  // y <- bias broadcast over images and positions
      Tensor yb = y3;
      const Tensor bias3 = view(*b, {s.N, s.O, L}, {0, b->strides[0], 0}, b->storage_offset);
      copy_any(yb, bias3);
      beta = 1;
    }
    TensorPtr col(new_tensor_on(kCuda, x.storage->device_index, std::vector<int64_t>{s.N, rows, L},
                                std::vector<int64_t>{rows * L, L, 1}, x.dtype));
    for (int64_t g = 0; g < s.groups; ++g) {
      im2col(*xc, *col, s, g * Cg, Cg);
      // y[n, g*Og:(g+1)*Og, :] (+)= W_g [Og, rows] @ col[n] [rows, L], W_g broadcast over n (batch stride 0)
      Tensor yg = view(*y, {s.N, Og, L}, {s.O * L, L, 1}, g * Og * L);
      const Tensor wg = view(*wc, {s.N, Og, rows}, {0, rows, 1}, wc->storage_offset + g * Og * rows);
      gemm(yg, wg, *col, 1.0, beta, "convolution");
    }
    if (s.out_strides == contiguous_strides(s.out_sizes)) {
      *ret0 = y.release();
      return;
    }
    TensorPtr out(new_tensor_on(kCuda, x.storage->device_index, s.out_sizes, s.out_strides, x.dtype));
    copy_any(*out, *y);
    *ret0 = out.release();
  });
}
