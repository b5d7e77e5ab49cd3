// Depthwise 3-D convolution, one thread per output element (cuda_depthwise3d.hpp). Products are accumulated in
// float (double for f64), torch's accumulate type, and rounded once into the output.
#include "cuda_depthwise3d.hpp"

#include "cuda_common.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <string>

namespace mpspack::shim::cuda {
namespace {

struct Geometry {
  int64_t n_out;              // N * O * OD * OH * OW
  int64_t C, O, per_channel;  // per_channel: output channels per input channel (O / C)
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
};

template <class T, class Acc>
__global__ void depthwise3d_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, Geometry g) {
  const int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2], OD = g.out[0], OH = g.out[1], OW = g.out[2];
  const int64_t KD = g.k[0], KH = g.k[1], KW = g.k[2];
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < g.n_out; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t t = i;
    const int64_t ow = t % OW;
    t /= OW;
    const int64_t oh = t % OH;
    t /= OH;
    const int64_t od = t % OD;
    t /= OD;
    const int64_t o = t % g.O, n = t / g.O;
    const T* xc = x + (n * g.C + o / g.per_channel) * ID * IH * IW;
    const T* wo = w + o * KD * KH * KW;
    Acc acc = 0;
    for (int64_t kd = 0; kd < KD; ++kd) {
      const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
      if (id < 0 || id >= ID) continue;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
        if (ih < 0 || ih >= IH) continue;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
          if (iw < 0 || iw >= IW) continue;
          acc += Acc(xc[(id * IH + ih) * IW + iw]) * Acc(wo[(kd * KH + kh) * KW + kw]);
        }
      }
    }
    y[i] = T(acc);
  }
}

template <class T, class Acc>
void launch(const Geometry& g, const Tensor& x, const Tensor& w, Tensor& y) {
  const int threads = 256;
  const int blocks = int(std::min<int64_t>(ceil_div(g.n_out, threads), 65535));
  depthwise3d_kernel<T, Acc><<<blocks, threads, 0, current_stream()>>>(
      reinterpret_cast<const T*>(x.data()), reinterpret_cast<const T*>(w.data()), reinterpret_cast<T*>(y.data()), g);
  check(cudaGetLastError(), "convolution: depthwise 3-D kernel launch");
}

}  // namespace

bool depthwise3d_applies(const ConvShape& s) {
  return !s.transposed && s.spatial == 3 && !s.channels_last && s.groups == s.C && s.C > 0 && s.O % s.C == 0;
}

void run_depthwise3d(const ConvShape& s, const Tensor& x, const Tensor& w, Tensor& y) {
  Geometry g{y.numel(), s.C, s.O, s.O / s.C, {}, {}, {}, {}, {}, {}};
  for (int d = 0; d < 3; ++d) {
    const auto i = std::size_t(d);
    g.in[d] = s.in[i], g.out[d] = s.out[i], g.k[d] = s.kernel[i];
    g.stride[d] = s.stride[i], g.pad[d] = s.pad[i], g.dil[d] = s.dilation[i];
  }
  switch (static_cast<DType>(y.dtype)) {
    case DType::f32: return launch<float, float>(g, x, w, y);
    case DType::f64: return launch<double, double>(g, x, w, y);
    case DType::f16: return launch<__half, float>(g, x, w, y);
    case DType::bf16: return launch<__nv_bfloat16, float>(g, x, w, y);
    default: fail(std::string("convolution: dtype ") + dtype_name(y.dtype) + " is not supported on cuda");
  }
}

}  // namespace mpspack::shim::cuda
