// Adapters for the views group: views, cat, pad, resizes, _efficientzerotensor, abs/angle/polar/gcd, and the
// device-generic c_shim_aten.h functions (amax, full, narrow, new_empty, new_zeros, pad).
#include "op_calls.hpp"

namespace {

using mpspack::test::CallArgs;

// SHIM(op) is the CPU function, or its CUDA twin under --device cuda; the aoti_torch_aten_* functions are the same
// on every device. The factory functions' layout, device and pin_memory arguments: the cases leave them out (None), so
// null pointers, and device index 0.
const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch_cpu_reshape", [](CallArgs& a) { return SHIM(reshape)(a.tensor(0), a.ints(1), a.count(1), a.ret(0)); }},
    {"aoti_torch_cpu_permute", [](CallArgs& a) { return SHIM(permute)(a.tensor(0), a.ints(1), a.count(1), a.ret(0)); }},
    {"aoti_torch_cpu_narrow",
     [](CallArgs& a) { return SHIM(narrow)(a.tensor(0), a.i64(1), a.i64(2), a.i64(3), a.ret(0)); }},
    {"aoti_torch_aten_narrow",
     [](CallArgs& a) { return aoti_torch_aten_narrow(a.tensor(0), a.i64(1), a.i64(2), a.i64(3), a.ret(0)); }},
    {"aoti_torch_cpu_squeeze_dim", [](CallArgs& a) { return SHIM(squeeze_dim)(a.tensor(0), a.i64(1), a.ret(0)); }},
    {"aoti_torch_cpu_view_dtype", [](CallArgs& a) { return SHIM(view_dtype)(a.tensor(0), a.dtype(1), a.ret(0)); }},
    {"aoti_torch_cpu_view_as_real", [](CallArgs& a) { return SHIM(view_as_real)(a.tensor(0), a.ret(0)); }},
    {"aoti_torch_cpu_view_as_complex", [](CallArgs& a) { return SHIM(view_as_complex)(a.tensor(0), a.ret(0)); }},
    {"aoti_torch_cpu_cat", [](CallArgs& a) { return SHIM(cat)(a.tensors(0), a.count(0), a.i64(1), a.ret(0)); }},
    {"aoti_torch_cpu_pad",
     [](CallArgs& a) { return SHIM(pad)(a.tensor(0), a.ints(1), a.count(1), a.str(2), a.optional_f64(3), a.ret(0)); }},
    {"aoti_torch_aten_pad",
     [](CallArgs& a) {
       return aoti_torch_aten_pad(a.tensor(0), a.ints(1), a.count(1), a.str(2), a.optional_f64(3), a.ret(0));
     }},
    {"aoti_torch_cpu_resize_",
     [](CallArgs& a) {
       // memory_format: an int32_t* like an optional dtype (the cases give c10's code or None).
       return SHIM(resize_)(a.tensor(0), a.ints(1), a.count(1), a.optional_dtype(2));
     }},
    {"aoti_torch_cpu_resize_as_",
     [](CallArgs& a) { return SHIM(resize_as_)(a.tensor(0), a.tensor(1), a.optional_dtype(2)); }},
    {"aoti_torch_cpu__efficientzerotensor",
     [](CallArgs& a) {
       return SHIM(_efficientzerotensor)(a.ints(0), a.count(0), a.optional_dtype(1), nullptr, nullptr, 0, nullptr,
                                         a.ret(0));
     }},
    {"aoti_torch_aten_full",
     [](CallArgs& a) {
       return aoti_torch_aten_full(a.ints(0), a.count(0), a.f64(1), a.optional_dtype(2), nullptr, nullptr, 0, nullptr,
                                   a.ret(0));
     }},
    {"aoti_torch_aten_new_empty",
     [](CallArgs& a) {
       return aoti_torch_aten_new_empty(a.tensor(0), a.ints(1), a.count(1), a.optional_dtype(2), nullptr, nullptr, 0,
                                        nullptr, a.ret(0));
     }},
    {"aoti_torch_aten_new_zeros",
     [](CallArgs& a) {
       return aoti_torch_aten_new_zeros(a.tensor(0), a.ints(1), a.count(1), a.optional_dtype(2), nullptr, nullptr, 0,
                                        nullptr, a.ret(0));
     }},
    {"aoti_torch_aten_amax",
     [](CallArgs& a) { return aoti_torch_aten_amax(a.tensor(0), a.ints(1), a.count(1), a.boolean(2), a.ret(0)); }},
    {"aoti_torch_cpu_abs", [](CallArgs& a) { return SHIM(abs)(a.tensor(0), a.ret(0)); }},
    {"aoti_torch_cpu_angle", [](CallArgs& a) { return SHIM(angle)(a.tensor(0), a.ret(0)); }},
    {"aoti_torch_cpu_polar", [](CallArgs& a) { return SHIM(polar)(a.tensor(0), a.tensor(1), a.ret(0)); }},
    {"aoti_torch_cpu_gcd", [](CallArgs& a) { return SHIM(gcd)(a.tensor(0), a.tensor(1), a.ret(0)); }},
});

}  // namespace
