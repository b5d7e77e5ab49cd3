// Adapters for the CUDA functions without a CPU twin (attention backends, mm.dtype_out): registered under the CPU-form name the runner
// looks adapters up by, they run only under --device cuda (their cases are recorded for the GPU alone).
#include "aoti_shim_cuda.h"
#include "op_calls.hpp"

namespace {

using mpspack::test::CallArgs;

const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch_cpu__scaled_dot_product_efficient_attention",
     [](CallArgs& a) {
       return CUDA_SHIM(_scaled_dot_product_efficient_attention)(a.tensor(0), a.tensor(1), a.tensor(2),
                                                                  a.optional_tensor(3), a.boolean(4), a.f64(5),
                                                                  a.boolean(6), a.optional_f64(7), a.ret(0), a.ret(1),
                                                                  a.ret(2), a.ret(3));
     }},
    {"aoti_torch_cpu__scaled_dot_product_cudnn_attention",
     [](CallArgs& a) {
       return CUDA_SHIM(_scaled_dot_product_cudnn_attention)(
           a.tensor(0), a.tensor(1), a.tensor(2), a.optional_tensor(3), a.boolean(4), a.f64(5), a.boolean(6),
           a.boolean(7), a.optional_f64(8), a.ret(0), a.ret(1), a.ret(2), a.ret(3), a.ret_i64(4), a.ret_i64(5),
           a.ret(6), a.ret(7), a.ret(8));
     }},
    {"aoti_torch_cpu__scaled_dot_product_flash_attention",
     [](CallArgs& a) {
       return CUDA_SHIM(_scaled_dot_product_flash_attention)(a.tensor(0), a.tensor(1), a.tensor(2), a.f64(3),
                                                              a.boolean(4), a.boolean(5), a.optional_f64(6), a.ret(0),
                                                              a.ret(1), a.ret(2), a.ret(3), a.ret_i64(4), a.ret_i64(5),
                                                              a.ret(6), a.ret(7), a.ret(8));
     }},
    {"aoti_torch_cpu_mm_dtype_out",
     [](CallArgs& a) { return CUDA_SHIM(mm_dtype_out)(a.tensor(0), a.tensor(1), a.tensor(2), a.dtype(3)); }},
});

}  // namespace
