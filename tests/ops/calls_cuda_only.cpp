// Adapters for the CUDA functions without a CPU twin (attention backends and kernels, mm.dtype_out, the float8
// grouped product): registered under the CPU-form name the runner looks adapters up by, they run only under
// --device cuda (their cases are recorded for the GPU alone).
#include "runtime/shim_cuda/aoti_shim_cuda.h"
#include "op_calls.hpp"

namespace {

using mpspack::test::CallArgs;

const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch_cpu__scaled_dot_product_efficient_attention",
     [](CallArgs& a) {
       return CUDA_SHIM(_scaled_dot_product_efficient_attention)(
           a.tensor(0), a.tensor(1), a.tensor(2), a.optional_tensor(3), a.boolean(4), a.f64(5), a.boolean(6),
           a.optional_f64(7), a.ret(0), a.ret(1), a.ret(2), a.ret(3));
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
       return CUDA_SHIM(_scaled_dot_product_flash_attention)(
           a.tensor(0), a.tensor(1), a.tensor(2), a.f64(3), a.boolean(4), a.boolean(5), a.optional_f64(6), a.ret(0),
           a.ret(1), a.ret(2), a.ret(3), a.ret_i64(4), a.ret_i64(5), a.ret(6), a.ret(7), a.ret(8));
     }},
    {"aoti_torch_cpu__efficient_attention_forward",
     [](CallArgs& a) {
       return CUDA_SHIM(_efficient_attention_forward)(
           a.tensor(0), a.tensor(1), a.tensor(2), a.optional_tensor(3), a.optional_tensor(4), a.optional_tensor(5),
           a.optional_i64(6), a.optional_i64(7), a.f64(8), a.i64(9), a.boolean(10), a.optional_f64(11),
           a.optional_tensor(12), a.optional_i64(13), a.ret(0), a.ret(1), a.ret(2), a.ret(3), a.ret_i64(4),
           a.ret_i64(5));
     }},
    {"aoti_torch_cpu__flash_attention_forward",
     [](CallArgs& a) {
       return CUDA_SHIM(_flash_attention_forward)(
           a.tensor(0), a.tensor(1), a.tensor(2), a.optional_tensor(3), a.optional_tensor(4), a.i64(5), a.i64(6),
           a.f64(7), a.boolean(8), a.boolean(9), a.optional_f64(10), a.optional_i64(11), a.optional_i64(12),
           a.optional_tensor(13), a.optional_tensor(14), a.ret(0), a.ret(1), a.ret(2), a.ret(3), a.ret(4));
     }},
    {"aoti_torch_cpu__scaled_grouped_mm",
     [](CallArgs& a) {
       return CUDA_SHIM(_scaled_grouped_mm)(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.optional_tensor(4),
                                            a.optional_tensor(5), a.optional_tensor(6), a.optional_dtype(7),
                                            a.boolean(8), a.ret(0));
     }},
    {"aoti_torch_cpu__weight_int4pack_mm",
     [](CallArgs& a) {
       return CUDA_SHIM(_weight_int4pack_mm)(a.tensor(0), a.tensor(1), a.i64(2), a.tensor(3), a.ret(0));
     }},
    {"aoti_torch_cpu__thnn_fused_lstm_cell",
     [](CallArgs& a) {
       return CUDA_SHIM(_thnn_fused_lstm_cell)(a.tensor(0), a.tensor(1), a.tensor(2), a.optional_tensor(3),
                                               a.optional_tensor(4), a.ret(0), a.ret(1), a.ret(2));
     }},
    {"aoti_torch_cpu_mm_dtype_out",
     [](CallArgs& a) { return CUDA_SHIM(mm_dtype_out)(a.tensor(0), a.tensor(1), a.tensor(2), a.dtype(3)); }},
});

}  // namespace
