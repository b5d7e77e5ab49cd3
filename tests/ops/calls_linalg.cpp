// Adapters for the linear-algebra functions (tests/ops/opcases/linalg.py): products, distances, the
// LAPACK-backed ops, _fused_rms_norm, _scaled_mm and the 4-bit dynamic-quantization pair (CPU only).
#include "op_calls.hpp"

namespace {

using mpspack::test::CallArgs;

const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch_cpu_addmv",
     [](CallArgs& a) { return SHIM(addmv)(a.tensor(0), a.tensor(1), a.tensor(2), a.f64(3), a.f64(4), a.ret(0)); }},
    {"aoti_torch_cpu_addbmm",
     [](CallArgs& a) { return SHIM(addbmm)(a.tensor(0), a.tensor(1), a.tensor(2), a.f64(3), a.f64(4), a.ret(0)); }},
    {"aoti_torch_cpu__addmm_activation",
     [](CallArgs& a) {
       return SHIM(_addmm_activation)(a.tensor(0), a.tensor(1), a.tensor(2), a.f64(3), a.f64(4), a.boolean(5),
                                      a.ret(0));
     }},
    {"aoti_torch_cpu__int_mm_out",
     [](CallArgs& a) { return SHIM(_int_mm_out)(a.tensor(0), a.tensor(1), a.tensor(2)); }},
    {"aoti_torch_cpu__trilinear",
     [](CallArgs& a) {
       return SHIM(_trilinear)(a.tensor(0), a.tensor(1), a.tensor(2), a.ints(3), a.count(3), a.ints(4), a.count(4),
                               a.ints(5), a.count(5), a.ints(6), a.count(6), a.i64(7), a.ret(0));
     }},
    {"aoti_torch_cpu__cdist_forward",
     [](CallArgs& a) { return SHIM(_cdist_forward)(a.tensor(0), a.tensor(1), a.f64(2), a.optional_i64(3), a.ret(0)); }},
    {"aoti_torch_cpu__pdist_forward",
     [](CallArgs& a) { return SHIM(_pdist_forward)(a.tensor(0), a.f64(1), a.ret(0)); }},
    {"aoti_torch_cpu_cholesky_solve",
     [](CallArgs& a) { return SHIM(cholesky_solve)(a.tensor(0), a.tensor(1), a.boolean(2), a.ret(0)); }},
    {"aoti_torch_cpu_cholesky_inverse",
     [](CallArgs& a) { return SHIM(cholesky_inverse)(a.tensor(0), a.boolean(1), a.ret(0)); }},
    {"aoti_torch_cpu_triangular_solve",
     [](CallArgs& a) {
       return SHIM(triangular_solve)(a.tensor(0), a.tensor(1), a.boolean(2), a.boolean(3), a.boolean(4), a.ret(0),
                                     a.ret(1));
     }},
    {"aoti_torch_cpu_geqrf", [](CallArgs& a) { return SHIM(geqrf)(a.tensor(0), a.ret(0), a.ret(1)); }},
    {"aoti_torch_cpu_ormqr",
     [](CallArgs& a) {
       return SHIM(ormqr)(a.tensor(0), a.tensor(1), a.tensor(2), a.boolean(3), a.boolean(4), a.ret(0));
     }},
    {"aoti_torch_cpu_lu_unpack",
     [](CallArgs& a) {
       return SHIM(lu_unpack)(a.tensor(0), a.tensor(1), a.boolean(2), a.boolean(3), a.ret(0), a.ret(1), a.ret(2));
     }},
    {"aoti_torch_cpu__fused_rms_norm",
     [](CallArgs& a) {
       return SHIM(_fused_rms_norm)(a.tensor(0), a.ints(1), a.count(1), a.optional_tensor(2), a.optional_f64(3),
                                    a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu__scaled_mm",
     [](CallArgs& a) {
       return SHIM(_scaled_mm)(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.optional_tensor(4),
                               a.optional_tensor(5), a.optional_dtype(6), a.boolean(7), a.ret(0));
     }},
    {"aoti_torch_cpu__scaled_mm_out",
     [](CallArgs& a) {
       return SHIM(_scaled_mm_out)(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.tensor(4),
                                   a.optional_tensor(5), a.optional_tensor(6), a.optional_dtype(7), a.boolean(8));
     }},
    {"aoti_torch_cpu__dyn_quant_pack_4bit_weight",
     [](CallArgs& a) {
       return SHIM(_dyn_quant_pack_4bit_weight)(a.tensor(0), a.tensor(1), a.optional_tensor(2), a.i64(3), a.i64(4),
                                                a.i64(5), a.ret(0));
     }},
    {"aoti_torch_cpu__dyn_quant_matmul_4bit",
     [](CallArgs& a) {
       return SHIM(_dyn_quant_matmul_4bit)(a.tensor(0), a.tensor(1), a.i64(2), a.i64(3), a.i64(4), a.ret(0));
     }},
});

}  // namespace
