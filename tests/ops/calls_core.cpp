// Adapters of the core group (opcases/core.py): the torch ops among c/shim.h's generic functions.
#include "op_calls.hpp"

#include <vector>

namespace {

using mpspack::test::CallArgs;

// index_put_out takes its indices as an array of handles, null for a None.
AOTITorchError index_put_out(CallArgs& a) {
  const AtenTensorHandle** slots = a.optional_tensors(2);
  std::vector<AtenTensorHandle> indices;
  for (int64_t i = 0; i < a.count(2); ++i) indices.push_back(slots[i] != nullptr ? *slots[i] : nullptr);
  return aoti_torch_index_put_out(a.tensor(0), a.tensor(1), indices.data(), uint32_t(indices.size()), a.tensor(3),
                                  a.boolean(4) != 0);
}

const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch__mm_plus_mm_out",
     [](CallArgs& a) {
       return aoti_torch__mm_plus_mm_out(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.tensor(4));
     }},
    {"aoti_torch_scatter_out",
     [](CallArgs& a) { return aoti_torch_scatter_out(a.tensor(0), a.tensor(1), a.i64(2), a.tensor(3), a.tensor(4)); }},
    {"aoti_torch_scatter_reduce_out",
     [](CallArgs& a) {
       return aoti_torch_scatter_reduce_out(a.tensor(0), a.tensor(1), a.i64(2), a.tensor(3), a.tensor(4), a.str(5),
                                            a.boolean(6));
     }},
    {"aoti_torch_index_put_out", index_put_out},
    {"aoti_torch_cpu_wrapped_fbgemm_pack_gemm_matrix_fp16",
     [](CallArgs& a) { return SHIM(wrapped_fbgemm_pack_gemm_matrix_fp16)(a.tensor(0), a.ret(0)); }},
    {"aoti_torch_cpu_wrapped_fbgemm_linear_fp16_weight",
     [](CallArgs& a) {
       return SHIM(wrapped_fbgemm_linear_fp16_weight)(a.tensor(0), a.tensor(1), a.tensor(2), a.i64(3), a.ret(0));
     }},
    {"aoti_torch_cpu__wrapped_linear_prepack",
     [](CallArgs& a) {
       AtenTensorHandle* bias = a.optional_tensor(3);
       return SHIM(_wrapped_linear_prepack)(a.tensor(0), a.tensor(1), a.tensor(2), bias ? *bias : nullptr, a.ret(0));
     }},
    {"aoti_torch_cpu__wrapped_quantized_linear_prepacked",
     [](CallArgs& a) {
       return SHIM(_wrapped_quantized_linear_prepacked)(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.tensor(4),
                                                        a.tensor(5), a.i64(6), a.ret(0));
     }},
});

}  // namespace
