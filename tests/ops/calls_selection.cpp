// Adapters for the selection group: order statistics, histograms, running extremes and logcumsumexp,
// index_reduce and segment_reduce, masked_select, masked_scatter and nonzero_static. SHIM(op) picks the CUDA twin
// under --device cuda; histogram and histogramdd have none in torch, so they call the CPU function.
#include "op_calls.hpp"

namespace {

using mpspack::test::CallArgs;

const bool registered = mpspack::test::register_op_calls({
    {"aoti_torch_cpu_median", [](CallArgs& a) { return SHIM(median)(a.tensor(0), a.ret(0)); }},
    {"aoti_torch_cpu_nanmedian", [](CallArgs& a) { return SHIM(nanmedian)(a.tensor(0), a.ret(0)); }},
    {"aoti_torch_cpu_kthvalue",
     [](CallArgs& a) { return SHIM(kthvalue)(a.tensor(0), a.i64(1), a.i64(2), a.boolean(3), a.ret(0), a.ret(1)); }},
    {"aoti_torch_cpu_mode",
     [](CallArgs& a) { return SHIM(mode)(a.tensor(0), a.i64(1), a.boolean(2), a.ret(0), a.ret(1)); }},
    {"aoti_torch_cpu_cummax", [](CallArgs& a) { return SHIM(cummax)(a.tensor(0), a.i64(1), a.ret(0), a.ret(1)); }},
    {"aoti_torch_cpu_cummin", [](CallArgs& a) { return SHIM(cummin)(a.tensor(0), a.i64(1), a.ret(0), a.ret(1)); }},
    {"aoti_torch_cpu_logcumsumexp", [](CallArgs& a) { return SHIM(logcumsumexp)(a.tensor(0), a.i64(1), a.ret(0)); }},
    {"aoti_torch_cpu_histc",
     [](CallArgs& a) { return SHIM(histc)(a.tensor(0), a.i64(1), a.f64(2), a.f64(3), a.ret(0)); }},
    {"aoti_torch_cpu_histogram_bin_ct",
     [](CallArgs& a) {
       return aoti_torch_cpu_histogram_bin_ct(a.tensor(0), a.i64(1), a.optional_floats(2), a.count(2),
                                              a.optional_tensor(3), a.boolean(4), a.ret(0), a.ret(1));
     }},
    {"aoti_torch_cpu__histogramdd_from_bin_cts",
     [](CallArgs& a) {
       return aoti_torch_cpu__histogramdd_from_bin_cts(a.tensor(0), a.ints(1), a.count(1), a.optional_floats(2),
                                                       a.count(2), a.optional_tensor(3), a.boolean(4), a.ret(0));
     }},
    {"aoti_torch_cpu_index_reduce",
     [](CallArgs& a) {
       return SHIM(index_reduce)(a.tensor(0), a.i64(1), a.tensor(2), a.tensor(3), a.str(4), a.boolean(5), a.ret(0));
     }},
    {"aoti_torch_cpu_segment_reduce",
     [](CallArgs& a) {
       return SHIM(segment_reduce)(a.tensor(0), a.str(1), a.optional_tensor(2), a.optional_tensor(3),
                                   a.optional_tensor(4), a.i64(5), a.boolean(6), a.optional_f64(7), a.ret(0));
     }},
    {"aoti_torch_cpu_masked_select",
     [](CallArgs& a) { return SHIM(masked_select)(a.tensor(0), a.tensor(1), a.ret(0)); }},
    {"aoti_torch_cpu_masked_scatter",
     [](CallArgs& a) { return SHIM(masked_scatter)(a.tensor(0), a.tensor(1), a.tensor(2), a.ret(0)); }},
    {"aoti_torch_cpu_nonzero_static",
     [](CallArgs& a) { return SHIM(nonzero_static)(a.tensor(0), a.i64(1), a.i64(2), a.ret(0)); }},
});

}  // namespace
