// Adapters for the CPU fallback functions the shim had before the suite: products, convolution, attention,
// scans, sorting, scatter, index_put, nonzero, int8 weights, embedding bags.
#include "op_calls.hpp"

namespace {

using mpspack::test::CallArgs;

const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch_cpu_addmm_out",
     [](CallArgs& a) {
       return SHIM(addmm_out)(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.f64(4), a.f64(5));
     }},
    {"aoti_torch_cpu_mm_out", [](CallArgs& a) { return SHIM(mm_out)(a.tensor(0), a.tensor(1), a.tensor(2)); }},
    {"aoti_torch_cpu_bmm_out", [](CallArgs& a) { return SHIM(bmm_out)(a.tensor(0), a.tensor(1), a.tensor(2)); }},
    {"aoti_torch_cpu_baddbmm_out",
     [](CallArgs& a) {
       return SHIM(baddbmm_out)(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.f64(4), a.f64(5));
     }},
    {"aoti_torch_cpu_convolution",
     [](CallArgs& a) {
       return SHIM(convolution)(a.tensor(0), a.tensor(1), a.optional_tensor(2), a.ints(3), a.count(3), a.ints(4),
                                a.count(4), a.ints(5), a.count(5), a.boolean(6), a.ints(7), a.count(7), a.i64(8),
                                a.ret(0));
     }},
    {"aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu",
     [](CallArgs& a) {
       return SHIM(_scaled_dot_product_flash_attention_for_cpu)(a.tensor(0), a.tensor(1), a.tensor(2), a.f64(3),
                                                                a.boolean(4), a.optional_tensor(5), a.optional_f64(6),
                                                                a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu_cumsum",
     [](CallArgs& a) { return SHIM(cumsum)(a.tensor(0), a.i64(1), a.optional_dtype(2), a.ret(0)); }},
    {"aoti_torch_cpu_cumprod",
     [](CallArgs& a) { return SHIM(cumprod)(a.tensor(0), a.i64(1), a.optional_dtype(2), a.ret(0)); }},
    {"aoti_torch_cpu_sort",
     [](CallArgs& a) { return SHIM(sort)(a.tensor(0), a.i64(1), a.boolean(2), a.ret(0), a.ret(1)); }},
    {"aoti_torch_cpu_sort_stable",
     [](CallArgs& a) {
       return SHIM(sort_stable)(a.tensor(0), a.optional_boolean(1), a.i64(2), a.boolean(3), a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu_topk",
     [](CallArgs& a) {
       return SHIM(topk)(a.tensor(0), a.i64(1), a.i64(2), a.boolean(3), a.boolean(4), a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu_scatter_src_out",
     [](CallArgs& a) { return SHIM(scatter_src_out)(a.tensor(0), a.tensor(1), a.i64(2), a.tensor(3), a.tensor(4)); }},
    {"aoti_torch_cpu_scatter_value_out",
     [](CallArgs& a) { return SHIM(scatter_value_out)(a.tensor(0), a.tensor(1), a.i64(2), a.tensor(3), a.f64(4)); }},
    {"aoti_torch_cpu_scatter_reduce_two_out",
     [](CallArgs& a) {
       return SHIM(scatter_reduce_two_out)(a.tensor(0), a.tensor(1), a.i64(2), a.tensor(3), a.tensor(4), a.str(5),
                                           a.boolean(6));
     }},
    {"aoti_torch_cpu_index_put",
     [](CallArgs& a) {
       return SHIM(index_put)(a.tensor(0), a.optional_tensors(1), a.count(1), a.tensor(2), a.boolean(3), a.ret(0));
     }},
    {"aoti_torch_cpu_nonzero", [](CallArgs& a) { return SHIM(nonzero)(a.tensor(0), a.ret(0)); }},
    {"aoti_torch_cpu__weight_int4pack_mm_cpu_tensor",
     [](CallArgs& a) {
       return SHIM(_weight_int4pack_mm_cpu_tensor)(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.ret(0));
     }},
    {"aoti_torch_cpu__weight_int8pack_mm",
     [](CallArgs& a) { return SHIM(_weight_int8pack_mm)(a.tensor(0), a.tensor(1), a.tensor(2), a.ret(0)); }},
    {"aoti_torch_cpu__embedding_bag",
     [](CallArgs& a) {
       return SHIM(_embedding_bag)(a.tensor(0), a.tensor(1), a.tensor(2), a.boolean(3), a.i64(4), a.boolean(5),
                                   a.optional_tensor(6), a.boolean(7), a.i64(8), a.ret(0), a.ret(1), a.ret(2),
                                   a.ret(3));
     }},
    {"aoti_torch_cpu__embedding_bag_forward_only",
     [](CallArgs& a) {
       return SHIM(_embedding_bag_forward_only)(a.tensor(0), a.tensor(1), a.tensor(2), a.boolean(3), a.i64(4),
                                                a.boolean(5), a.optional_tensor(6), a.boolean(7), a.i64(8), a.ret(0),
                                                a.ret(1), a.ret(2), a.ret(3));
     }},
});

}  // namespace
