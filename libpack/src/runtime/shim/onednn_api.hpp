// What crosses between the CPU shim and its oneDNN plugin (lib/mpspack/onednn.so: onednn_conv.cpp,
// onednn_gemm.cpp): one convolution, described by its ConvShape and plain views of its tensors, or one float32
// GEMM. Both sides are built from this tree by
// one compiler, so the C++ types cross as they are. The plugin uses nothing of the shim's code, only these headers,
// so it opens in any process.
#pragma once

#include "conv_shape.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mpspack::shim {

// A tensor as oneDNN needs it: element 0's address, c10 dtype code, sizes and strides in elements.
struct ConvTensorView {
  void* data = nullptr;  // nullptr: absent (no bias)
  int32_t dtype = 0;
  std::vector<int64_t> sizes, strides;
};

struct OnednnConvCall {
  const ConvShape* shape = nullptr;
  ConvTensorView input, weight, bias, output;  // output allocated by the caller with shape->out_strides
  std::string* implementation = nullptr;       // when set, gets the kernel oneDNN chose ("jit:avx512_core", ...)
  bool pack_weights = false;                   // the weights lie in constant memory: keep them packed
  bool* packed_now = nullptr;                  // when set: whether this call packed the weights and kept them
};

// Runs the convolution; returns an empty string, or one line saying why it could not (without the shape, which
// the caller adds). Thread-safe.
using OnednnConvolution = std::string (*)(const OnednnConvCall& call);
inline constexpr const char* kOnednnConvolutionEntry = "mpspack_onednn_convolution_v1";

// C <- alpha * op(A) op(B) + beta * C, float32, row-major, threaded on the caller's OpenMP team, oneDNN choosing
// how many threads a product is worth: on its matmul primitive (made once per shape), or its sgemm where the
// primitive has only reference loops or OnednnTuning::f32_on_sgemm. With `bias` (N floats, beta 0, alpha 1): C <- op(A)
// op(B) + bias broadcast over the rows, added in the product's own pass (a Linear layer); where only sgemm would
// run it, nothing is written and the answer is kOnednnBiasNotFused (the shim copies the bias and calls again
// without it). `pack_b`: B lies in constant memory (constant_memory.hpp), so the primitive may read it from a copy
// in its own layout made at the first call and kept. Returns an empty string, or why it could not.
inline constexpr const char* kOnednnBiasNotFused = "the bias cannot be added in the product's pass";
struct OnednnSgemmCall {
  bool ta = false, tb = false;
  int64_t M = 0, N = 0, K = 0;
  float alpha = 1.f;
  const float* A = nullptr;
  int64_t lda = 0;
  const float* B = nullptr;
  int64_t ldb = 0;
  bool pack_b = false;
  bool* packed_now = nullptr;  // when set: whether this call made B's packed copy and kept it
  float beta = 0.f;
  float* C = nullptr;
  int64_t ldc = 0;
  const float* bias = nullptr;
};
using OnednnSgemm = std::string (*)(const OnednnSgemmCall& call);
inline constexpr const char* kOnednnSgemmEntry = "mpspack_onednn_sgemm_v3";

// Drops the packed copies made from B's starting within [data, data + bytes) (that memory is about to hold other
// data; bytes 0: none); returns the bytes of the packed copies kept.
using OnednnPacked = std::size_t (*)(const void* data, std::size_t bytes);
inline constexpr const char* kOnednnPackedEntry = "mpspack_onednn_packed_v1";

// A bfloat16 product op(A)[M, K] @ op(B)[K, N] accumulated in float32 into C, dense [M, N] float32, for the shim
// to finish (alpha, the accumulated term) and round once. A and B as stored: element (i, j) at p + i*s0 + j*s1.
struct OnednnMatmul16Call {
  int32_t dtype = 0;  // c10 code: bfloat16
  int64_t M = 0, N = 0, K = 0;
  const void* a = nullptr;
  int64_t a_s0 = 0, a_s1 = 0;
  const void* b = nullptr;
  int64_t b_s0 = 0, b_s1 = 0;
  bool pack_b = false;         // as OnednnSgemmCall's
  bool* packed_now = nullptr;  // as OnednnSgemmCall's
  float* c = nullptr;
};

// Runs it; returns an empty string, or why it did not (no kernel of this CPU's own for the dtype: oneDNN's
// reference loops are refused, being slower than the shim's widening path). Thread-safe.
using OnednnMatmul16 = std::string (*)(const OnednnMatmul16Call& call);
inline constexpr const char* kOnednnMatmul16Entry = "mpspack_onednn_matmul16_v1";

// What the runtime's tuning (runtime/tuning/tuning.hpp) asks of the plugin, passed once when the shim opens it: the
// plugin reads no environment of its own. f32_on_sgemm: float32 products on oneDNN's sgemm, not its matmul
// primitive (MPSPACK_CPU_GEMM=sgemm, for comparisons).
struct OnednnTuning {
  bool f32_on_sgemm = false;
};
using OnednnTune = void (*)(const OnednnTuning& tuning);
inline constexpr const char* kOnednnTuneEntry = "mpspack_onednn_tune_v1";

// oneDNN's version and the instruction set its kernels use ("oneDNN 2.6.3, avx512_core_bf16").
using OnednnDescribe = std::string (*)();
inline constexpr const char* kOnednnDescribeEntry = "mpspack_onednn_describe_v1";

}  // namespace mpspack::shim
