// aten::_weight_int4pack_mm on cuda: bfloat16 activations [m, k] times int4 weights [n, k] in the layout
// _convert_weight_to_int4pack gives them on NVIDIA GPUs (tinygemm's m16n8k16 B layout:
// [n / 8][k / (inner_k_tiles * 16)][32][inner_k_tiles / 2] int32), dequantised per group of `group_size` along k
// as (q - 8) * scale + zero with scale_and_zeros [k / group_size][n][2] bfloat16. Correct before fast: the weights
// are dequantised to a bfloat16 [n, k] matrix, then one cuBLAS product accumulating in float32 gives the bfloat16
// result [m, n], as torch's kernel accumulates in float32.
#include "aoti_shim_cuda.h"
#include "cuda_common.hpp"

#include <cuda_bf16.h>

#include <string>
#include <vector>

namespace mpspack::shim::cuda {
namespace {

// The uint4 of weight (n, k) in the packed layout: which lane t of n-tile n / 8 holds it, in which int32 of the
// lane's inner k-tile pair, and which nibble (the inverse of _convert_weight_to_int4pack's packing: byte j of a
// 16-wide k-tile holds k = 2j in its high nibble and k = 2j + 1 in its low one; a lane's int32 packs its four
// bytes' high nibbles in bits 0-15 and their low nibbles in bits 16-31).
__device__ int unpack_int4(const int32_t* packed, int64_t k_outer_tiles, int inner_k_tiles, int64_t n, int64_t k) {
  const int64_t n_tile = n / 8, super = int64_t(inner_k_tiles) * 16;
  const int64_t k_outer = k / super;
  const int kt = int((k % super) / 16);  // k-tile within the super tile
  const int r = int(k % 16);             // k within the tile
  const int j = r / 2;                   // byte within the tile's 8
  const int lane = 4 * int(n % 8) + (j % 4);
  const int i = (kt % 2) * 2 + j / 4;  // which of the lane's four bytes
  const int shift = (r % 2 == 0 ? 0 : 16) + 4 * i;
  const int64_t word = ((n_tile * k_outer_tiles + k_outer) * 32 + lane) * (inner_k_tiles / 2) + kt / 2;
  return int((uint32_t(packed[word]) >> shift) & 0xF);
}

__global__ void dequantize_kernel(__nv_bfloat16* w, const int32_t* packed, const __nv_bfloat16* scale_and_zeros,
                                  int64_t n, int64_t k, int64_t k_outer_tiles, int inner_k_tiles, int group_size) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n * k) return;
  const int64_t row = idx / k, col = idx % k;
  const int q = unpack_int4(packed, k_outer_tiles, inner_k_tiles, row, col);
  const int64_t g = col / group_size;
  const float scale = __bfloat162float(scale_and_zeros[(g * n + row) * 2]);
  const float zero = __bfloat162float(scale_and_zeros[(g * n + row) * 2 + 1]);
  w[idx] = __float2bfloat16(float(q - 8) * scale + zero);
}

void check_operands(const Tensor& a, const Tensor& b, int64_t group_size, const Tensor& sz) {
  const std::string op = "_weight_int4pack_mm";
  for (const Tensor* t : {&a, &b, &sz}) require_cuda(*t, op.c_str());
  if (a.dtype != int32_t(DType::bf16) || a.dim() != 2 || !a.is_contiguous())
    fail(op + ": self must be a contiguous 2-d bfloat16 tensor");
  if (b.dtype != int32_t(DType::i32) || b.dim() != 4 || !b.is_contiguous() || b.sizes[2] != 32)
    fail(op + ": mat2 must be a contiguous int32 [n / 8, k / (inner_k_tiles * 16), 32, inner_k_tiles / 2] tensor");
  const int64_t inner = b.sizes[3] * 2, k = a.sizes[1];
  if (inner != 2 && inner != 4 && inner != 8) fail(op + ": inner_k_tiles must be 2, 4 or 8");
  if (b.sizes[1] != k / (inner * 16))
    fail(op + ": mat2's k tiles do not match self's " + std::to_string(k) + " columns");
  if (group_size != 32 && group_size != 64 && group_size != 128 && group_size != 256)
    fail(op + ": qGroupSize must be 32, 64, 128 or 256, not " + std::to_string(group_size));
  const int64_t n = b.sizes[0] * 8;
  if (sz.dtype != int32_t(DType::bf16) || sz.dim() != 3 || sz.sizes[1] != n || sz.sizes[2] != 2 ||
      !sz.is_contiguous() || k % group_size != 0 || sz.sizes[0] != k / group_size)
    fail(op + ": qScaleAndZeros must be a contiguous bfloat16 [k / qGroupSize, n, 2] tensor");
}

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" AOTITorchError aoti_torch_cuda__weight_int4pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                              int64_t qGroupSize, AtenTensorHandle qScaleAndZeros,
                                                              AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    const Tensor& a = deref(self, "self");
    const Tensor& b = deref(mat2, "mat2");
    const Tensor& sz = deref(qScaleAndZeros, "qScaleAndZeros");
    check_operands(a, b, qGroupSize, sz);
    const int64_t m = a.sizes[0], k = a.sizes[1], n = b.sizes[0] * 8;
    const int32_t device = a.storage->device_index;
    TensorPtr out(new_tensor_on(kCuda, device, std::vector<int64_t>{m, n}, std::vector<int64_t>{n, 1}, a.dtype));
    if (m * n > 0 && k > 0) {
      TensorPtr w(new_tensor_on(kCuda, device, std::vector<int64_t>{n, k}, std::vector<int64_t>{k, 1}, a.dtype));
      const int threads = 256;
      const int64_t blocks = ceil_div(n * k, threads);
      dequantize_kernel<<<unsigned(blocks), threads, 0, current_stream()>>>(
          static_cast<__nv_bfloat16*>(static_cast<void*>(w->data())), reinterpret_cast<const int32_t*>(b.data()),
          reinterpret_cast<const __nv_bfloat16*>(sz.data()), n, k, b.sizes[1], int(b.sizes[3] * 2), int(qGroupSize));
      check(cudaGetLastError(), "_weight_int4pack_mm dequantisation");
      // out = a @ w^T: w seen as [k, n] through its strides.
      Tensor wt;
      wt.storage = w->storage;
      wt.dtype = w->dtype;
      wt.sizes = {k, n};
      wt.strides = {1, k};
      gemm(*out, a, wt, 1.0, 0.0, "_weight_int4pack_mm");
    } else if (m * n > 0) {
      check(cudaMemsetAsync(out->data(), 0, size_t(m * n) * 2, current_stream()), "_weight_int4pack_mm");
    }
    hand_out(ret0, std::move(out));
  });
}
