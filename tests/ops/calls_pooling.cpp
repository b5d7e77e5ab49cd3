// Adapters for the pooling functions (opcases/pooling.py): SHIM(op) is the runner's device's function.
#include "op_calls.hpp"

namespace {

using mpspack::test::CallArgs;

const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch_cpu_max_pool2d_with_indices",
     [](CallArgs& a) {
       return SHIM(max_pool2d_with_indices)(a.tensor(0), a.ints(1), a.count(1), a.ints(2), a.count(2), a.ints(3),
                                            a.count(3), a.ints(4), a.count(4), a.boolean(5), a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu_max_pool3d_with_indices",
     [](CallArgs& a) {
       return SHIM(max_pool3d_with_indices)(a.tensor(0), a.ints(1), a.count(1), a.ints(2), a.count(2), a.ints(3),
                                            a.count(3), a.ints(4), a.count(4), a.boolean(5), a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu_avg_pool2d",
     [](CallArgs& a) {
       return SHIM(avg_pool2d)(a.tensor(0), a.ints(1), a.count(1), a.ints(2), a.count(2), a.ints(3), a.count(3),
                               a.boolean(4), a.boolean(5), a.optional_i64(6), a.ret(0));
     }},
    {"aoti_torch_cpu_avg_pool3d",
     [](CallArgs& a) {
       return SHIM(avg_pool3d)(a.tensor(0), a.ints(1), a.count(1), a.ints(2), a.count(2), a.ints(3), a.count(3),
                               a.boolean(4), a.boolean(5), a.optional_i64(6), a.ret(0));
     }},
    {"aoti_torch_cpu__adaptive_avg_pool2d",
     [](CallArgs& a) { return SHIM(_adaptive_avg_pool2d)(a.tensor(0), a.ints(1), a.count(1), a.ret(0)); }},
    {"aoti_torch_cpu__adaptive_avg_pool3d",
     [](CallArgs& a) { return SHIM(_adaptive_avg_pool3d)(a.tensor(0), a.ints(1), a.count(1), a.ret(0)); }},
    {"aoti_torch_cpu_adaptive_max_pool2d",
     [](CallArgs& a) { return SHIM(adaptive_max_pool2d)(a.tensor(0), a.ints(1), a.count(1), a.ret(0), a.ret(1)); }},
    {"aoti_torch_cpu_adaptive_max_pool3d",
     [](CallArgs& a) { return SHIM(adaptive_max_pool3d)(a.tensor(0), a.ints(1), a.count(1), a.ret(0), a.ret(1)); }},
    {"aoti_torch_cpu_fractional_max_pool2d",
     [](CallArgs& a) {
       return SHIM(fractional_max_pool2d)(a.tensor(0), a.ints(1), a.count(1), a.ints(2), a.count(2), a.tensor(3),
                                          a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu_fractional_max_pool3d",
     [](CallArgs& a) {
       return SHIM(fractional_max_pool3d)(a.tensor(0), a.ints(1), a.count(1), a.ints(2), a.count(2), a.tensor(3),
                                          a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu_max_unpool2d",
     [](CallArgs& a) { return SHIM(max_unpool2d)(a.tensor(0), a.tensor(1), a.ints(2), a.count(2), a.ret(0)); }},
    {"aoti_torch_cpu_max_unpool3d",
     [](CallArgs& a) {
       return SHIM(max_unpool3d)(a.tensor(0), a.tensor(1), a.ints(2), a.count(2), a.ints(3), a.count(3), a.ints(4),
                                 a.count(4), a.ret(0));
     }},
});

}  // namespace
