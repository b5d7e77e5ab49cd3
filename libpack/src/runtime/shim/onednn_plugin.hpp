// The oneDNN plugin as the CPU shim sees it (onednn_plugin.cpp): lib/mpspack/onednn.so beside the executable's
// bin/, opened at the first call that needs it (a convolution, a float32 or bfloat16 product big enough for it)
// and never closed.
#pragma once

#include "onednn_api.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mpspack::shim {

// Whether the oneDNN plugin is open (opening it at the first call); when not, `why` gets one line naming where
// mpspack looked and why that failed. Thread-safe.
bool onednn_plugin_open(std::string* why = nullptr);
// "oneDNN 2.6.3, avx512_core_bf16" when the plugin opens, else empty.
std::string onednn_description();

// Float32 products of at least this many multiply-adds run on oneDNN; smaller ones on OpenBLAS on the calling
// thread, where waking threads would cost more than the product (about 10 µs of one core) and a model made only
// of them (a small MLP, batch-1 Linear layers) never opens the 40 MB library.
inline constexpr double kOnednnGemmMinMacs = double(1 << 18);

// Whether a product [M, K] @ [K, N] is for oneDNN: at least kOnednnGemmMinMacs, unless MPSPACK_CPU_GEMM=openblas.
bool product_for_onednn(int64_t M, int64_t N, int64_t K);

// C <- alpha * op(A) op(B) + beta * C on oneDNN (onednn_api.hpp, OnednnSgemm), row-major, threaded on the
// caller's OpenMP team; with `bias` (beta 0, alpha 1) the bias row is added to every row in the product's pass.
// False, with nothing written, when the plugin cannot be opened or cannot add the bias in its pass; throws
// ShimError when oneDNN refuses the product.
bool sgemm_onednn(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                  const float* B, int64_t ldb, float beta, float* C, int64_t ldc, const float* bias = nullptr);

// C (dense float32 [M, N]) <- a bfloat16 product on oneDNN's matmul, accumulated in float32. False, with nothing
// written, when the plugin cannot be opened or oneDNN has no kernel of this CPU's own for it (the caller widens
// to float32 instead).
bool matmul16_onednn(const OnednnMatmul16Call& call);

// Drops oneDNN's packed copies of constant B's within [data, data + bytes) (constant_memory.hpp), without opening
// the plugin when no product has.
void onednn_forget_packed(const void* data, std::size_t bytes);
// The bytes of the packed copies oneDNN keeps (MPSPACK_CPU_GEMM=packed; tests check the route with it).
std::size_t onednn_packed_bytes();

// How many products sgemm_onednn and matmul16_onednn have run in this process (tests check the route with it).
uint64_t onednn_gemm_calls();

// Whether the shim function `import` (an aoti_torch_cpu_* name a model library imports) opens the plugin at its
// first call whatever its arguments (a convolution). The CPU backend opens it early for a library importing one.
// Products open it at the first one big enough for oneDNN (kOnednnGemmMinMacs), not known before the run.
bool needs_onednn(std::string_view import);

// MPSPACK_CPU_GEMM, read once: "openblas" keeps float32 GEMMs on OpenBLAS, "sgemm" on oneDNN's sgemm with the
// bias copied first (both for measurements); empty by default (oneDNN's matmul when the plugin opens, else
// OpenBLAS).
std::string_view cpu_gemm_mode();

}  // namespace mpspack::shim
