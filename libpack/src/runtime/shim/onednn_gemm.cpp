// The CPU shim's float32 GEMMs on oneDNN's sgemm: part of the plugin module lib/mpspack/onednn.so
// (onednn_api.hpp). Why oneDNN and not OpenBLAS for these: its sgemm threads a product in two dimensions on the
// caller's OpenMP team and chooses how many threads each product is worth, where OpenBLAS (single-threaded here,
// blas.hpp says why) gets blocks of one side from the shim; on the device machine's 16 cores the transformer
// models ran 1.6-3x faster with it (docs/PERFORMANCE.md, "CPU: GEMMs on oneDNN").
#include "onednn_api.hpp"

#include <oneapi/dnnl/dnnl.h>

extern "C" __attribute__((visibility("default"))) std::string mpspack_onednn_sgemm_v1(
    bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
    int64_t ldb, float beta, float* C, int64_t ldc) {
  const dnnl_status_t status =
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  return status == dnnl_success ? std::string() : "oneDNN's sgemm failed (status " + std::to_string(int(status)) + ")";
}
