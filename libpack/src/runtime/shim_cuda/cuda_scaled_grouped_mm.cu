// aoti_torch_cuda__scaled_grouped_mm: torch's row-wise scaled float8 grouped product (a mixture of experts' layers),
// out[i, j] = bfloat16(scale_a[i] * scale_b[j] * sum_k a[i, k] b[k, j]) in each group, accumulated in float32 as
// torch's CUTLASS kernel does (the float8 values are exact in float32, so only the order of the sums differs).
// The groups: 2-d x 3-d (offs ends the groups of a's rows, b[g] each), 3-d x 2-d (offs ends the groups of b's
// columns), 2-d x 2-d (offs ends the groups of the shared K; out [G, M, N]) and 3-d x 3-d (a batched product).
// The checks and the output's shape and strides are torch's (GroupedBlas.cpp, GroupedMMUtils.h); the group ends
// are read on the host (a synchronisation, as torch's own fallback for the unscaled grouped product does), and
// each group is one launch of a tiled kernel. The MXFP8 recipe (float8_e8m0fnu scales) is refused.
#include "aoti_shim_cuda.h"
#include "cuda_common.hpp"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <string>
#include <vector>

namespace mpspack::shim::cuda {
namespace {

constexpr const char* kOp = "_scaled_grouped_mm";
constexpr int kTile = 16;
constexpr int32_t kFloat8E8m0fnu = 44;  // c10::ScalarType::Float8_e8m0fnu, the MXFP8 recipe's scales

// One group's product, in elements: rows M, columns N, depth K.
struct Group {
  const uint8_t* a;
  int64_t a_row, a_k;
  const uint8_t* b;
  int64_t b_k, b_col;
  const float* scale_a;  // one per row, stride 1
  const float* scale_b;  // one per column, stride 1
  __nv_bfloat16* out;
  int64_t out_row, out_col;
  int64_t M, N, K;
};

__device__ inline float e4m3(uint8_t bits) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(bits), __NV_E4M3);
  return __half2float(__half(h));
}

// A 16 x 16 tile of out per block (threadIdx.x the column, .y the row), K in steps of 16 through shared memory.
// Consecutive threads load consecutive K of a row of a and of a column of b (torch's layouts: a row-major, b
// column-major), so that a warp's loads are contiguous bytes; b's tile is stored transposed ([k][column]).
__global__ void grouped_tile_kernel(Group g) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile + 1];  // padded: the transposed stores would hit one bank otherwise
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int64_t row = int64_t(blockIdx.x) * kTile + ty, col = int64_t(blockIdx.y) * kTile + tx;
  const int64_t load_col = int64_t(blockIdx.y) * kTile + ty;
  float acc = 0.f;
  for (int64_t k0 = 0; k0 < g.K; k0 += kTile) {
    const int64_t kk = k0 + tx;
    as[ty][tx] = row < g.M && kk < g.K ? e4m3(g.a[row * g.a_row + kk * g.a_k]) : 0.f;
    bs[tx][ty] = kk < g.K && load_col < g.N ? e4m3(g.b[kk * g.b_k + load_col * g.b_col]) : 0.f;
    __syncthreads();
    for (int t = 0; t < kTile; ++t) acc = fmaf(as[ty][t], bs[t][tx], acc);
    __syncthreads();
  }
  if (row < g.M && col < g.N)
    g.out[row * g.out_row + col * g.out_col] = __float2bfloat16(acc * g.scale_a[row] * g.scale_b[col]);
}

void launch(const Group& g) {
  if (g.M == 0 || g.N == 0) return;
  if (ceil_div(g.N, kTile) > 65535) fail(std::string(kOp) + ": more than 1048560 output columns in a group");
  const dim3 grid(unsigned(ceil_div(g.M, kTile)), unsigned(ceil_div(g.N, kTile)));
  grouped_tile_kernel<<<grid, dim3(kTile, kTile), 0, current_stream()>>>(g);
  check(cudaGetLastError(), "_scaled_grouped_mm kernel launch");
}

std::string shape_text(const Tensor& t) {
  std::string s = "[";
  for (std::size_t i = 0; i < t.sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(t.sizes[i]);
  return s + "]";
}

// torch's check_valid_strides_and_return_transposed: true when the last two dims are column-major, false when
// row-major, an error otherwise (the data pointer's alignment, which torch's kernel needs, is not: this one reads
// bytes).
bool transposed(const Tensor& m) {
  const std::size_t e = m.sizes.size() - 1;
  const int64_t alignment = 16;  // elements of one byte
  if (m.strides[e - 1] == 1 && m.strides[e] >= std::max<int64_t>(1, m.sizes[e - 1])) {
    if (m.strides[e] % alignment != 0) fail(std::string(kOp) + ": strides should be multiple of 16 bytes");
    return true;
  }
  if (m.strides[e] == 1 && m.strides[e - 1] >= std::max<int64_t>(1, m.sizes[e])) {
    if (m.strides[e - 1] % alignment != 0) fail(std::string(kOp) + ": strides should be multiple of 16 bytes");
    return false;
  }
  std::string st;
  for (std::size_t i = 0; i < m.strides.size(); ++i) st += (i ? ", " : "") + std::to_string(m.strides[i]);
  fail(std::string(kOp) + ": Invalid strides/sizes, got [" + st + "] for strides and " + shape_text(m) + " for sizes");
}

// torch's _check_scales_fp8_rowwise: a 2-d mat's scale is 1-d, contiguous, mat.size(dim) * multiplier long; a 3-d
// mat's is [G, mat.size(1 + dim)] with unit stride in its last dim.
void check_scale(const Tensor& mat, const Tensor& scale, int dim, int arg, int64_t multiplier) {
  const std::string at = " for arg " + std::to_string(arg);
  if (mat.dim() == 2) {
    if (scale.dim() != 1)
      fail(std::string(kOp) + ": scale must be a 1D tensor, but got " + std::to_string(scale.dim()) + "D, arg " +
           std::to_string(arg));
    if (!scale.is_contiguous()) fail(std::string(kOp) + ": scale must be contiguous" + at);
    if (scale.sizes[0] != mat.sizes[std::size_t(dim)] * multiplier)
      fail(std::string(kOp) + ": scale must have the same length as mat" + at);
  } else {
    if (scale.dim() != 2)
      fail(std::string(kOp) + ": scale must be a 2D tensor, but got " + std::to_string(scale.dim()) + "D" + at);
    if (scale.strides[1] != 1 && scale.sizes[1] > 1)
      fail(std::string(kOp) + ": scale must be contiguous in the last dimension" + at);
    if (scale.sizes[0] != mat.sizes[0])
      fail(std::string(kOp) + ": scale must have the same batch dimension as mat" + at);
    if (scale.sizes[1] != mat.sizes[std::size_t(1 + dim)])
      fail(std::string(kOp) + ": scale must have the same first dimension as mat" + at);
  }
}

// The group ends of offs, checked: non-decreasing, within `extent`.
std::vector<int64_t> group_ends(const Tensor& offs, int64_t extent) {
  const std::vector<int32_t> raw = int32_values(offs, std::string(kOp) + ": offs");
  std::vector<int64_t> ends(raw.begin(), raw.end());
  int64_t previous = 0;
  for (int64_t e : ends) {
    if (e < previous || e > extent)
      fail(std::string(kOp) + ": offs must be non-decreasing group ends within " + std::to_string(extent));
    previous = e;
  }
  return ends;
}

// The operands checked as torch checks them (its messages); the output's sizes.
std::vector<int64_t> checked_output_sizes(const Tensor& a, const Tensor& b, const Tensor& sa, const Tensor& sb,
                                          const Tensor* of, int32_t out_dtype) {
  const std::string op = kOp;
  for (const Tensor* t : {&a, &b, &sa, &sb}) require_cuda(*t, kOp);
  if (a.dim() != 2 && a.dim() != 3) fail(op + ": mat_a has to be 2 or 3d");
  if (b.dim() != 2 && b.dim() != 3) fail(op + ": mat_b has to be 2 or 3d");
  if (transposed(a)) fail(op + ": Expected mat1 to not be transposed");
  if (!transposed(b)) fail(op + ": Expected mat2 to be transposed");
  const bool a2 = a.dim() == 2, b2 = b.dim() == 2;
  const int64_t a_k = a.sizes.back(), b_k = b.sizes[b.sizes.size() - 2], b_n = b.sizes.back();
  if ((!a2 || !b2) && a_k != b_k) fail(op + ": contraction dimension of mat_a and mat_b must match");
  if (a_k % 16 != 0)
    fail(op + ": Expected trailing dimension of mat_a to be divisible by 16 but got mat1 shape: (" + shape_text(a) +
         ").");
  if (b_k % 16 != 0 || b_n % 16 != 0)
    fail(op + ": Expected mat_b shape to be divisible by 16 but got mat_b shape: (" + shape_text(b) + ").");
  if ((of != nullptr) != (a2 || b2)) fail(op + ": Have to provide offsets if there is a 2d matrix");
  if (of != nullptr) {
    require_cuda(*of, kOp);
    if (of->dim() != 1) fail(op + ": offs has to be 1D");
    if (of->dtype != int32_t(DType::i32)) fail(op + ": Offsets have to be int32");
  }
  if (sa.dtype == kFloat8E8m0fnu || sb.dtype == kFloat8E8m0fnu)
    fail(op + ": MXFP8 scales (float8_e8m0fnu) are not supported");
  if (sa.dtype != int32_t(DType::f32) || sb.dtype != int32_t(DType::f32))
    fail(op + ": For FP8 tensorwise and rowwise, both scales must both be float32 tensors. For MXFP8, scales must "
              "both be float8_e8m0fnu tensors.");
  const int64_t multiplier = a2 && b2 ? of->sizes[0] : 1;
  check_scale(a, sa, 0, 0, multiplier);
  check_scale(b, sb, 1, 1, multiplier);
  if (out_dtype != int32_t(DType::bf16))
    fail(op + ": Only bf16 high precision output types are supported for grouped gemm");
  if (a.dtype != mpspack::dtype::float8_e4m3fn)
    fail(op + ": Expected mat_a to be Float8_e4m3 matrix got " + dtype_name(a.dtype));
  if (b.dtype != mpspack::dtype::float8_e4m3fn)
    fail(op + ": Expected mat_a to be Float8_e4m3 matrix got " + dtype_name(b.dtype));
  if (a2 && b2 && b_k != a_k)
    fail(op + ": the K of mat_a (" + std::to_string(a_k) + ") and mat_b (" + std::to_string(b_k) + ") differ");
  const int64_t groups = a2 && b2 ? of->sizes[0] : a2 ? b.sizes[0] : a.sizes[0];
  if (groups >= 1024) fail(op + ": Can't process more than 1024 groups");
  // torch's create_grouped_gemm_output_tensor
  if (a2 && b2) return {of->sizes[0], a.sizes[0], b_n};
  if (a2 || b2) {
    if (of->sizes[0] != (a2 ? b.sizes[0] : a.sizes[0])) fail(op + ": matrix batch sizes have to match");
    return {a2 ? a.sizes[0] : a.sizes[1], b_n};
  }
  if (a.sizes[0] != b.sizes[0]) fail(op + ": batched dimension has to match");
  return {a.sizes[0], a.sizes[1], b_n};
}

// Each group's product into out (bfloat16, row-major rows): the groups as the operands' ranks say.
void run_groups(const Tensor& a, const Tensor& b, const Tensor& sa, const Tensor& sb, const Tensor* of, Tensor& out) {
  const bool a2 = a.dim() == 2, b2 = b.dim() == 2;
  const int64_t a_k = a.sizes.back(), b_n = b.sizes.back();
  const int64_t groups = a2 && b2 ? of->sizes[0] : a2 ? b.sizes[0] : a.sizes[0];
  const auto* pa = reinterpret_cast<const uint8_t*>(a.data());
  const auto* pb = reinterpret_cast<const uint8_t*>(b.data());
  const auto* psa = reinterpret_cast<const float*>(sa.data());
  const auto* psb = reinterpret_cast<const float*>(sb.data());
  auto* po = reinterpret_cast<__nv_bfloat16*>(out.data());
  const std::size_t ar = a.sizes.size() - 2, br = b.sizes.size() - 2;  // the row dims of a and b
  const int64_t out_group = out.dim() == 3 ? out.strides[0] : 0;
  Group g{};
  g.a_row = a.strides[ar], g.a_k = a.strides[ar + 1], g.b_k = b.strides[br], g.b_col = b.strides[br + 1];
  g.out_row = out.strides[out.sizes.size() - 2], g.out_col = 1;
  // The group ends along the dim the groups cut: a's rows (2-d x 3-d), b's columns (3-d x 2-d) or K (2-d x 2-d).
  const int64_t extent = a2 && b2 ? a_k : a2 ? a.sizes[0] : b_n;
  const std::vector<int64_t> ends = of ? group_ends(*of, extent) : std::vector<int64_t>{};
  int64_t start = 0;
  for (int64_t i = 0; i < groups; ++i) {
    const int64_t end = of ? ends[std::size_t(i)] : 0;
    g.M = a2 ? a.sizes[0] : a.sizes[1], g.N = b_n, g.K = a_k;
    if (a2 && !b2) {  // rows [start, end) of a and out, b[i]
      g.a = pa + start * a.strides[0], g.b = pb + i * b.strides[0];
      g.scale_a = psa + start, g.scale_b = psb + i * sb.strides[0];
      g.out = po + start * out.strides[0], g.M = end - start;
    } else if (!a2 && b2) {  // a[i], columns [start, end) of b and out
      g.a = pa + i * a.strides[0], g.b = pb + start * b.strides[1];
      g.scale_a = psa + i * sa.strides[0], g.scale_b = psb + start;
      g.out = po + start, g.N = end - start;
    } else if (a2 && b2) {  // K [start, end) of both, out[i]; the scales of group i follow those of group i - 1
      g.a = pa + start * a.strides[1], g.b = pb + start * b.strides[0];
      g.scale_a = psa + i * a.sizes[0], g.scale_b = psb + i * b_n;
      g.out = po + i * out_group, g.K = end - start;
    } else {  // a batched product
      g.a = pa + i * a.strides[0], g.b = pb + i * b.strides[0];
      g.scale_a = psa + i * sa.strides[0], g.scale_b = psb + i * sb.strides[0];
      g.out = po + i * out_group;
    }
    launch(g);
    start = end;
  }
}

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" AOTITorchError aoti_torch_cuda__scaled_grouped_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                             AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                                                             AtenTensorHandle* offs, AtenTensorHandle* bias,
                                                             AtenTensorHandle* scale_result, int32_t* out_dtype,
                                                             int32_t use_fast_accum, AtenTensorHandle* ret0) {
  (void)use_fast_accum;  // float32 accumulation either way (torch's fast accumulation only trades precision)
  return guarded(__func__, [&] {
    const std::string op = kOp;
    const Tensor& a = deref(self, "self");
    const Tensor& b = deref(mat2, "mat2");
    const Tensor& sa = deref(scale_a, "scale_a");
    const Tensor& sb = deref(scale_b, "scale_b");
    const Tensor* of = (offs != nullptr && *offs != nullptr) ? &deref(*offs, "offs") : nullptr;
    if (ret0 == nullptr) fail(op + ": ret0 is null");
    if (bias != nullptr && *bias != nullptr) fail(op + ": Bias not supported yet");
    if (scale_result != nullptr && *scale_result != nullptr) fail(op + ": Scale result not supported yet");
    const std::vector<int64_t> sizes =
        checked_output_sizes(a, b, sa, sb, of, out_dtype ? *out_dtype : int32_t(DType::bf16));
    // torch's output strides: the last dim's stride padded to 16 bytes (8 bfloat16 values).
    const int64_t padded = ceil_div(sizes.back(), 8) * 8;
    const std::vector<int64_t> strides =
        sizes.size() == 2 ? std::vector<int64_t>{padded, 1} : std::vector<int64_t>{sizes[1] * padded, padded, 1};
    TensorPtr out(new_tensor_on(kCuda, a.storage->device_index, sizes, strides, int32_t(DType::bf16)));
    if (out->numel() > 0)  // rows (or columns) past the last group end stay zero
      check(cudaMemsetAsync(out->data(), 0, storage_nbytes(out->sizes, out->strides, 2), current_stream()), kOp);
    run_groups(a, b, sa, sb, of, *out);
    hand_out(ret0, std::move(out));
  });
}
