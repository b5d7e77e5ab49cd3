#include "provided.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <span>
#include <string>

namespace mpspack::shim {

const std::string& last_error_ref();
std::string_view last_error() { return last_error_ref(); }

namespace {

// Keep sorted; test_shim checks each name resolves in the test binary.
constexpr std::string_view kAotiSymbols[] = {
    "aoti_torch__alloc_from_pool",
    "aoti_torch__mm_plus_mm_out",
    "aoti_torch__reinterpret_tensor",
    "aoti_torch_abi_version",
    "aoti_torch_as_strided",
    "aoti_torch_assign_tensors",
    "aoti_torch_assign_tensors_out",
    "aoti_torch_aten_amax",
    "aoti_torch_aten_fill__Scalar",
    "aoti_torch_aten_full",
    "aoti_torch_aten_narrow",
    "aoti_torch_aten_new_empty",
    "aoti_torch_aten_new_zeros",
    "aoti_torch_aten_pad",
    "aoti_torch_aten_subtract_Tensor",
    "aoti_torch_check",
    "aoti_torch_check_inf_and_nan",
    "aoti_torch_clone",
    "aoti_torch_clone_preserve_strides",
    "aoti_torch_copy_",
    "aoti_torch_cpu__adaptive_avg_pool2d",
    "aoti_torch_cpu__adaptive_avg_pool3d",
    "aoti_torch_cpu__addmm_activation",
    "aoti_torch_cpu__cdist_forward",
    "aoti_torch_cpu__dyn_quant_matmul_4bit",
    "aoti_torch_cpu__dyn_quant_pack_4bit_weight",
    "aoti_torch_cpu__efficientzerotensor",
    "aoti_torch_cpu__embedding_bag",
    "aoti_torch_cpu__embedding_bag_forward_only",
    "aoti_torch_cpu__fft_c2c",
    "aoti_torch_cpu__fft_r2c",
    "aoti_torch_cpu__fused_moving_avg_obs_fq_helper",
    "aoti_torch_cpu__fused_moving_avg_obs_fq_helper_functional",
    "aoti_torch_cpu__fused_rms_norm",
    "aoti_torch_cpu__histogramdd_from_bin_cts",
    "aoti_torch_cpu__int_mm_out",
    "aoti_torch_cpu__pdist_forward",
    "aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu",
    "aoti_torch_cpu__scaled_mm",
    "aoti_torch_cpu__scaled_mm_out",
    "aoti_torch_cpu__trilinear",
    "aoti_torch_cpu__weight_int4pack_mm_cpu_tensor",
    "aoti_torch_cpu__weight_int8pack_mm",
    "aoti_torch_cpu__wrapped_linear_prepack",
    "aoti_torch_cpu__wrapped_quantized_linear_prepacked",
    "aoti_torch_cpu_abs",
    "aoti_torch_cpu_adaptive_max_pool2d",
    "aoti_torch_cpu_adaptive_max_pool3d",
    "aoti_torch_cpu_add_Scalar",
    "aoti_torch_cpu_add_Tensor",
    "aoti_torch_cpu_addbmm",
    "aoti_torch_cpu_addmm_out",
    "aoti_torch_cpu_addmv",
    "aoti_torch_cpu_angle",
    "aoti_torch_cpu_avg_pool2d",
    "aoti_torch_cpu_avg_pool3d",
    "aoti_torch_cpu_baddbmm_out",
    "aoti_torch_cpu_bernoulli__Tensor",
    "aoti_torch_cpu_bernoulli__float",
    "aoti_torch_cpu_bmm_out",
    "aoti_torch_cpu_bucketize_Tensor",
    "aoti_torch_cpu_cat",
    "aoti_torch_cpu_cholesky_inverse",
    "aoti_torch_cpu_cholesky_solve",
    "aoti_torch_cpu_convolution",
    "aoti_torch_cpu_cummax",
    "aoti_torch_cpu_cummin",
    "aoti_torch_cpu_cumprod",
    "aoti_torch_cpu_cumsum",
    "aoti_torch_cpu_exponential",
    "aoti_torch_cpu_fill__Scalar",
    "aoti_torch_cpu_fractional_max_pool2d",
    "aoti_torch_cpu_fractional_max_pool3d",
    "aoti_torch_cpu_gcd",
    "aoti_torch_cpu_geqrf",
    "aoti_torch_cpu_hann_window",
    "aoti_torch_cpu_histc",
    "aoti_torch_cpu_histogram_bin_ct",
    "aoti_torch_cpu_index_Tensor",
    "aoti_torch_cpu_index_put",
    "aoti_torch_cpu_index_reduce",
    "aoti_torch_cpu_kthvalue",
    "aoti_torch_cpu_logcumsumexp",
    "aoti_torch_cpu_lu_unpack",
    "aoti_torch_cpu_masked_scatter",
    "aoti_torch_cpu_masked_select",
    "aoti_torch_cpu_max_pool2d_with_indices",
    "aoti_torch_cpu_max_pool3d_with_indices",
    "aoti_torch_cpu_max_unpool2d",
    "aoti_torch_cpu_max_unpool3d",
    "aoti_torch_cpu_median",
    "aoti_torch_cpu_mm_out",
    "aoti_torch_cpu_mode",
    "aoti_torch_cpu_mul_Scalar",
    "aoti_torch_cpu_mul_Tensor",
    "aoti_torch_cpu_nanmedian",
    "aoti_torch_cpu_narrow",
    "aoti_torch_cpu_native_dropout",
    "aoti_torch_cpu_nonzero",
    "aoti_torch_cpu_nonzero_static",
    "aoti_torch_cpu_normal_functional",
    "aoti_torch_cpu_ormqr",
    "aoti_torch_cpu_pad",
    "aoti_torch_cpu_permute",
    "aoti_torch_cpu_polar",
    "aoti_torch_cpu_pow_Scalar",
    "aoti_torch_cpu_pow_Tensor_Scalar",
    "aoti_torch_cpu_pow_Tensor_Tensor",
    "aoti_torch_cpu_rand",
    "aoti_torch_cpu_rand_generator",
    "aoti_torch_cpu_randint",
    "aoti_torch_cpu_randint_generator",
    "aoti_torch_cpu_randint_low",
    "aoti_torch_cpu_randint_low_out",
    "aoti_torch_cpu_randn",
    "aoti_torch_cpu_randn_generator",
    "aoti_torch_cpu_randperm",
    "aoti_torch_cpu_repeat_interleave_Tensor",
    "aoti_torch_cpu_reshape",
    "aoti_torch_cpu_resize_",
    "aoti_torch_cpu_resize_as_",
    "aoti_torch_cpu_scatter_reduce_two_out",
    "aoti_torch_cpu_scatter_src_out",
    "aoti_torch_cpu_scatter_value_out",
    "aoti_torch_cpu_searchsorted_Scalar",
    "aoti_torch_cpu_searchsorted_Tensor",
    "aoti_torch_cpu_segment_reduce",
    "aoti_torch_cpu_set__source_Tensor",
    "aoti_torch_cpu_slice_Tensor",
    "aoti_torch_cpu_sort",
    "aoti_torch_cpu_sort_stable",
    "aoti_torch_cpu_squeeze_dim",
    "aoti_torch_cpu_topk",
    "aoti_torch_cpu_triangular_solve",
    "aoti_torch_cpu_uniform",
    "aoti_torch_cpu_view_as_complex",
    "aoti_torch_cpu_view_as_real",
    "aoti_torch_cpu_view_dtype",
    "aoti_torch_cpu_wrapped_fbgemm_linear_fp16_weight",
    "aoti_torch_cpu_wrapped_fbgemm_pack_gemm_matrix_fp16",
    "aoti_torch_create_device_guard",
    "aoti_torch_create_tensor_from_blob",
    "aoti_torch_create_tensor_from_blob_v2",
    "aoti_torch_delete_device_guard",
    "aoti_torch_delete_stream",
    "aoti_torch_delete_tensor_object",
    "aoti_torch_device_guard_set_index",
    "aoti_torch_device_type_cpu",
    "aoti_torch_device_type_cuda",
    "aoti_torch_device_type_meta",
    "aoti_torch_device_type_mps",
    "aoti_torch_device_type_privateuse1",
    "aoti_torch_device_type_xpu",
    "aoti_torch_dtype_bfloat16",
    "aoti_torch_dtype_bool",
    "aoti_torch_dtype_complex128",
    "aoti_torch_dtype_complex32",
    "aoti_torch_dtype_complex64",
    "aoti_torch_dtype_element_size",
    "aoti_torch_dtype_float16",
    "aoti_torch_dtype_float32",
    "aoti_torch_dtype_float64",
    "aoti_torch_dtype_float8_e4m3fn",
    "aoti_torch_dtype_float8_e4m3fnuz",
    "aoti_torch_dtype_float8_e5m2",
    "aoti_torch_dtype_float8_e5m2fnuz",
    "aoti_torch_dtype_int16",
    "aoti_torch_dtype_int32",
    "aoti_torch_dtype_int64",
    "aoti_torch_dtype_int8",
    "aoti_torch_dtype_uint16",
    "aoti_torch_dtype_uint32",
    "aoti_torch_dtype_uint64",
    "aoti_torch_dtype_uint8",
    "aoti_torch_empty_strided",
    "aoti_torch_empty_strided_pinned",
    "aoti_torch_get_const_data_ptr",
    "aoti_torch_get_current_device_index",
    "aoti_torch_get_current_stream",
    "aoti_torch_get_data_ptr",
    "aoti_torch_get_device_index",
    "aoti_torch_get_device_type",
    "aoti_torch_get_dim",
    "aoti_torch_get_dtype",
    "aoti_torch_get_layout",
    "aoti_torch_get_mutable_data_ptr",
    "aoti_torch_get_numel",
    "aoti_torch_get_size",
    "aoti_torch_get_sizes",
    "aoti_torch_get_storage_numel",
    "aoti_torch_get_storage_offset",
    "aoti_torch_get_storage_size",
    "aoti_torch_get_stride",
    "aoti_torch_get_strides",
    "aoti_torch_grad_mode_is_enabled",
    "aoti_torch_grad_mode_set_enabled",
    "aoti_torch_index_put_out",
    "aoti_torch_is_contiguous",
    "aoti_torch_is_defined",
    "aoti_torch_item_bfloat16",
    "aoti_torch_item_bool",
    "aoti_torch_item_complex64",
    "aoti_torch_item_float16",
    "aoti_torch_item_float32",
    "aoti_torch_item_float64",
    "aoti_torch_item_int16",
    "aoti_torch_item_int32",
    "aoti_torch_item_int64",
    "aoti_torch_item_int8",
    "aoti_torch_item_uint16",
    "aoti_torch_item_uint32",
    "aoti_torch_item_uint64",
    "aoti_torch_item_uint8",
    "aoti_torch_layout__mkldnn",
    "aoti_torch_layout_jagged",
    "aoti_torch_layout_sparse_bsc",
    "aoti_torch_layout_sparse_bsr",
    "aoti_torch_layout_sparse_coo",
    "aoti_torch_layout_sparse_csc",
    "aoti_torch_layout_sparse_csr",
    "aoti_torch_layout_strided",
    "aoti_torch_memory_format_channels_last",
    "aoti_torch_memory_format_channels_last_3d",
    "aoti_torch_memory_format_contiguous_format",
    "aoti_torch_memory_format_preserve_format",
    "aoti_torch_new_tensor_handle",
    "aoti_torch_new_uninitialized_tensor",
    "aoti_torch_print_tensor_handle",
    "aoti_torch_save_tensor_handle",
    "aoti_torch_scalar_to_tensor_bool",
    "aoti_torch_scalar_to_tensor_complex128",
    "aoti_torch_scalar_to_tensor_complex64",
    "aoti_torch_scalar_to_tensor_float32",
    "aoti_torch_scalar_to_tensor_float64",
    "aoti_torch_scalar_to_tensor_int16",
    "aoti_torch_scalar_to_tensor_int32",
    "aoti_torch_scalar_to_tensor_int64",
    "aoti_torch_scalar_to_tensor_int8",
    "aoti_torch_scalar_to_tensor_uint16",
    "aoti_torch_scalar_to_tensor_uint32",
    "aoti_torch_scalar_to_tensor_uint64",
    "aoti_torch_scalar_to_tensor_uint8",
    "aoti_torch_scatter_out",
    "aoti_torch_scatter_reduce_out",
    "aoti_torch_stream_id",
    "aoti_torch_tensor_copy_",
    "aoti_torch_warn",
    "aoti_torch_zero_",
};

// Generated at configure time from the dynamic symbols of the libsleef the loader opens (CMakeLists.txt).
constexpr std::string_view kSleefSymbols[] = {
#include "sleef_symbols.inc"
};

}  // namespace

bool pin_openmp_runtime() {
  // RTLD_NOLOAD: only if a model already brought it; RTLD_NODELETE: never unload it from now on. The handle is
  // deliberately not closed.
  return dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
}

namespace {
std::vector<std::pair<const std::string_view*, std::size_t>>& registered_symbols() {
  static std::vector<std::pair<const std::string_view*, std::size_t>> lists;  // made on first use: no init order issue
  return lists;
}
}  // namespace

bool register_provided_symbols(const std::string_view* names, std::size_t count) {
  registered_symbols().emplace_back(names, count);
  return true;
}

namespace {
// Calls f on each sorted list of provided names (aoti_torch_*, Sleef_*, each registered one) until it returns true.
template <class F>
bool any_name_list(F&& f) {
  using List = std::span<const std::string_view>;
  if (f(List(kAotiSymbols)) || f(List(kSleefSymbols))) return true;
  for (const auto& [names, count] : registered_symbols())
    if (f(List(names, count))) return true;
  return false;
}
}  // namespace

std::vector<std::string_view> mpspack_shim_provided_symbols() {
  // Every list is written or generated sorted, so they are merged rather than sorted: sorting ~1,500 names
  // with long common prefixes on every call would be a sixth of what `inspect` costs (test_shim_symbols checks
  // the order).
  std::vector<std::string_view> out;
  any_name_list([&out](std::span<const std::string_view> list) {
    const auto middle = out.insert(out.end(), list.begin(), list.end());
    std::inplace_merge(out.begin(), middle, out.end());
    return false;
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool shim_provides(std::string_view name) {
  return any_name_list(
      [name](std::span<const std::string_view> list) { return std::binary_search(list.begin(), list.end(), name); });
}

}  // namespace mpspack::shim
