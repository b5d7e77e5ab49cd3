// aten::cumsum on cuda tensors, correct before fast: one thread per line along dim walks it in order. The input
// is made contiguous first (same dtype); each element is cast to the result dtype (aten casts before it scans)
// and added to a running value in torch's CUDA accumulator type (float for float16, bfloat16 and float32,
// double for float64, int64 for integers and bool), which is rounded to the result dtype at each element.
#include "aoti_shim_cuda.h"
#include "cuda_common.hpp"
#include "runtime/shim/scan.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

namespace mpspack::shim::cuda {
namespace {

// Element i of an array of c10 dtype `dtype`, as A.
template <class A>
__device__ A load_as(const void* p, int64_t i, int32_t dtype) {
  switch (dtype) {
    case 0: return A(static_cast<const uint8_t*>(p)[i]);
    case 1: return A(static_cast<const int8_t*>(p)[i]);
    case 2: return A(static_cast<const int16_t*>(p)[i]);
    case 3: return A(static_cast<const int32_t*>(p)[i]);
    case 4: return A(static_cast<const int64_t*>(p)[i]);
    case 5: return A(__half2float(static_cast<const __half*>(p)[i]));
    case 6: return A(static_cast<const float*>(p)[i]);
    case 7: return A(static_cast<const double*>(p)[i]);
    case 11: return A(static_cast<const bool*>(p)[i] ? 1 : 0);
    case 15: return A(__bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]));
  }
  return A(0);  // not reached: the host checked the dtypes
}

template <class A>
__device__ void store_as(void* p, int64_t i, int32_t dtype, A v) {
  switch (dtype) {
    case 0: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return;
    case 1: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return;
    case 2: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); return;
    case 3: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case 4: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); return;
    case 5: static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v)); return;
    case 6: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case 7: static_cast<double*>(p)[i] = static_cast<double>(v); return;
    case 11: static_cast<bool*>(p)[i] = v != A(0); return;
    case 15: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v)); return;
  }
}

// Integer running values wrap around as torch's int64 arithmetic does (signed overflow is undefined).
template <class A>
__device__ A add(A acc, A v) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<unsigned long long>(acc) + static_cast<unsigned long long>(v));
  } else {
    return acc + v;
  }
}

template <class A>
__global__ void cumsum_lines_kernel(const void* in, int32_t in_dtype, void* out, int32_t out_dtype, ScanLines l) {
  const int64_t lines = l.outer * l.inner;
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < lines; t += int64_t(gridDim.x) * blockDim.x) {
    int64_t i = (t / l.inner) * l.length * l.inner + t % l.inner;
    A acc = A(0);
    for (int64_t k = 0; k < l.length; ++k, i += l.inner) {
      store_as<A>(out, i, out_dtype, load_as<A>(in, i, in_dtype));  // the cast to the result dtype
      acc = add(acc, load_as<A>(out, i, out_dtype));
      store_as<A>(out, i, out_dtype, acc);
    }
  }
}

template <class A>
void launch_cumsum(const Tensor& in, Tensor& out, ScanLines l) {
  const int threads = 256;
  const int blocks = int(std::clamp<int64_t>(ceil_div(l.outer * l.inner, threads), 1, 65535));
  cumsum_lines_kernel<A><<<blocks, threads, 0, current_stream()>>>(in.data(), in.dtype, out.data(), out.dtype, l);
  check(cudaGetLastError(), "cumsum kernel launch");
}

Tensor* cumsum(const Tensor& self, int64_t dim, const int32_t* dtype) {
  require_cuda(self, "cumsum");
  const int64_t d = wrap_scan_dim(self, dim, "cumsum");
  TensorPtr out = empty_contiguous_like(self, cumulative_result_dtype(self.dtype, dtype));
  if (out->numel() == 0) return out.release();
  TensorPtr in = contiguous(self);
  const ScanLines l = scan_lines(out->sizes, d);
  switch (static_cast<DType>(out->dtype)) {
    case DType::f64: launch_cumsum<double>(*in, *out, l); break;
    case DType::f32:
    case DType::f16:
    case DType::bf16: launch_cumsum<float>(*in, *out, l); break;
    default: launch_cumsum<long long>(*in, *out, l); break;
  }
  return out.release();
}

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;

extern "C" AOTITorchError aoti_torch_cuda_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                 AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("ret0 is null");
    *ret0 = cuda::cumsum(deref(self, "self"), dim, dtype);
  });
}
