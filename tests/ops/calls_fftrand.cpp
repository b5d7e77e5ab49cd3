// Adapters of the FFT, window, random and fused fake-quant functions (opcases/fftrand.py); SHIM(op) is the
// runner's device's function. The factory functions' device_index_ is not a case argument (it goes with device,
// which the cases leave at the default): 0.
#include "op_calls.hpp"

namespace {

using mpspack::test::CallArgs;

const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch_cpu__fft_r2c",
     [](CallArgs& a) { return SHIM(_fft_r2c)(a.tensor(0), a.ints(1), a.count(1), a.i64(2), a.boolean(3), a.ret(0)); }},
    {"aoti_torch_cpu__fft_c2c",
     [](CallArgs& a) { return SHIM(_fft_c2c)(a.tensor(0), a.ints(1), a.count(1), a.i64(2), a.boolean(3), a.ret(0)); }},
    {"aoti_torch_cpu_hann_window",
     [](CallArgs& a) {
       return SHIM(hann_window)(a.i64(0), a.optional_dtype(1), a.optional_boolean(2), a.optional_boolean(3), 0,
                                a.optional_boolean(4), a.ret(0));
     }},
    {"aoti_torch_cpu_rand",
     [](CallArgs& a) {
       return SHIM(rand)(a.ints(0), a.count(0), a.optional_dtype(1), a.optional_boolean(2), a.optional_boolean(3), 0,
                         a.optional_boolean(4), a.ret(0));
     }},
    {"aoti_torch_cpu_rand_generator",
     [](CallArgs& a) {
       return SHIM(rand_generator)(a.ints(0), a.count(0), a.generator(1), a.optional_dtype(2), a.optional_boolean(3),
                                   a.optional_boolean(4), 0, a.optional_boolean(5), a.ret(0));
     }},
    {"aoti_torch_cpu_randn",
     [](CallArgs& a) {
       return SHIM(randn)(a.ints(0), a.count(0), a.optional_dtype(1), a.optional_boolean(2), a.optional_boolean(3), 0,
                          a.optional_boolean(4), a.ret(0));
     }},
    {"aoti_torch_cpu_randn_generator",
     [](CallArgs& a) {
       return SHIM(randn_generator)(a.ints(0), a.count(0), a.generator(1), a.optional_dtype(2), a.optional_boolean(3),
                                    a.optional_boolean(4), 0, a.optional_boolean(5), a.ret(0));
     }},
    {"aoti_torch_cpu_randint",
     [](CallArgs& a) {
       return SHIM(randint)(a.i64(0), a.ints(1), a.count(1), a.optional_dtype(2), a.optional_boolean(3),
                            a.optional_boolean(4), 0, a.optional_boolean(5), a.ret(0));
     }},
    {"aoti_torch_cpu_randint_generator",
     [](CallArgs& a) {
       return SHIM(randint_generator)(a.i64(0), a.ints(1), a.count(1), a.generator(2), a.optional_dtype(3),
                                      a.optional_boolean(4), a.optional_boolean(5), 0, a.optional_boolean(6), a.ret(0));
     }},
    {"aoti_torch_cpu_randint_low",
     [](CallArgs& a) {
       return SHIM(randint_low)(a.i64(0), a.i64(1), a.ints(2), a.count(2), a.optional_dtype(3), a.optional_boolean(4),
                                a.optional_boolean(5), 0, a.optional_boolean(6), a.ret(0));
     }},
    {"aoti_torch_cpu_randint_low_out",
     [](CallArgs& a) { return SHIM(randint_low_out)(a.tensor(0), a.i64(1), a.i64(2), a.ints(3), a.count(3)); }},
    {"aoti_torch_cpu_randperm",
     [](CallArgs& a) {
       return SHIM(randperm)(a.i64(0), a.optional_dtype(1), a.optional_boolean(2), a.optional_boolean(3), 0,
                             a.optional_boolean(4), a.ret(0));
     }},
    {"aoti_torch_cpu_normal_functional",
     [](CallArgs& a) { return SHIM(normal_functional)(a.tensor(0), a.f64(1), a.f64(2), a.generator(3), a.ret(0)); }},
    {"aoti_torch_cpu_uniform",
     [](CallArgs& a) { return SHIM(uniform)(a.tensor(0), a.f64(1), a.f64(2), a.generator(3), a.ret(0)); }},
    {"aoti_torch_cpu_exponential",
     [](CallArgs& a) { return SHIM(exponential)(a.tensor(0), a.f64(1), a.generator(2), a.ret(0)); }},
    {"aoti_torch_cpu_bernoulli__float",
     [](CallArgs& a) { return SHIM(bernoulli__float)(a.tensor(0), a.f64(1), a.generator(2)); }},
    {"aoti_torch_cpu_native_dropout",
     [](CallArgs& a) {
       return SHIM(native_dropout)(a.tensor(0), a.f64(1), a.optional_boolean(2), a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu__fused_moving_avg_obs_fq_helper",
     [](CallArgs& a) {
       return SHIM(_fused_moving_avg_obs_fq_helper)(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.tensor(4),
                                                    a.tensor(5), a.tensor(6), a.f64(7), a.i64(8), a.i64(9), a.i64(10),
                                                    a.boolean(11), a.boolean(12), a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu__fused_moving_avg_obs_fq_helper_functional",
     [](CallArgs& a) {
       return SHIM(_fused_moving_avg_obs_fq_helper_functional)(
           a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3), a.tensor(4), a.tensor(5), a.tensor(6), a.f64(7),
           a.i64(8), a.i64(9), a.i64(10), a.boolean(11), a.boolean(12), a.ret(0), a.ret(1), a.ret(2), a.ret(3),
           a.ret(4), a.ret(5));
     }},
});

}  // namespace
