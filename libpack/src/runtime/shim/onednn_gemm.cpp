// The CPU shim's products on oneDNN: float32 GEMMs on its sgemm, bfloat16 ones on its matmul primitive (bf16 in,
// float32 out, on the CPU's bf16 instructions: AVX-512 BF16, AMX), part of the plugin module lib/mpspack/onednn.so
// (onednn_api.hpp). Why oneDNN and not OpenBLAS for these: its sgemm threads a product in two dimensions on the
// caller's OpenMP team and chooses how many threads each product is worth, where OpenBLAS (single-threaded here,
// blas.hpp says why) gets blocks of one side from the shim; on the device machine's 16 cores the transformer
// models ran 1.3-4.0x faster with it (docs/PERFORMANCE.md, "CPU: products on oneDNN").
#include "onednn_api.hpp"
#include "onednn_module.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mpspack::shim {
namespace {

using dnnl::memory;

struct Matmul16Plan {
  dnnl::matmul matmul;
  memory::desc a, b, c, scratchpad;
  std::string refused;  // why oneDNN does not run this product (empty: it does)
};

std::shared_ptr<const Matmul16Plan> make_matmul16_plan(const OnednnMatmul16Call& c) {
  auto p = std::make_shared<Matmul16Plan>();
  if (static_cast<DType>(c.dtype) != DType::bf16) {
    p->refused = "only bfloat16 products run on oneDNN";
    return p;
  }
  const auto bf16 = memory::data_type::bf16;
  p->a = memory::desc({c.M, c.K}, bf16, {c.a_s0, c.a_s1});
  p->b = memory::desc({c.K, c.N}, bf16, {c.b_s0, c.b_s1});
  p->c = memory::desc({c.M, c.N}, memory::data_type::f32, {c.N, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per call: concurrent calls share nothing
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->a, p->b, p->c), attr, cpu_engine(), true);
  if (!pd) {
    p->refused = "oneDNN has no bfloat16 matmul for these strides";
  } else if (std::string_view(pd.impl_info_str()).substr(0, 3) == "ref") {
    p->refused = "oneDNN has no bfloat16 kernel for this CPU";  // its reference loops: slower than widening
  } else {
    p->scratchpad = pd.scratchpad_desc();
    p->matmul = dnnl::matmul(pd);
  }
  return p;
}

// Made once per (dtype, sizes, strides), kept for the process.
std::shared_ptr<const Matmul16Plan> matmul16_plan(const OnednnMatmul16Call& c) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, std::shared_ptr<const Matmul16Plan>> plans;
  std::vector<int64_t> key = {c.dtype, c.M, c.N, c.K, c.a_s0, c.a_s1, c.b_s0, c.b_s1};
  std::lock_guard lock(mutex);
  auto& plan = plans[std::move(key)];
  if (!plan) plan = make_matmul16_plan(c);
  return plan;
}

}  // namespace
}  // namespace mpspack::shim

using namespace mpspack::shim;

extern "C" __attribute__((visibility("default"))) std::string mpspack_onednn_sgemm_v1(
    bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
    int64_t ldb, float beta, float* C, int64_t ldc) {
  const dnnl_status_t status =
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  return status == dnnl_success ? std::string() : "oneDNN's sgemm failed (status " + std::to_string(int(status)) + ")";
}

extern "C" __attribute__((visibility("default"))) std::string mpspack_onednn_matmul16_v1(
    const OnednnMatmul16Call& c) {
  return reporting_errors([&] {
    const auto plan = matmul16_plan(c);
    if (!plan->refused.empty()) return plan->refused;
    dnnl::engine& e = cpu_engine();
    dnnl::stream stream(e);
    Buffer scratch(plan->scratchpad.get_size());
    plan->matmul.execute(stream, {{DNNL_ARG_SRC, memory(plan->a, e, const_cast<void*>(c.a))},
                                  {DNNL_ARG_WEIGHTS, memory(plan->b, e, const_cast<void*>(c.b))},
                                  {DNNL_ARG_DST, memory(plan->c, e, c.c)},
                                  {DNNL_ARG_SCRATCHPAD, memory(plan->scratchpad, e, scratch.get())}});
    stream.wait();
    return std::string();
  });
}
