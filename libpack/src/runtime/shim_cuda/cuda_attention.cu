// aoti_torch_cuda__scaled_dot_product_{efficient,cudnn}_attention. Two ways, the same results at each dtype's
// tolerance:
// - fused (heads of up to 128 values and short sequences, as the zoo's transformers have): one kernel, one warp
//   per query row and eight rows a block; the block's threads load 32 keys and values at a time into shared
//   memory, each lane scores one key, and the row keeps a running maximum and sum (online softmax) and its output
//   in registers. One launch and no scores in memory: an uncaptured run of a small transformer is bound by the
//   host's time per launch, and this op costs three launches and a scores buffer the other way
//   (docs/PERFORMANCE.md, "CUDA attention").
// - blocked (larger heads, long sequences, or MPSPACK_CUDA_ATTENTION=blocked): torch's math path on cuBLAS: for
//   each step, the scores Q K^T * scale in float32 (one product batched over the heads), the bias and causal mask
//   added and a numerically safe softmax taken row by row (one thread block per row, max subtracted), then P V (a
//   second batched product) into the output. A step's scores take at most 256 MiB: a batch of images whose scores
//   fit runs several whole images a step (products batched over their heads too: three launches a step, not three
//   an image), and a long sequence runs one image's query rows in several blocks, so memory stays bounded.
// The outputs have the shapes and strides torch's kernel returns (its meta function), which the compiled model
// relies on.
#include "aoti_shim_cuda.h"
#include "cuda_common.hpp"
#include "runtime/tuning/tuning.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>

namespace mpspack::shim::cuda {
namespace {

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ inline T from_float(float v);
template <>
__device__ inline float from_float<float>(float v) {
  return v;
}
template <>
__device__ inline __half from_float<__half>(float v) {
  return __float2half(v);
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

struct Strides4 {
  int64_t b, h, l, e;
};

struct Problem {
  int64_t B, H, L, S, E, Ev;
  Strides4 q, k, v, bias, out;
  int64_t lse_b, lse_h;  // logsumexp [B, H, Lpad] strides; unused when lse is null
  float scale;
  bool causal;
  int64_t causal_offset;  // causal: key j is masked for query i when j > i + causal_offset (0: top-left aligned)
  bool windowed;          // a sliding window: key j is also masked for query i when j < i + window_lo
  int64_t window_lo;
  float masked_lse;  // the logsumexp of a row whose keys are all masked: -inf, or +inf as flash attention has it
};

// Whether key j is hidden from query i by the causal mask or the window.
__device__ inline bool masked(const Problem& p, int64_t i, int64_t j) {
  return (p.causal && j > i + p.causal_offset) || (p.windowed && j < i + p.window_lo);
}

constexpr int kThreads = 128;

__device__ float block_reduce(float v, float* scratch, bool is_max) {
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) r = is_max ? fmaxf(r, scratch[w]) : r + scratch[w];
  return r;
}

// The bytes of float32 scores one block of query rows may take: 256 MiB, or MPSPACK_ATTENTION_SCORE_BYTES (read at
// each call, so that a test can make blocks small with a ScopedTuning).
int64_t score_budget_bytes() { return tuning().attention_score_bytes; }

// One row of scores [S] per thread block, over `images` images from image b0 and `rows` query rows from l0 of each:
// block x is query row i = l0 + x % rows of head h = pair % H of image b0 + pair / H, pair = x / rows, its scores at
// pair * pair_stride + (x % rows) * S (already scaled). Adds the bias and the causal mask, takes the softmax, writes
// it to probs (at the same offset: probs may be scores itself when T is float) and the row's logsumexp.
template <class T>
__global__ void softmax_rows_kernel(float* scores, T* probs, const T* bias, float* lse, Problem p, int64_t b0,
                                    int64_t l0, int64_t rows, int64_t pair_stride) {
  __shared__ float scratch[kThreads / 32];
  const int64_t pair = int64_t(blockIdx.x) / rows, r = int64_t(blockIdx.x) % rows;
  const int64_t b = b0 + pair / p.H, h = pair % p.H, i = l0 + r;
  float* row = scores + pair * pair_stride + r * p.S;
  T* out = probs + pair * pair_stride + r * p.S;
  float local_max = -INFINITY;
  for (int64_t j = threadIdx.x; j < p.S; j += blockDim.x) {
    float s = row[j];
    if (masked(p, i, j)) s = -INFINITY;
    else if (bias) s += to_float(bias[b * p.bias.b + h * p.bias.h + i * p.bias.l + j * p.bias.e]);
    row[j] = s;
    local_max = fmaxf(local_max, s);
  }
  const float row_max = block_reduce(local_max, scratch, true);
  float local_sum = 0.f;
  for (int64_t j = threadIdx.x; j < p.S; j += blockDim.x) {
    const float e = row_max == -INFINITY ? 0.f : __expf(row[j] - row_max);
    row[j] = e;
    local_sum += e;
  }
  const float sum = block_reduce(local_sum, scratch, false);
  const float inv = sum > 0.f ? 1.f / sum : 0.f;  // a fully masked row gives zeros, not NaN
  for (int64_t j = threadIdx.x; j < p.S; j += blockDim.x) out[j] = from_float<T>(row[j] * inv);
  if (lse && threadIdx.x == 0) lse[b * p.lse_b + h * p.lse_h + i] = sum > 0.f ? row_max + logf(sum) : p.masked_lse;
}

template <class T>
void launch_softmax_rows(Tensor& scores, Tensor& probs, const Tensor* bias, float* lse, const Problem& p, int64_t b0,
                         int64_t images, int64_t l0, int64_t rows, int64_t pair_stride) {
  softmax_rows_kernel<T><<<unsigned(images * p.H * rows), kThreads, 0, current_stream()>>>(
      reinterpret_cast<float*>(scores.data()), reinterpret_cast<T*>(probs.data()),
      bias ? reinterpret_cast<const T*>(bias->data()) : nullptr, lse, p, b0, l0, rows, pair_stride);
  check(cudaGetLastError(), "attention softmax kernel launch");
}

// The softmax of `images` images' blocks of scores (softmax_rows_kernel), in q's dtype.
void softmax_rows(Tensor& scores, Tensor& probs, const Tensor* bias, float* lse, const Problem& p, int32_t dtype,
                  int64_t b0, int64_t images, int64_t l0, int64_t rows, int64_t pair_stride) {
  switch (static_cast<DType>(dtype)) {
    case DType::f32: return launch_softmax_rows<float>(scores, probs, bias, lse, p, b0, images, l0, rows, pair_stride);
    case DType::f16: return launch_softmax_rows<__half>(scores, probs, bias, lse, p, b0, images, l0, rows, pair_stride);
    case DType::bf16:
      return launch_softmax_rows<__nv_bfloat16>(scores, probs, bias, lse, p, b0, images, l0, rows, pair_stride);
    default:
      fail(std::string("scaled_dot_product_efficient_attention: dtype ") + dtype_name(dtype) + " is not supported");
  }
}

constexpr int kFusedRows = 8;   // query rows (warps) per thread block
constexpr int kFusedKeys = 32;  // keys per tile: one per lane
constexpr int64_t kFusedMaxHead = 128;

__device__ inline float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ inline float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Block (blockIdx.x, head blockIdx.y, image blockIdx.z): query rows [8 x, 8 x + 8), warp w on row 8 x + w.
// Shared memory: the tile's keys [32][E + 1] (padded: lane j reads row j, and a stride of E would put every lane
// on one bank), its values [32][Ev], the block's query rows [8][E], pre-scaled. PER_LANE = ceil(Ev / 32) output
// values a lane. Scores follow torch: scale * q.k + bias, -inf above the diagonal when causal (top-left aligned).
// Long: one device kernel; the tile loop's online-softmax state (top, sum, acc[PER_LANE]) lives in registers across it.
template <class T, int PER_LANE>
__global__ void fused_attention_kernel(const T* q, const T* k, const T* v, const T* bias, T* out, float* lse,
                                       Problem p) {
  extern __shared__ float smem[];
  const int E = int(p.E), Ev = int(p.Ev);
  float* keys = smem;
  float* values = keys + kFusedKeys * (E + 1);
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  float* qrow = values + kFusedKeys * Ev + warp * E;
  const int64_t b = blockIdx.z, h = blockIdx.y, first = int64_t(blockIdx.x) * kFusedRows, i = first + warp;
  const bool row_ok = i < p.L;
  for (int e = lane; e < E; e += 32)
    qrow[e] = row_ok ? to_float(q[b * p.q.b + h * p.q.h + i * p.q.l + e * p.q.e]) * p.scale : 0.f;
  const int64_t last = (first + kFusedRows < p.L ? first + kFusedRows : p.L) - 1;
  const int64_t causal_end = last + 1 + p.causal_offset;
  const int64_t keys_end = p.causal && causal_end < p.S ? (causal_end > 0 ? causal_end : 0) : p.S;
  const T* kb = k + b * p.k.b + h * p.k.h;
  const T* vb = v + b * p.v.b + h * p.v.h;
  float top = -INFINITY, sum = 0.f, acc[PER_LANE];
  for (int t = 0; t < PER_LANE; ++t) acc[t] = 0.f;
  for (int64_t s0 = 0; s0 < keys_end; s0 += kFusedKeys) {
    __syncthreads();  // the previous tile is used up (and, the first time, the query rows are written)
    for (int x = int(threadIdx.x); x < kFusedKeys * E; x += int(blockDim.x)) {
      const int j = x / E, e = x % E;
      keys[j * (E + 1) + e] = s0 + j < p.S ? to_float(kb[(s0 + j) * p.k.l + e * p.k.e]) : 0.f;
    }
    for (int x = int(threadIdx.x); x < kFusedKeys * Ev; x += int(blockDim.x)) {
      const int j = x / Ev, e = x % Ev;
      values[j * Ev + e] = s0 + j < p.S ? to_float(vb[(s0 + j) * p.v.l + e * p.v.e]) : 0.f;
    }
    __syncthreads();
    const int64_t s = s0 + lane;
    float score = -INFINITY;
    if (row_ok && s < p.S && !masked(p, i, s)) {
      float dot = 0.f;
      const float* key = keys + lane * (E + 1);
      for (int e = 0; e < E; ++e) dot = fmaf(qrow[e], key[e], dot);
      if (bias) dot += to_float(bias[b * p.bias.b + h * p.bias.h + i * p.bias.l + s * p.bias.e]);
      score = dot;
    }
    const float new_top = fmaxf(top, warp_max(score));
    const float weight = new_top == -INFINITY ? 0.f : __expf(score - new_top);
    const float rescale = top == -INFINITY ? 0.f : __expf(top - new_top);
    sum = sum * rescale + warp_sum(weight);
    top = new_top;
    // Half-precision rows multiply the values by the weight rounded to their type, as torch's kernels do.
    const float used = std::is_same_v<T, float> ? weight : to_float(from_float<T>(weight));
    for (int t = 0; t < PER_LANE; ++t) acc[t] *= rescale;
    const int tile = keys_end - s0 < kFusedKeys ? int(keys_end - s0) : kFusedKeys;
    for (int j = 0; j < tile; ++j) {
      const float w = __shfl_sync(0xffffffffu, used, j);
      for (int t = 0; t < PER_LANE; ++t) {
        const int e = lane + 32 * t;
        if (e < Ev) acc[t] = fmaf(w, values[j * Ev + e], acc[t]);
      }
    }
  }
  if (!row_ok) return;
  const float inv = sum > 0.f ? 1.f / sum : 0.f;  // a row with every key masked gives zeros, not NaN
  T* orow = out + b * p.out.b + h * p.out.h + i * p.out.l;
  for (int t = 0; t < PER_LANE; ++t) {
    const int e = lane + 32 * t;
    if (e < Ev) orow[e * p.out.e] = from_float<T>(acc[t] * inv);
  }
  if (lse && lane == 0) lse[b * p.lse_b + h * p.lse_h + i] = sum > 0.f ? top + logf(sum) : p.masked_lse;
}

// Past this many multiply-adds a call (B H L S (E + Ev)) the blocked way is faster: its three launches cost more
// host time than the fused kernel's one, but the fused kernel's scalar dot products cost more GPU time per
// multiply-add than cuBLAS's products, and a long sequence is bound by the GPU. The line lies between vit_tiny's
// 15 M multiply-adds (faster fused) and 6 heads of 256, 50 M (faster blocked): bench/attention_cuda.cpp,
// docs/PERFORMANCE.md, "CUDA attention".
constexpr int64_t kFusedMaxWork = int64_t(1) << 25;

// Whether the fused kernel takes this problem: heads of at most 128 values and grid dimensions in range; then
// MPSPACK_CUDA_ATTENTION (Tuning::cuda_attention, read at each call) = fused or blocked decides, and otherwise the
// work does.
bool fused_fits(const Problem& p) {
  const bool fits = p.E <= kFusedMaxHead && p.Ev <= kFusedMaxHead && p.B <= 65535 && p.H <= 65535 &&
                    ceil_div(p.L, kFusedRows) <= int64_t(INT32_MAX);
  const std::string& mode = tuning().cuda_attention;
  if (mode == "blocked") return false;
  if (mode == "fused") return fits;
  const double work = double(p.B) * double(p.H) * double(p.L) * double(p.S) * double(p.E + p.Ev);
  return fits && work <= double(kFusedMaxWork);
}

template <class T, int PER_LANE>
void launch_fused(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* bias, Tensor& out, float* lse,
                  const Problem& p) {
  const dim3 grid(unsigned(ceil_div(p.L, kFusedRows)), unsigned(p.H), unsigned(p.B));
  const std::size_t shared = sizeof(float) * std::size_t(kFusedKeys * (p.E + 1) + kFusedKeys * p.Ev + kFusedRows * p.E);
  fused_attention_kernel<T, PER_LANE><<<grid, kFusedRows * 32, shared, current_stream()>>>(
      reinterpret_cast<const T*>(q.data()), reinterpret_cast<const T*>(k.data()), reinterpret_cast<const T*>(v.data()),
      bias ? reinterpret_cast<const T*>(bias->data()) : nullptr, reinterpret_cast<T*>(out.data()), lse, p);
  check(cudaGetLastError(), "fused attention kernel launch");
}

template <class T>
void attend_fused(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* bias, Tensor& out, float* lse,
                  const Problem& p) {
  if (p.Ev <= 32) return launch_fused<T, 1>(q, k, v, bias, out, lse, p);
  if (p.Ev <= 64) return launch_fused<T, 2>(q, k, v, bias, out, lse, p);
  launch_fused<T, 4>(q, k, v, bias, out, lse, p);
}

// A view of `base`'s storage with the given geometry (offset in elements).
Tensor view(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  Tensor t;
  t.storage = base.storage;
  t.dtype = base.dtype;
  t.storage_offset = offset;
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  return t;
}

constexpr const char* kBlockedOp = "scaled_dot_product_efficient_attention";  // what the products' errors name

// In the buffers of whole images' scores each (image, head) pair's [L, S] takes a multiple of this many elements:
// every pair's matrix then starts at a multiple of 32 bytes in float32 and of 16 in half precision, as products
// over pointer arrays need (kPointerGemmAlign).
constexpr int64_t kPairAlign = 8;

// What pair_addresses_kernel needs: the operands' first elements, their image and head strides and the buffers'
// pair strides, in bytes.
struct PairAddresses {
  char *q, *k, *v, *out, *scores, *probs;
  int64_t q_b, q_h, k_b, k_h, v_b, v_h, out_b, out_h, scores_pair, probs_pair;
  int64_t H, pairs, group_pairs;
};

// arrays [4 pairs + 2 group_pairs] <- the address of pair x = b * H + h's matrix of q, k, v and out (pairs each:
// every image of the call), then of the score and probability buffers' first group_pairs matrices (the pairs one
// step holds, the same for every step).
__global__ void pair_addresses_kernel(void** arrays, PairAddresses a) {
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= a.pairs) return;
  const int64_t b = x / a.H, h = x % a.H;
  arrays[x] = a.q + b * a.q_b + h * a.q_h;
  arrays[a.pairs + x] = a.k + b * a.k_b + h * a.k_h;
  arrays[2 * a.pairs + x] = a.v + b * a.v_b + h * a.v_h;
  arrays[3 * a.pairs + x] = a.out + b * a.out_b + h * a.out_h;
  if (x < a.group_pairs) {
    arrays[4 * a.pairs + x] = a.scores + x * a.scores_pair;
    arrays[4 * a.pairs + a.group_pairs + x] = a.probs + x * a.probs_pair;
  }
}

// The one stride between consecutive (image, head) pairs of an operand, when there is one: its image stride is H
// head strides (or it has one head). A model's q, k, v and out usually have none: transformers permute
// [B, L, H, E] to [B, H, L, E], whose heads are E apart and images L H E.
std::optional<int64_t> pair_stride_of(const Strides4& s, int64_t H) {
  if (H == 1) return s.b;
  if (s.b == H * s.h) return s.h;
  return std::nullopt;
}

bool aligned_address(const void* ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr) % std::uintptr_t(kPointerGemmAlign) == 0;
}

// Whether every (image, head) matrix of an operand starts at a multiple of kPointerGemmAlign bytes.
bool pairs_aligned(const Tensor& t, const Strides4& s, const Problem& p) {
  const int64_t item = int64_t(t.itemsize());
  return aligned_address(t.data()) && (p.B == 1 || (s.b * item) % kPointerGemmAlign == 0) &&
         (p.H == 1 || (s.h * item) % kPointerGemmAlign == 0);
}

// Steps of `group` whole images for attend_images: their scores [group, H, L, S] (each pair's [L, S] pair_elems
// apart) in `scores`, their probabilities in `probs` (scores itself for float32).
struct ImageSteps {
  int64_t group, pair_elems;
  Tensor& scores;
  Tensor& probs;
};

// attend_images's steps when every operand's (image, head) pairs are pair_stride apart: one strided batch a product.
void attend_images_strided(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* bias, Tensor& out,
                           float* lse, const Problem& p, const ImageSteps& st, const int64_t pair_stride[4]) {
  const int64_t pe = st.pair_elems;
  for (int64_t b0 = 0; b0 < p.B; b0 += st.group) {
    const int64_t n = std::min(st.group, p.B - b0), pairs = n * p.H;
    Tensor s = view(st.scores, {pairs, p.L, p.S}, {pe, p.S, 1}, 0);
    Tensor pr = view(st.probs, {pairs, p.L, p.S}, {pe, p.S, 1}, 0);
    const Tensor qb = view(q, {pairs, p.L, p.E}, {pair_stride[0], p.q.l, p.q.e}, q.storage_offset + b0 * p.q.b);
    const Tensor kt = view(k, {pairs, p.E, p.S}, {pair_stride[1], p.k.e, p.k.l}, k.storage_offset + b0 * p.k.b);
    const Tensor vb = view(v, {pairs, p.S, p.Ev}, {pair_stride[2], p.v.l, p.v.e}, v.storage_offset + b0 * p.v.b);
    Tensor ob = view(out, {pairs, p.L, p.Ev}, {pair_stride[3], p.out.l, p.out.e}, out.storage_offset + b0 * p.out.b);
    gemm(s, qb, kt, p.scale, 0.0, kBlockedOp);
    softmax_rows(s, pr, bias, lse, p, q.dtype, b0, n, 0, p.L, pe);
    gemm(ob, pr, vb, 1.0, 0.0, kBlockedOp);
  }
}

// Each (image, head) pair's matrices as row-major views, for products over pointer arrays (addresses unset).
struct PairMatrices {
  MatrixArray q, k, v, out;
};
PairMatrices pair_matrices(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Problem& p) {
  return {{nullptr, q.dtype, p.L, p.E, p.q.l, p.q.e},
          {nullptr, k.dtype, p.E, p.S, p.k.e, p.k.l},
          {nullptr, v.dtype, p.S, p.Ev, p.v.l, p.v.e},
          {nullptr, out.dtype, p.L, p.Ev, p.out.l, p.out.e}};
}

// attend_images's steps otherwise: cublasGemmBatchedEx over arrays of every pair's addresses, which one kernel
// writes on the stream first (no host copy, so that the call stays capturable in a CUDA graph).
void attend_images_pointers(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* bias, Tensor& out,
                            float* lse, const Problem& p, const ImageSteps& st) {
  const int64_t pairs = p.B * p.H, group_pairs = st.group * p.H;
  TensorPtr table(new_tensor_on(kCuda, q.storage->device_index, std::vector<int64_t>{4 * pairs + 2 * group_pairs},
                                std::vector<int64_t>{1}, int32_t(DType::i64)));
  void** arrays = reinterpret_cast<void**>(table->data());
  const int64_t qi = int64_t(q.itemsize()), ki = int64_t(k.itemsize()), vi = int64_t(v.itemsize()),
                oi = int64_t(out.itemsize());
  PairAddresses a{};
  a.q = q.data(), a.k = k.data(), a.v = v.data(), a.out = out.data();
  a.scores = st.scores.data(), a.probs = st.probs.data();
  a.q_b = p.q.b * qi, a.q_h = p.q.h * qi, a.k_b = p.k.b * ki, a.k_h = p.k.h * ki;
  a.v_b = p.v.b * vi, a.v_h = p.v.h * vi, a.out_b = p.out.b * oi, a.out_h = p.out.h * oi;
  a.scores_pair = st.pair_elems * int64_t(sizeof(float)), a.probs_pair = st.pair_elems * int64_t(st.probs.itemsize());
  a.H = p.H, a.pairs = pairs, a.group_pairs = group_pairs;
  pair_addresses_kernel<<<unsigned(ceil_div(pairs, 256)), 256, 0, current_stream()>>>(arrays, a);
  check(cudaGetLastError(), "attention address kernel launch");
  PairMatrices m = pair_matrices(q, k, v, out, p);
  const MatrixArray sm{arrays + 4 * pairs, int32_t(DType::f32), p.L, p.S, p.S, 1},
      pm{arrays + 4 * pairs + group_pairs, st.probs.dtype, p.L, p.S, p.S, 1};
  for (int64_t b0 = 0; b0 < p.B; b0 += st.group) {
    const int64_t n = std::min(st.group, p.B - b0), first = b0 * p.H;
    m.q.ptrs = arrays + first;
    m.k.ptrs = arrays + pairs + first;
    m.v.ptrs = arrays + 2 * pairs + first;
    m.out.ptrs = arrays + 3 * pairs + first;
    gemm_pointers(sm, m.q, m.k, n * p.H, p.scale, q.storage->device_index, kBlockedOp);
    softmax_rows(st.scores, st.probs, bias, lse, p, q.dtype, b0, n, 0, p.L, st.pair_elems);
    gemm_pointers(m.out, pm, m.v, n * p.H, 1.0, q.storage->device_index, kBlockedOp);
  }
}

// The blocked way over whole images, `group` of them a step: their scores [group, H, L, S] in one buffer within
// the score budget, each product one cuBLAS call over the step's group * H (image, head) pairs and one softmax
// launch over all their rows. A batch of short sequences then costs three launches a step (and one more a call
// over pointer arrays) where the per-image path costs three an image: BERT-base at batch 8 made 24, and a run of it
// is bound by the host's time per launch. The products read the operands in place: as one strided batch when every
// operand's pairs are evenly spaced (pair_stride_of), else through arrays of the pairs' addresses. Per element the
// work is the per-image path's: the same products with float32 accumulation (cuBLAS's compute type) and the same
// softmax kernel. Returns false, having launched nothing, where the per-image path is taken instead: one image
// (nothing to group), a budget that holds fewer than two images' scores (blocks of one image's rows), empty inner
// dimensions (gemm() clears the output for them, which scattered matrices do not allow), and, where the pairs are
// not evenly spaced, operands cuBLAS cannot read or write in place (gemm() copies those an image at a time; over
// pointer arrays the copy would have to hold every image) or matrices that do not start 16-byte aligned.
bool attend_images(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* bias, Tensor& out, float* lse,
                   const Problem& p) {
  if (p.B < 2 || p.S == 0 || p.E == 0) return false;
  const int64_t pair_elems = ceil_div(p.L * p.S, kPairAlign) * kPairAlign;
  const int64_t image_bytes = p.H * pair_elems * int64_t(sizeof(float));
  int64_t group = std::min(p.B, score_budget_bytes() / image_bytes);
  group = std::min(group, int64_t(INT32_MAX) / (p.H * p.L));  // the softmax's blocks and cuBLAS's batch count
  if (group < 2) return false;
  const std::optional<int64_t> qs = pair_stride_of(p.q, p.H), ks = pair_stride_of(p.k, p.H),
                               vs = pair_stride_of(p.v, p.H), os = pair_stride_of(p.out, p.H);
  const bool strided = qs && ks && vs && os;
  const PairMatrices m = pair_matrices(q, k, v, out, p);
  if (!strided &&
      !(blas_reads(m.q) && blas_reads(m.k) && blas_reads(m.v) && blas_writes(m.out) && pairs_aligned(q, p.q, p) &&
        pairs_aligned(k, p.k, p) && pairs_aligned(v, p.v, p) && pairs_aligned(out, p.out, p)))
    return false;
  const std::vector<int64_t> buffer_sizes{group * p.H * pair_elems}, buffer_strides{1};
  TensorPtr scores(new_tensor_on(kCuda, q.storage->device_index, buffer_sizes, buffer_strides, int32_t(DType::f32)));
  TensorPtr probs_buffer;  // scores themselves for float32
  if (q.dtype != int32_t(DType::f32))
    probs_buffer.reset(new_tensor_on(kCuda, q.storage->device_index, buffer_sizes, buffer_strides, q.dtype));
  const ImageSteps st{group, pair_elems, *scores, probs_buffer ? *probs_buffer : *scores};
  if (strided) {
    const int64_t pair_stride[4] = {*qs, *ks, *vs, *os};
    attend_images_strided(q, k, v, bias, out, lse, p, st, pair_stride);
    return true;
  }
  // The allocator's blocks are 256-byte aligned; this only keeps the products' requirement in one place.
  if (!aligned_address(st.scores.data()) || !aligned_address(st.probs.data())) return false;
  attend_images_pointers(q, k, v, bias, out, lse, p, st);
  return true;
}

// out[b] <- softmax(q[b] k[b]^T * scale + bias[b], causal) v[b]: fused, several whole images at a time
// (attend_images), or rows_per_block query rows of one image at a time.
void attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* bias, Tensor& out, float* lse,
            const Problem& p) {
  if (fused_fits(p)) {
    switch (static_cast<DType>(q.dtype)) {
      case DType::f32: return attend_fused<float>(q, k, v, bias, out, lse, p);
      case DType::f16: return attend_fused<__half>(q, k, v, bias, out, lse, p);
      case DType::bf16: return attend_fused<__nv_bfloat16>(q, k, v, bias, out, lse, p);
      default: break;  // refused below, as the blocked path does
    }
  }
  if (attend_images(q, k, v, bias, out, lse, p)) return;
  // One image at a time: what attend_images leaves (its comment says which problems, and why).
  const int64_t per_row = std::max<int64_t>(p.H * p.S * int64_t(sizeof(float)), 1);
  const int64_t rows_per_block = std::clamp<int64_t>(score_budget_bytes() / per_row, 1, p.L);
  const int32_t device = q.storage->device_index;
  const std::vector<int64_t> buffer_sizes{p.H, rows_per_block, p.S};
  TensorPtr scores(new_tensor_on(kCuda, device, buffer_sizes, contiguous_strides(buffer_sizes), int32_t(DType::f32)));
  TensorPtr probs_buffer;  // scores themselves for float32
  if (q.dtype != int32_t(DType::f32))
    probs_buffer.reset(new_tensor_on(kCuda, device, buffer_sizes, contiguous_strides(buffer_sizes), q.dtype));
  Tensor& probs = probs_buffer ? *probs_buffer : *scores;
  for (int64_t b = 0; b < p.B; ++b) {
    for (int64_t l0 = 0; l0 < p.L; l0 += rows_per_block) {
      const int64_t n = std::min(rows_per_block, p.L - l0);
      const std::vector<int64_t> block_strides{n * p.S, p.S, 1};
      Tensor s = view(*scores, {p.H, n, p.S}, block_strides, 0);
      Tensor pr = view(probs, {p.H, n, p.S}, block_strides, 0);
      const Tensor qb = view(q, {p.H, n, p.E}, {p.q.h, p.q.l, p.q.e}, q.storage_offset + b * p.q.b + l0 * p.q.l);
      const Tensor kt = view(k, {p.H, p.E, p.S}, {p.k.h, p.k.e, p.k.l}, k.storage_offset + b * p.k.b);
      const Tensor vb = view(v, {p.H, p.S, p.Ev}, {p.v.h, p.v.l, p.v.e}, v.storage_offset + b * p.v.b);
      Tensor ob =
          view(out, {p.H, n, p.Ev}, {p.out.h, p.out.l, p.out.e}, out.storage_offset + b * p.out.b + l0 * p.out.l);
      gemm(s, qb, kt, p.scale, 0.0, kBlockedOp);
      softmax_rows(s, pr, bias, lse, p, q.dtype, b, 1, l0, n, n * p.S);
      gemm(ob, pr, vb, 1.0, 0.0, kBlockedOp);
    }
  }
}

Strides4 strides4(const Tensor& t, const char* what) {
  if (t.dim() != 4) fail(std::string("scaled_dot_product_efficient_attention: ") + what + " must be 4-d");
  return {t.strides[0], t.strides[1], t.strides[2], t.strides[3]};
}

// The bias's strides broadcast to [B, H, L, S] (trailing dims aligned, size-1 dims stride 0).
Strides4 bias_strides(const Tensor& t, const Problem& p) {
  const int64_t want[4] = {p.B, p.H, p.L, p.S};
  int64_t st[4] = {0, 0, 0, 0};
  const int nd = int(t.dim());
  if (nd > 4) fail("scaled_dot_product_efficient_attention: attn_bias has more than 4 dims");
  for (int i = 0; i < nd; ++i) {
    const int d = 4 - nd + i;
    if (t.sizes[i] == want[d]) st[d] = t.strides[i];
    else if (t.sizes[i] != 1)
      fail("scaled_dot_product_efficient_attention: attn_bias does not broadcast to [B, H, L, S]");
  }
  return {st[0], st[1], st[2], st[3]};
}

__global__ void fill_kernel(float* p, int64_t n, float value) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

constexpr const char* kEfficient = "scaled_dot_product_efficient_attention";
constexpr const char* kCudnn = "scaled_dot_product_cudnn_attention";
constexpr const char* kFlash = "scaled_dot_product_flash_attention";

// The problem both entry points solve, from their operands, checked (messages name `op`).
Problem attention_problem(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* bias, double dropout_p,
                          int32_t is_causal, const double* scale, const char* op) {
  const std::string name(op);
  for (const Tensor* t : {&q, &k, &v}) require_cuda(*t, op);
  if (bias) require_cuda(*bias, op);
  if (dropout_p != 0.0) fail(name + ": dropout is not supported (inference only)");
  if (k.dtype != q.dtype || v.dtype != q.dtype || (bias && bias->dtype != q.dtype))
    fail(name + ": query, key, value and bias dtypes differ");
  Problem p{};
  p.q = strides4(q, "query");
  p.k = strides4(k, "key");
  p.v = strides4(v, "value");
  p.B = q.sizes[0], p.H = q.sizes[1], p.L = q.sizes[2], p.E = q.sizes[3];
  p.S = k.sizes[2], p.Ev = v.sizes[3];
  if (k.sizes[0] != p.B || v.sizes[0] != p.B || k.sizes[1] != p.H || v.sizes[1] != p.H || k.sizes[3] != p.E ||
      v.sizes[2] != p.S)
    fail(name + ": query [B,H,L,E], key [B,H,S,E] and value [B,H,S,Ev] do not fit");
  if (bias) p.bias = bias_strides(*bias, p);
  p.scale = float(scale ? *scale : 1.0 / std::sqrt(double(p.E)));
  p.causal = is_causal != 0;
  p.masked_lse = -INFINITY;
  if (q.dtype != int32_t(DType::f32) && q.dtype != int32_t(DType::f16) && q.dtype != int32_t(DType::bf16))
    fail(name + ": dtype " + dtype_name(q.dtype) + " is not supported");
  if (p.H > 65535) fail(name + ": more than 65535 heads");
  return p;
}

// torch's layout for cuDNN attention's output (alloc_with_matching_layout in its meta function): dense, with the
// dimensions in query's order of strides (largest first, ties in index order); for a query that is not dense,
// [B, L, H, Ev] memory seen as [B, H, L, Ev].
std::vector<int64_t> matching_layout(const Tensor& q, const Problem& p) {
  const int64_t shape[4] = {p.B, p.H, p.L, p.Ev};
  int order[4] = {0, 1, 2, 3};
  std::stable_sort(order, order + 4, [&](int a, int b) { return q.strides[size_t(a)] > q.strides[size_t(b)]; });
  int64_t span = 1;
  bool dense = true;
  for (int i = 3; i >= 0; --i) {
    const int d = order[i];
    if (q.sizes[size_t(d)] != 1 && q.strides[size_t(d)] != span) dense = false;
    span *= q.sizes[size_t(d)];
  }
  if (!dense) return {p.L * p.H * p.Ev, p.Ev, p.H * p.Ev, 1};
  std::vector<int64_t> strides(4);
  int64_t step = 1;
  for (int i = 3; i >= 0; --i) {
    strides[size_t(order[i])] = step;
    step *= shape[order[i]];
  }
  return strides;
}

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" AOTITorchError aoti_torch_cuda__scaled_dot_product_efficient_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  return guarded(__func__, [&] {
    const Tensor& q = deref(query, "query");
    const Tensor& k = deref(key, "key");
    const Tensor& v = deref(value, "value");
    const Tensor* bias = (attn_bias != nullptr && *attn_bias != nullptr) ? *attn_bias : nullptr;
    Problem p = attention_problem(q, k, v, bias, dropout_p, is_causal, scale, kEfficient);
    const int32_t device = q.storage->device_index;
    // torch: the output is made as [B, L, H, Ev] and returned transposed to [B, H, L, Ev].
    TensorPtr out(new_tensor_on(kCuda, device, std::vector<int64_t>{p.B, p.H, p.L, p.Ev},
                                std::vector<int64_t>{p.L * p.H * p.Ev, p.Ev, p.H * p.Ev, 1}, q.dtype));
    p.out = {out->strides[0], out->strides[1], out->strides[2], out->strides[3]};
    // logsumexp: float32 [B, H, L rounded up to 32] when asked for, else [B, H, 0].
    const int64_t lpad = compute_log_sumexp ? ceil_div(p.L, 32) * 32 : 0;
    TensorPtr lse(new_tensor_on(kCuda, device, std::vector<int64_t>{p.B, p.H, lpad},
                                std::vector<int64_t>{p.H * lpad, lpad, 1}, int32_t(DType::f32)));
    p.lse_b = p.H * lpad, p.lse_h = lpad;
    // torch's kernel leaves +inf in the rows' padding past L; attend writes the first L of each row.
    if (const int64_t n = p.B * p.H * lpad; n > 0)
      fill_kernel<<<unsigned(ceil_div(n, 256)), 256, 0, current_stream()>>>(reinterpret_cast<float*>(lse->data()), n,
                                                                            INFINITY);
    TensorPtr seed(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    TensorPtr offset(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    if (p.B * p.H * p.L * p.Ev > 0)
      attend(q, k, v, bias, *out, compute_log_sumexp ? reinterpret_cast<float*>(lse->data()) : nullptr, p);
    hand_out(ret0, std::move(out));
    hand_out(ret1, std::move(lse));
    hand_out(ret2, std::move(seed));
    hand_out(ret3, std::move(offset));
  });
}

// The same attention under the name torch's cuDNN backend has (chosen by torch for bf16/f16 on recent GPUs), with
// its outputs as torch's meta function makes them: the output in query's layout, logsumexp float32 [B, H, L, 1],
// no cumulative sequence lengths (null handles), max_q = L, max_k = S, and no debug mask.
extern "C" AOTITorchError aoti_torch_cuda__scaled_dot_product_cudnn_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, int32_t return_debug_mask, double* scale,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4,
    int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7, AtenTensorHandle* ret8) {
  return guarded(__func__, [&] {
    const Tensor& q = deref(query, "query");
    const Tensor& k = deref(key, "key");
    const Tensor& v = deref(value, "value");
    const Tensor* bias = (attn_bias != nullptr && *attn_bias != nullptr) ? *attn_bias : nullptr;
    if (return_debug_mask) fail(std::string(kCudnn) + ": the debug mask is not supported");
    Problem p = attention_problem(q, k, v, bias, dropout_p, is_causal, scale, kCudnn);
    const int32_t device = q.storage->device_index;
    TensorPtr out(
        new_tensor_on(kCuda, device, std::vector<int64_t>{p.B, p.H, p.L, p.Ev}, matching_layout(q, p), q.dtype));
    p.out = {out->strides[0], out->strides[1], out->strides[2], out->strides[3]};
    TensorPtr lse(new_tensor_on(kCuda, device, std::vector<int64_t>{p.B, p.H, p.L, 1},
                                std::vector<int64_t>{p.H * p.L, p.L, 1, 1}, int32_t(DType::f32)));
    p.lse_b = p.H * p.L, p.lse_h = p.L;
    TensorPtr seed(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    TensorPtr offset(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    if (p.B * p.H * p.L * p.Ev > 0) attend(q, k, v, bias, *out, reinterpret_cast<float*>(lse->data()), p);
    hand_out(ret0, std::move(out));
    hand_out(ret1, std::move(lse));
    hand_out(ret2, nullptr);  // no cumulative sequence lengths
    hand_out(ret3, nullptr);
    if (ret4 != nullptr) *ret4 = p.L;
    if (ret5 != nullptr) *ret5 = p.S;
    hand_out(ret6, std::move(seed));
    hand_out(ret7, std::move(offset));
    hand_out(ret8, nullptr);  // no debug mask
  });
}

// The same attention under the name of torch's flash backend (its choice for f16/bf16 without a mask; key and value
// may have fewer heads, dividing the query's: grouped-query attention), its causal mask aligned to the bottom right
// as flash attention's is (query i sees keys up to i + S - L), with the outputs its meta function makes: the output
// as empty_like(query.transpose(1, 2)).transpose(1, 2) (query's own strides when query is dense, else [B, L, H, Ev]
// memory), logsumexp float32 [B, H, L], no cumulative sequence lengths, max_q = L, max_k = S, and no debug mask.
extern "C" AOTITorchError aoti_torch_cuda__scaled_dot_product_flash_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7,
    AtenTensorHandle* ret8) {
  return guarded(__func__, [&] {
    const Tensor& q = deref(query, "query");
    const Tensor& k = deref(key, "key");
    const Tensor& v = deref(value, "value");
    if (return_debug_mask) fail(std::string(kFlash) + ": the debug mask is not supported");
    // Grouped-query attention (key and value with fewer heads, dividing the query's, as torch's flash kernel takes
    // them): one call per key/value head, on its group of query heads, which read it with a head stride of 0.
    const bool grouped = q.dim() == 4 && k.dim() == 4 && v.dim() == 4 && k.sizes[1] > 0 && k.sizes[1] < q.sizes[1] &&
                         q.sizes[1] % k.sizes[1] == 0 && v.sizes[1] == k.sizes[1];
    const int64_t group = grouped ? q.sizes[1] / k.sizes[1] : 1;
    auto part = [&](const Tensor& t, int64_t first, bool shared) -> Tensor {
      if (!grouped) return t;
      std::vector<int64_t> sizes = t.sizes, strides = t.strides;
      sizes[1] = group;
      if (shared) strides[1] = 0;
      return view(t, sizes, strides, t.storage_offset + first * t.strides[1]);
    };
    Problem p = attention_problem(part(q, 0, false), part(k, 0, true), part(v, 0, true), nullptr, dropout_p, is_causal,
                                  scale, kFlash);
    p.causal_offset = p.S - p.L;  // flash attention's causal mask is aligned to the bottom right
    p.masked_lse = INFINITY;      // and it gives a row without keys +inf
    const int64_t H = q.sizes[1];
    const int32_t device = q.storage->device_index;
    const bool same_layout = q.is_non_overlapping_and_dense() && p.Ev == p.E;
    const std::vector<int64_t> strides =
        same_layout ? q.strides : std::vector<int64_t>{p.L * H * p.Ev, p.Ev, H * p.Ev, 1};
    TensorPtr out(new_tensor_on(kCuda, device, std::vector<int64_t>{p.B, H, p.L, p.Ev}, strides, q.dtype));
    p.out = {out->strides[0], out->strides[1], out->strides[2], out->strides[3]};
    TensorPtr lse(new_tensor_on(kCuda, device, std::vector<int64_t>{p.B, H, p.L}, std::vector<int64_t>{H * p.L, p.L, 1},
                                int32_t(DType::f32)));
    p.lse_b = H * p.L, p.lse_h = p.L;
    TensorPtr seed(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    TensorPtr offset(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    if (p.B * H * p.L * p.Ev > 0)
      for (int64_t g = 0; g < H / p.H; ++g) {
        Tensor o = view(*out, out->sizes, out->strides, g * p.H * out->strides[1]);
        attend(part(q, g * p.H, false), part(k, g, true), part(v, g, true), nullptr, o,
               reinterpret_cast<float*>(lse->data()) + g * p.H * p.L, p);
      }
    hand_out(ret0, std::move(out));
    hand_out(ret1, std::move(lse));
    hand_out(ret2, nullptr);
    hand_out(ret3, nullptr);
    if (ret4 != nullptr) *ret4 = p.L;
    if (ret5 != nullptr) *ret5 = p.S;
    hand_out(ret6, std::move(seed));
    hand_out(ret7, std::move(offset));
    hand_out(ret8, nullptr);
  });
}

// ---- The raw forward kernels: _efficient_attention_forward and _flash_attention_forward -----------------------
// What torch's SDPA entry points call underneath, and what a model that calls them itself (or through a nested
// tensor's packed batch) reaches. Their operands are [B, S, H, E] (the same memory torch's SDPA sees as
// [B, H, S, E]), so they run on `attend` above through strides. A packed batch (cumulative sequence lengths,
// B = 1) runs one sequence at a time: the lengths are read on the host, after the stream's work so far.

namespace mpspack::shim::cuda {
namespace {

constexpr const char* kEfficientForward = "_efficient_attention_forward";
constexpr const char* kFlashForward = "_flash_attention_forward";

// A [.., S, H, E] operand's strides as Problem's (b, h, l, e); `batch` is the batch dim's stride (0 when packed).
Strides4 bshe(const Tensor& t, int64_t batch) {
  const size_t n = t.sizes.size();
  return {batch, t.strides[n - 2], t.strides[n - 3], t.strides[n - 1]};
}

// The same tensor with its storage offset moved by `elements` (a sequence of a packed batch).
Tensor shifted(const Tensor& t, int64_t elements) { return view(t, t.sizes, t.strides, t.storage_offset + elements); }

void check_operands(const Tensor& q, const Tensor& k, const Tensor& v, const std::string& op) {
  for (const Tensor* t : {&q, &k, &v}) require_cuda(*t, op.c_str());
  if (k.dtype != q.dtype || v.dtype != q.dtype) fail(op + ": query, key and value dtypes differ");
  if (q.dtype != int32_t(DType::f32) && q.dtype != int32_t(DType::f16) && q.dtype != int32_t(DType::bf16))
    fail(op + ": dtype " + dtype_name(q.dtype) + " is not supported");
}

void fill(Tensor& t, float value) {
  if (const int64_t n = t.numel(); n > 0)
    fill_kernel<<<unsigned(ceil_div(n, 256)), 256, 0, current_stream()>>>(reinterpret_cast<float*>(t.data()), n, value);
  check(cudaGetLastError(), "attention fill kernel launch");
}

void zero(Tensor& t) {
  if (t.numel() > 0)
    check(cudaMemsetAsync(t.data(), 0, std::size_t(t.numel()) * t.itemsize(), current_stream()), "attention");
}

// One packed batch's sequence: its first query and key rows and their counts.
struct Sequence {
  int64_t q0, nq, k0, nk;
};

// The sequences of a packed batch from the cumulative lengths (and the keys each uses, when given), checked
// against the operands' rows and the longest query sequence the caller declared.
std::vector<Sequence> sequences(const Tensor& cu_q, const Tensor& cu_k, const Tensor* used_k, int64_t rows_q,
                                int64_t rows_k, int64_t max_q, const std::string& op, const char* used_name) {
  const std::vector<int32_t> sq = int32_values(cu_q, op + ": cu_seqlens_q");
  const std::vector<int32_t> sk = int32_values(cu_k, op + ": cu_seqlens_k");
  if (sq.size() != sk.size()) fail(op + ": cu_seqlens_q and cu_seqlens_k differ in length");
  if (sq.empty()) fail(op + ": cu_seqlens_q is empty");
  const std::size_t n = sq.size() - 1;
  std::vector<int32_t> used;
  if (used_k) {
    used = int32_values(*used_k, op + ": " + used_name);
    if (used.size() != n)
      fail(op + ": " + used_name + " has " + std::to_string(used.size()) + " lengths for " + std::to_string(n) +
           " sequences");
  }
  std::vector<Sequence> out(n);
  for (std::size_t b = 0; b < n; ++b) {
    Sequence s{sq[b], int64_t(sq[b + 1]) - sq[b], sk[b], used_k ? int64_t(used[b]) : int64_t(sk[b + 1]) - sk[b]};
    if (s.q0 < 0 || s.nq < 0 || s.q0 + s.nq > rows_q)
      fail(op + ": cu_seqlens_q does not describe sequences within the query's " + std::to_string(rows_q) + " rows");
    if (s.k0 < 0 || s.nk < 0 || s.k0 + s.nk > rows_k)
      fail(op + ": the key sequences do not lie within the key's " + std::to_string(rows_k) + " rows");
    if (s.nq > max_q)
      fail(op + ": sequence " + std::to_string(b) + " has " + std::to_string(s.nq) +
           " queries, more than max_seqlen_q " + std::to_string(max_q));
    out[b] = s;
  }
  return out;
}

}  // namespace
}  // namespace mpspack::shim::cuda

// torch's memory-efficient kernel: query [B, M, H, E], key [B, N, H, E], value [B, N, H, Ev]; custom_mask_type 0
// (none), 1 (causal from the top left) or 2 (causal from the bottom right: query i sees keys up to i + N - M);
// window_size > 0 hides keys more than window_size - 1 before the diagonal. Outputs as torch makes them: the
// output [B, M, H, Ev] contiguous, logsumexp float32 [batches, H, M rounded up to 32] (+inf past each sequence's
// rows) or [batches, H, 0], the philox seed and offset (empty: no dropout), max_seqlen_q and max_seqlen_k.
extern "C" AOTITorchError aoti_torch_cuda__efficient_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* bias,
    AtenTensorHandle* cu_seqlens_q, AtenTensorHandle* cu_seqlens_k, int64_t* max_seqlen_q, int64_t* max_seqlen_k,
    double dropout_p, int64_t custom_mask_type, int32_t compute_log_sumexp, double* scale, AtenTensorHandle* seqlen_k,
    int64_t* window_size, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5) {
  return guarded(__func__, [&] {
    const std::string op = kEfficientForward;
    const Tensor& q = deref(query, "query");
    const Tensor& k = deref(key, "key");
    const Tensor& v = deref(value, "value");
    const Tensor* bias_t = (bias != nullptr && *bias != nullptr) ? &deref(*bias, "bias") : nullptr;
    const Tensor* cu_q = (cu_seqlens_q != nullptr && *cu_seqlens_q != nullptr) ? &deref(*cu_seqlens_q) : nullptr;
    const Tensor* cu_k = (cu_seqlens_k != nullptr && *cu_seqlens_k != nullptr) ? &deref(*cu_seqlens_k) : nullptr;
    const Tensor* used_k = (seqlen_k != nullptr && *seqlen_k != nullptr) ? &deref(*seqlen_k) : nullptr;
    check_operands(q, k, v, op);
    if (dropout_p != 0.0) fail(op + ": dropout is not supported (inference only)");
    if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
      fail(op + ": query, key and value must be 4-d [batch, sequence, heads, head size]");
    const int64_t B = q.sizes[0], M = q.sizes[1], H = q.sizes[2], E = q.sizes[3];
    const int64_t N = k.sizes[1], Ev = v.sizes[3];
    if (k.sizes[0] != B || v.sizes[0] != B) fail(op + ": query, key and value batch sizes differ");
    if (v.sizes[1] != N) fail(op + ": key and value sequence lengths differ");
    if (k.sizes[2] != H || v.sizes[2] != H) fail(op + ": query, key and value head counts differ");
    if (k.sizes[3] != E) fail(op + ": query and key head sizes differ");
    if (custom_mask_type < 0 || custom_mask_type > 2)
      fail(op + ": custom_mask_type " + std::to_string(custom_mask_type) + " is not 0, 1 or 2");
    if ((cu_q == nullptr) != (cu_k == nullptr)) fail(op + ": give both cu_seqlens_q and cu_seqlens_k, or neither");
    const bool packed = cu_q != nullptr;
    if (packed && B != 1) fail(op + ": cu_seqlen only supports batch_size=1");
    if (packed && max_seqlen_q == nullptr) fail(op + ": max_seqlen_q is required with cu_seqlens_q");
    if (packed && bias_t) fail(op + ": an attention bias with cu_seqlens_q is not supported");
    if (bias_t) {
      require_cuda(*bias_t, op.c_str());
      if (bias_t->dtype != q.dtype) fail(op + ": invalid dtype for bias - should match query's dtype");
      if (bias_t->dim() != 4) fail(op + ": Bias expected in BMHK format");
      if (bias_t->sizes[0] != B || bias_t->sizes[1] != H || bias_t->sizes[2] != M || bias_t->sizes[3] != N)
        fail(op + ": attn_bias: wrong shape (expected [batch, heads, queries, keys])");
    }
    const int64_t max_q = packed ? *max_seqlen_q : M;
    const std::vector<Sequence> seqs =
        packed ? sequences(*cu_q, *cu_k, used_k, M, N, max_q, op, "seqlen_k") : std::vector<Sequence>{};
    const int64_t batches = packed ? int64_t(seqs.size()) : B;
    const int32_t device = q.storage->device_index;

    TensorPtr out(new_tensor_on(kCuda, device, std::vector<int64_t>{B, M, H, Ev},
                                std::vector<int64_t>{M * H * Ev, H * Ev, Ev, 1}, q.dtype));
    const int64_t lse_dim = compute_log_sumexp ? ceil_div(max_q, 32) * 32 : 0;
    TensorPtr lse(new_tensor_on(kCuda, device, std::vector<int64_t>{batches, H, lse_dim},
                                std::vector<int64_t>{H * lse_dim, lse_dim, 1}, int32_t(DType::f32)));
    fill(*lse, INFINITY);  // torch's kernel leaves +inf in the rows past each sequence's queries
    TensorPtr seed(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    TensorPtr offset(new_tensor_on(kCuda, device, {}, {}, int32_t(DType::i64)));
    float* lse_base = compute_log_sumexp ? reinterpret_cast<float*>(lse->data()) : nullptr;

    // One problem: `rows` queries and `keys` keys, query i's keys shifted as the mask type says.
    auto problem = [&](int64_t batch, int64_t rows, int64_t keys, int64_t qb, int64_t kb, int64_t vb) {
      Problem p{};
      p.B = batch, p.H = H, p.L = rows, p.S = keys, p.E = E, p.Ev = Ev;
      p.q = bshe(q, qb), p.k = bshe(k, kb), p.v = bshe(v, vb);
      p.out = {M * H * Ev, Ev, H * Ev, 1};
      p.lse_b = H * lse_dim, p.lse_h = lse_dim;
      p.scale = float(scale ? *scale : 1.0 / std::sqrt(double(E)));
      p.masked_lse = -INFINITY;
      const int64_t diagonal = custom_mask_type == 2 ? keys - rows : 0;
      p.causal = custom_mask_type != 0;
      p.causal_offset = diagonal;
      if (window_size != nullptr && *window_size > 0) {
        p.windowed = true;
        p.window_lo = diagonal - *window_size + 1;
      }
      if (bias_t) p.bias = {bias_t->strides[0], bias_t->strides[1], bias_t->strides[2], bias_t->strides[3]};
      if (p.H > 65535) fail(op + ": more than 65535 heads");
      return p;
    };
    if (N == 0) {
      zero(*out);  // no keys: torch's kernel gives zeros
    } else if (!packed) {
      if (B * H * M * Ev > 0)
        attend(q, k, v, bias_t, *out, lse_base, problem(B, M, N, q.strides[0], k.strides[0], v.strides[0]));
    } else {
      for (std::size_t b = 0; b < seqs.size(); ++b) {
        const Sequence& s = seqs[b];
        if (s.nq == 0 || H * Ev == 0) continue;
        Problem p = problem(1, s.nq, s.nk, 0, 0, 0);
        const Tensor qs = shifted(q, s.q0 * q.strides[1]);
        const Tensor ks = shifted(k, s.k0 * k.strides[1]);
        const Tensor vs = shifted(v, s.k0 * v.strides[1]);
        Tensor os = shifted(*out, s.q0 * H * Ev);
        attend(qs, ks, vs, nullptr, os, lse_base ? lse_base + int64_t(b) * H * lse_dim : nullptr, p);
      }
    }
    hand_out(ret0, std::move(out));
    hand_out(ret1, std::move(lse));
    hand_out(ret2, std::move(seed));
    hand_out(ret3, std::move(offset));
    if (ret4 != nullptr) *ret4 = max_q;
    if (ret5 != nullptr) *ret5 = max_seqlen_k != nullptr ? *max_seqlen_k : (packed ? 0 : N);
  });
}

// torch's flash-attention kernel: query [B, Sq, H, E], key and value [B, Sk, Hk, E] (Hk dividing H: grouped-query
// attention), or, packed (cum_seq_q and cum_seq_k), [total, H, E] with one sequence per pair of cumulative
// lengths. Its masks are aligned to the bottom right of each sequence: query i sees keys j with
// i + Sk - Sq - window_size_left <= j <= i + Sk - Sq + window_size_right (is_causal: right 0; a missing or
// negative size: unbounded). Outputs as torch makes them: the
// output as empty_like(query), logsumexp float32 [B, H, Sq] or, packed, [H, total] (+inf for a row without keys),
// the rng state uint64 [2] and an unused uint64 scalar (no dropout), and an empty debug mask.
extern "C" AOTITorchError aoti_torch_cuda__flash_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* cum_seq_q,
    AtenTensorHandle* cum_seq_k, int64_t max_q, int64_t max_k, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double* scale, int64_t* window_size_left, int64_t* window_size_right,
    AtenTensorHandle* seqused_k, AtenTensorHandle* alibi_slopes, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2, AtenTensorHandle* ret3, AtenTensorHandle* ret4) {
  return guarded(__func__, [&] {
    const std::string op = kFlashForward;
    const Tensor& q = deref(query, "query");
    const Tensor& k = deref(key, "key");
    const Tensor& v = deref(value, "value");
    const Tensor* cu_q = (cum_seq_q != nullptr && *cum_seq_q != nullptr) ? &deref(*cum_seq_q) : nullptr;
    const Tensor* cu_k = (cum_seq_k != nullptr && *cum_seq_k != nullptr) ? &deref(*cum_seq_k) : nullptr;
    const Tensor* used_k = (seqused_k != nullptr && *seqused_k != nullptr) ? &deref(*seqused_k) : nullptr;
    check_operands(q, k, v, op);
    if (q.dtype == int32_t(DType::f32)) fail(op + ": FlashAttention only support fp16 and bf16 data type");
    if (dropout_p != 0.0) fail(op + ": dropout is not supported (inference only)");
    if (return_debug_mask) fail(op + ": return_softmax is only supported when p_dropout > 0.0");
    if (alibi_slopes != nullptr && *alibi_slopes != nullptr) fail(op + ": ALiBi slopes are not supported");
    if ((cu_q == nullptr) != (cu_k == nullptr))
      fail(op + ": cumulative_sequence_length_q and cumulative_sequence_length_k must be both set or both not set");
    const bool packed = cu_q != nullptr;
    const int64_t nd = packed ? 3 : 4;
    if (q.dim() != nd || k.dim() != nd || v.dim() != nd)
      fail(op + (packed ? ": packed query, key and value must be 3-d [total, heads, head size]"
                        : ": query, key and value must be 4-d [batch, sequence, heads, head size]"));
    const int64_t H = q.sizes[size_t(nd - 2)], E = q.sizes[size_t(nd - 1)];
    const int64_t Hk = k.sizes[size_t(nd - 2)];
    if (!packed && (k.sizes[0] != q.sizes[0] || v.sizes[0] != q.sizes[0]))
      fail(op + ": query, key and value batch sizes differ");
    if (v.sizes != k.sizes || k.sizes[size_t(nd - 1)] != E)
      fail(op + ": key and value must have the query's head size and one shape");
    if (Hk == 0 || H % Hk != 0) fail(op + ": Number of heads in key/value must divide number of heads in query");
    // Grouped-query attention: query heads h * group .. h * group + group - 1 share key/value head h.
    const int64_t group = H / Hk;
    if (group > 1 && packed && max_q == 1)
      fail(op + ": grouped-query attention on a packed batch of single queries is not supported");
    if (E % 8 != 0) fail(op + ": head_size must be a multiple of 8, this is ensured by padding!");
    if (E > 256) fail(op + ": FlashAttention forward only supports head dimension at most 256");
    if (H > 65535) fail(op + ": more than 65535 heads");
    const int32_t device = q.storage->device_index;

    TensorPtr out(new_tensor_on(kCuda, device, q.sizes, empty_like_strides(q), q.dtype));
    const int64_t rows_q = packed ? q.sizes[0] : q.sizes[1];
    const int64_t B = packed ? 1 : q.sizes[0];
    const std::vector<int64_t> lse_sizes =
        packed ? std::vector<int64_t>{H, rows_q} : std::vector<int64_t>{B, H, rows_q};
    TensorPtr lse(new_tensor_on(kCuda, device, lse_sizes, contiguous_strides(lse_sizes), int32_t(DType::f32)));
    TensorPtr rng_state(
        new_tensor_on(kCuda, device, std::vector<int64_t>{2}, std::vector<int64_t>{1}, mpspack::dtype::uint64));
    TensorPtr unused(new_tensor_on(kCuda, device, {}, {}, mpspack::dtype::uint64));
    TensorPtr debug_mask(new_tensor_on(kCuda, device, std::vector<int64_t>{0}, std::vector<int64_t>{1}, q.dtype));

    // Windows of the keys' length or more bound nothing; a single query needs no causal mask (torch's rules).
    const int64_t keys_bound = packed ? max_k : k.sizes[1];
    int64_t left = window_size_left ? *window_size_left : -1, right = window_size_right ? *window_size_right : -1;
    if (left >= keys_bound) left = -1;
    if (right >= keys_bound) right = -1;
    const bool causal = is_causal && (packed ? max_q : rows_q) != 1;
    if (causal) right = 0;
    const int64_t od = nd - 3;  // the row dim's index is od, heads od + 1 (0 or 1 for packed or not)

    // One call's problem: `heads` query heads (all of them, or one key/value head's group, which then reads its
    // key and value head for each with a head stride of 0).
    const int64_t heads = group == 1 ? H : group;
    auto problem = [&](int64_t batch, int64_t rows, int64_t keys, bool batched) {
      Problem p{};
      p.B = batch, p.H = heads, p.L = rows, p.S = keys, p.E = E, p.Ev = E;
      p.q = bshe(q, batched ? q.strides[0] : 0), p.k = bshe(k, batched ? k.strides[0] : 0);
      p.v = bshe(v, batched ? v.strides[0] : 0);
      p.out = bshe(*out, batched ? out->strides[0] : 0);
      p.lse_b = packed ? 0 : H * rows_q, p.lse_h = rows_q;
      p.scale = float(scale ? *scale : 1.0 / std::sqrt(double(E)));
      p.masked_lse = INFINITY;
      const int64_t diagonal = keys - rows;
      if (right >= 0) p.causal = true, p.causal_offset = diagonal + right;
      if (left >= 0) p.windowed = true, p.window_lo = diagonal - left;
      if (group > 1) p.k.h = 0, p.v.h = 0;
      return p;
    };
    // Every query head of q (from row 0 of qs, ks, vs, os, lse): one call, or one per key/value head.
    const std::size_t hd = std::size_t(od + 1);
    auto run = [&](const Tensor& qs, const Tensor& ks, const Tensor& vs, Tensor& os, float* lse_at, int64_t batch,
                   int64_t rows, int64_t keys, bool batched) {
      for (int64_t h = 0; h < H / heads; ++h) {
        const Problem p = problem(batch, rows, keys, batched);
        Tensor oh = shifted(os, h * heads * os.strides[hd]);
        attend(shifted(qs, h * heads * qs.strides[hd]), shifted(ks, h * ks.strides[hd]),
               shifted(vs, h * vs.strides[hd]), nullptr, oh, lse_at + h * heads * p.lse_h, p);
      }
    };
    float* lse_base = reinterpret_cast<float*>(lse->data());
    if (keys_bound == 0) {
      zero(*out);  // no keys: torch gives zeros and +inf
      fill(*lse, INFINITY);
    } else if (!packed) {
      if (B * H * rows_q * E > 0) run(q, k, v, *out, lse_base, B, rows_q, k.sizes[1], true);
    } else {
      const std::vector<Sequence> seqs = sequences(*cu_q, *cu_k, used_k, rows_q, k.sizes[0], max_q, op, "seqused_k");
      for (const Sequence& s : seqs) {
        if (s.nq == 0 || H * E == 0) continue;
        Tensor os = shifted(*out, s.q0 * out->strides[size_t(od)]);
        run(shifted(q, s.q0 * q.strides[size_t(od)]), shifted(k, s.k0 * k.strides[size_t(od)]),
            shifted(v, s.k0 * v.strides[size_t(od)]), os, lse_base + s.q0, 1, s.nq, s.nk, false);
      }
    }
    hand_out(ret0, std::move(out));
    hand_out(ret1, std::move(lse));
    hand_out(ret2, std::move(rng_state));
    hand_out(ret3, std::move(unused));
    hand_out(ret4, std::move(debug_mask));
  });
}
