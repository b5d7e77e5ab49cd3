// The CPU shim's products on oneDNN: float32 GEMMs on its matmul primitive (sgemm where the primitive has no kernel
// of this CPU's own), bfloat16 ones on its matmul primitive too (bf16 in, float32 out, on the CPU's bf16
// instructions: AVX-512 BF16, AMX), part of the plugin module lib/mpspack/onednn.so (onednn_api.hpp). Why oneDNN
// and not OpenBLAS for these: it threads a product in two dimensions on the caller's OpenMP team and chooses how
// many threads each product is worth, where OpenBLAS (single-threaded here, blas.hpp says why) gets blocks of one
// side from the shim, and on many cores the transformer models ran faster with it (docs/PERFORMANCE.md, "CPU:
// products on oneDNN"). Why the primitive and not sgemm for float32: it adds a Linear layer's bias in the product's
// own pass, where sgemm needs the bias copied into the output first (the same section).
#include "onednn_api.hpp"
#include "onednn_module.hpp"
#include "onednn_packed.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <compare>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mpspack::shim {
namespace {

using dnnl::memory;

struct Matmul16Plan {
  dnnl::matmul matmul;
  memory::desc a, b, c, scratchpad;
  memory::desc b_packed;  // packed plans: B in the layout the primitive chose (b: as stored)
  std::string refused;    // why oneDNN does not run this product (empty: it does)
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
  const memory::desc b_any({c.K, c.N}, bf16, memory::format_tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per call: concurrent calls share nothing
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->a, c.pack_b ? b_any : p->b, p->c), attr, cpu_engine(), true);
  if (!pd) {
    p->refused = "oneDNN has no bfloat16 matmul for these strides";
  } else if (std::string_view(pd.impl_info_str()).substr(0, 3) == "ref") {
    p->refused = "oneDNN has no bfloat16 kernel for this CPU";  // its reference loops: slower than widening
  } else {
    if (c.pack_b) p->b_packed = pd.weights_desc();
    p->scratchpad = pd.scratchpad_desc();
    p->matmul = dnnl::matmul(pd);
  }
  return p;
}

// Made once per (dtype, sizes, strides, packing, team size), kept for the process.
std::shared_ptr<const Matmul16Plan> matmul16_plan(const OnednnMatmul16Call& c) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, std::shared_ptr<const Matmul16Plan>> plans;
  std::vector<int64_t> key = {c.dtype, c.M, c.N, c.K, c.a_s0, c.a_s1, c.b_s0, c.b_s1, c.pack_b, team_size()};
  std::lock_guard lock(mutex);
  auto& plan = plans[std::move(key)];
  if (!plan) plan = make_matmul16_plan(c);
  return plan;
}

// A float32 product as oneDNN's matmul primitive: op(A) and op(B) as strided descriptors, alpha as its output
// scale and beta as a sum post-op (C already holds the accumulated term, as for sgemm). Refused (the caller runs
// sgemm) where oneDNN has only its reference loops.
struct SgemmPlan {
  dnnl::matmul matmul;
  memory::desc a, b, c, bias, scratchpad;  // bias: empty without one
  memory::desc b_packed;                   // packed plans: B in the layout the primitive chose (b: as stored)
  bool usable = false;
};

struct SgemmKey {
  bool ta, tb, bias, packed;
  int64_t M, N, K, lda, ldb, ldc;
  float alpha, beta;
  int threads;  // team_size()
  auto operator<=>(const SgemmKey&) const = default;
};

std::shared_ptr<const SgemmPlan> make_sgemm_plan(const SgemmKey& k) {
  auto p = std::make_shared<SgemmPlan>();
  const auto f32 = memory::data_type::f32;
  p->a = memory::desc({k.M, k.K}, f32, k.ta ? memory::dims{1, k.lda} : memory::dims{k.lda, 1});
  p->b = memory::desc({k.K, k.N}, f32, k.tb ? memory::dims{1, k.ldb} : memory::dims{k.ldb, 1});
  p->c = memory::desc({k.M, k.N}, f32, {k.ldc, 1});
  if (k.bias) p->bias = memory::desc({1, k.N}, f32, {k.N, 1});
  const memory::desc b_any({k.K, k.N}, f32, memory::format_tag::any);
  const memory::desc& b_planned = k.packed ? b_any : p->b;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per call: concurrent calls share nothing
  if (k.alpha != 1.f) attr.set_output_scales(0, {k.alpha});
  if (k.beta != 0.f) {
    dnnl::post_ops ops;
    ops.append_sum(k.beta);
    attr.set_post_ops(ops);
  }
  dnnl::matmul::primitive_desc pd(
      k.bias ? dnnl::matmul::desc(p->a, b_planned, p->bias, p->c) : dnnl::matmul::desc(p->a, b_planned, p->c), attr,
      cpu_engine(), true);
  if (!pd || std::string_view(pd.impl_info_str()).substr(0, 3) == "ref") return p;
  if (k.packed) p->b_packed = pd.weights_desc();
  p->scratchpad = pd.scratchpad_desc();
  p->matmul = dnnl::matmul(pd);
  p->usable = true;
  return p;
}

// Made once per shape, strides, alpha, beta, bias and team size, kept for the process: a few dozen in a model. Past
// kMostSgemmPlans (a model whose shapes change from run to run) new shapes go to sgemm, which needs no plan.
constexpr std::size_t kMostSgemmPlans = 1024;

// Looked up under a shared lock: attention calls it from every thread of the team at once.
std::shared_ptr<const SgemmPlan> sgemm_plan(const SgemmKey& k) {
  static std::shared_mutex mutex;
  static std::map<SgemmKey, std::shared_ptr<const SgemmPlan>> plans;
  {
    std::shared_lock reading(mutex);
    const auto found = plans.find(k);
    if (found != plans.end()) return found->second;
  }
  std::lock_guard writing(mutex);
  if (const auto found = plans.find(k); found != plans.end()) return found->second;
  if (plans.size() >= kMostSgemmPlans) {
    static const auto none = std::make_shared<const SgemmPlan>();  // not usable: sgemm
    return none;
  }
  return plans[k] = make_sgemm_plan(k);
}

// OnednnTuning::f32_on_sgemm: float32 products on dnnl_sgemm, not the matmul primitive (for comparisons). Set once,
// when the shim opens the plugin, before any product.
std::atomic<bool> g_f32_on_sgemm{false};

bool matmul_primitive_for_f32() { return !g_f32_on_sgemm.load(std::memory_order_relaxed); }

}  // namespace
}  // namespace mpspack::shim

using namespace mpspack::shim;

extern "C" __attribute__((visibility("default"))) void mpspack_onednn_tune_v1(const OnednnTuning& tuning) {
  g_f32_on_sgemm.store(tuning.f32_on_sgemm, std::memory_order_relaxed);
}

extern "C" __attribute__((visibility("default"))) std::string mpspack_onednn_sgemm_v3(const OnednnSgemmCall& c) {
  if (matmul_primitive_for_f32()) {
    std::string problem = reporting_errors([&] {
      const auto plan = sgemm_plan(
          {c.ta, c.tb, c.bias != nullptr, c.pack_b, c.M, c.N, c.K, c.lda, c.ldb, c.ldc, c.alpha, c.beta, team_size()});
      if (!plan->usable) return std::string("-");
      dnnl::engine& e = cpu_engine();
      dnnl::stream stream(e);
      Buffer scratch(plan->scratchpad.get_size());
      std::shared_ptr<Buffer> b_packed;
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(plan->a, e, const_cast<float*>(c.A))},
                                              {DNNL_ARG_WEIGHTS, weights_memory(plan.get(), plan->b, plan->b_packed,
                                                                                c.B, c.pack_b, c.packed_now, b_packed)},
                                              {DNNL_ARG_DST, memory(plan->c, e, c.C)},
                                              {DNNL_ARG_SCRATCHPAD, memory(plan->scratchpad, e, scratch.get())}};
      if (c.bias) args.insert({DNNL_ARG_BIAS, memory(plan->bias, e, const_cast<float*>(c.bias))});
      plan->matmul.execute(stream, args);
      stream.wait();
      return std::string();
    });
    if (problem != "-") return problem;  // "-": no plan (reference loops only, or too many shapes): sgemm below
  }
  if (c.bias) return kOnednnBiasNotFused;
  const dnnl_status_t status = dnnl_sgemm(c.ta ? 'T' : 'N', c.tb ? 'T' : 'N', c.M, c.N, c.K, c.alpha, c.A, c.lda, c.B,
                                          c.ldb, c.beta, c.C, c.ldc);
  return status == dnnl_success ? std::string() : "oneDNN's sgemm failed (status " + std::to_string(int(status)) + ")";
}

extern "C" __attribute__((visibility("default"))) std::string mpspack_onednn_matmul16_v1(const OnednnMatmul16Call& c) {
  return reporting_errors([&] {
    const auto plan = matmul16_plan(c);
    if (!plan->refused.empty()) return plan->refused;
    dnnl::engine& e = cpu_engine();
    dnnl::stream stream(e);
    Buffer scratch(plan->scratchpad.get_size());
    std::shared_ptr<Buffer> b_packed;
    plan->matmul.execute(
        stream,
        {{DNNL_ARG_SRC, memory(plan->a, e, const_cast<void*>(c.a))},
         {DNNL_ARG_WEIGHTS, weights_memory(plan.get(), plan->b, plan->b_packed, c.b, c.pack_b, c.packed_now, b_packed)},
         {DNNL_ARG_DST, memory(plan->c, e, c.c)},
         {DNNL_ARG_SCRATCHPAD, memory(plan->scratchpad, e, scratch.get())}});
    stream.wait();
    return std::string();
  });
}
