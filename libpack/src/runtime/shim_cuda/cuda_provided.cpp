// The names the CUDA part of the shim adds to what mpspack provides to a model library: its aoti_torch_*
// functions and the CUDA runtime (cuda*) of the shared libcudart it brings. Compiled into the executable, not
// the plugin, so that `inspect` knows them without opening it. The driver functions (cu*) a library imports come
// from libcuda.so.1, which it names itself. Sorted: the aoti names, then the generated (sorted) cuda* names.
#include "runtime/shim/provided.hpp"

#include <string_view>

namespace mpspack::shim::cuda {
namespace {

constexpr std::string_view kNames[] = {
    "aoti_torch_create_cuda_guard",
    "aoti_torch_create_cuda_stream_guard",
    "aoti_torch_cuda__addmm_activation",
    "aoti_torch_cuda__efficient_attention_forward",
    "aoti_torch_cuda__embedding_bag",
    "aoti_torch_cuda__embedding_bag_forward_only",
    "aoti_torch_cuda__flash_attention_forward",
    "aoti_torch_cuda__scaled_dot_product_cudnn_attention",
    "aoti_torch_cuda__scaled_dot_product_efficient_attention",
    "aoti_torch_cuda__scaled_dot_product_flash_attention",
    "aoti_torch_cuda__scaled_grouped_mm",
    "aoti_torch_cuda__thnn_fused_lstm_cell",
    "aoti_torch_cuda__weight_int4pack_mm",
    "aoti_torch_cuda_addmm_out",
    "aoti_torch_cuda_baddbmm_out",
    "aoti_torch_cuda_bmm_out",
    "aoti_torch_cuda_caching_allocator_raw_alloc",
    "aoti_torch_cuda_caching_allocator_raw_delete",
    "aoti_torch_cuda_convolution",
    "aoti_torch_cuda_cumsum",
    "aoti_torch_cuda_guard_set_index",
    "aoti_torch_cuda_mm_dtype_out",
    "aoti_torch_cuda_mm_out",
    "aoti_torch_delete_cuda_guard",
    "aoti_torch_delete_cuda_stream_guard",
    "aoti_torch_get_current_cuda_stream",
// Generated at configure time from the libcudart the plugin links (CMakeLists.txt).
#include "cudart_symbols.inc"
};

// The fallbacks run on the CPU shim through host copies (host_bridge.hpp), generated in sorted order.
constexpr std::string_view kHostBridged[] = {
#include "cuda_host_bridge_names.inc"
};

const bool g_registered = register_provided_symbols(kNames, std::size(kNames)) &&
                          register_provided_symbols(kHostBridged, std::size(kHostBridged));

}  // namespace

// Referenced by the backend so that the linker keeps this object (and its registration).
bool shim_registered() { return g_registered; }

}  // namespace mpspack::shim::cuda
