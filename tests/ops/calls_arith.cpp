// Adapters for the arithmetic group beyond the reference lists: mul, add, subtract, pow, fill_, slice, index,
// searchsorted, bucketize, repeat_interleave, set_, bernoulli_ with a tensor of probabilities.
#include "op_calls.hpp"

namespace {

using mpspack::test::CallArgs;

const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch_cpu_mul_Tensor", [](CallArgs& a) { return SHIM(mul_Tensor)(a.tensor(0), a.tensor(1), a.ret(0)); }},
    {"aoti_torch_cpu_mul_Scalar", [](CallArgs& a) { return SHIM(mul_Scalar)(a.tensor(0), a.f64(1), a.ret(0)); }},
    {"aoti_torch_cpu_add_Tensor",
     [](CallArgs& a) { return SHIM(add_Tensor)(a.tensor(0), a.tensor(1), a.f64(2), a.ret(0)); }},
    {"aoti_torch_cpu_add_Scalar",
     [](CallArgs& a) { return SHIM(add_Scalar)(a.tensor(0), a.f64(1), a.f64(2), a.ret(0)); }},
    {"aoti_torch_aten_subtract_Tensor",
     [](CallArgs& a) { return aoti_torch_aten_subtract_Tensor(a.tensor(0), a.tensor(1), a.f64(2), a.ret(0)); }},
    {"aoti_torch_cpu_pow_Tensor_Tensor",
     [](CallArgs& a) { return SHIM(pow_Tensor_Tensor)(a.tensor(0), a.tensor(1), a.ret(0)); }},
    {"aoti_torch_cpu_pow_Tensor_Scalar",
     [](CallArgs& a) { return SHIM(pow_Tensor_Scalar)(a.tensor(0), a.f64(1), a.ret(0)); }},
    {"aoti_torch_cpu_pow_Scalar", [](CallArgs& a) { return SHIM(pow_Scalar)(a.f64(0), a.tensor(1), a.ret(0)); }},
    {"aoti_torch_cpu_fill__Scalar", [](CallArgs& a) { return SHIM(fill__Scalar)(a.tensor(0), a.f64(1)); }},
    {"aoti_torch_aten_fill__Scalar", [](CallArgs& a) { return aoti_torch_aten_fill__Scalar(a.tensor(0), a.f64(1)); }},
    {"aoti_torch_cpu_index_Tensor",
     [](CallArgs& a) { return SHIM(index_Tensor)(a.tensor(0), a.optional_tensors(1), a.count(1), a.ret(0)); }},
    {"aoti_torch_cpu_searchsorted_Tensor",
     [](CallArgs& a) {
       return SHIM(searchsorted_Tensor)(a.tensor(0), a.tensor(1), a.boolean(2), a.boolean(3), a.optional_str(4),
                                        a.optional_tensor(5), a.ret(0));
     }},
    {"aoti_torch_cpu_searchsorted_Scalar",
     [](CallArgs& a) {
       return SHIM(searchsorted_Scalar)(a.tensor(0), a.f64(1), a.boolean(2), a.boolean(3), a.optional_str(4),
                                        a.optional_tensor(5), a.ret(0));
     }},
    {"aoti_torch_cpu_bucketize_Tensor",
     [](CallArgs& a) {
       return SHIM(bucketize_Tensor)(a.tensor(0), a.tensor(1), a.boolean(2), a.boolean(3), a.ret(0));
     }},
    {"aoti_torch_cpu_repeat_interleave_Tensor",
     [](CallArgs& a) { return SHIM(repeat_interleave_Tensor)(a.tensor(0), a.optional_i64(1), a.ret(0)); }},
    {"aoti_torch_cpu_set__source_Tensor",
     [](CallArgs& a) { return SHIM(set__source_Tensor)(a.tensor(0), a.tensor(1)); }},
    {"aoti_torch_cpu_bernoulli__Tensor",
     [](CallArgs& a) { return SHIM(bernoulli__Tensor)(a.tensor(0), a.tensor(1), a.generator(2)); }},
    {"aoti_torch_cpu_slice_Tensor",
     [](CallArgs& a) {
       return SHIM(slice_Tensor)(a.tensor(0), a.i64(1), a.optional_i64(2), a.optional_i64(3), a.i64(4), a.ret(0));
     }},
});

}  // namespace
