// Stand-ins for the C shim functions the rebuilt-bookworm fixtures import (nm -D --undefined-only),
// exported from test_elf (ENABLE_EXPORTS) so dlopen can run the libraries' static initializers,
// which ask for dtype / device / layout codes. The codes are c10's (aoti-abi.md section 3). Nothing
// here runs a model: every other function fails with code 1 if ever called.
#include <cstdint>

extern "C" {
int32_t aoti_torch_device_type_cpu() { return 0; }
int32_t aoti_torch_device_type_cuda() { return 1; }
int32_t aoti_torch_dtype_float32() { return 6; }
int32_t aoti_torch_dtype_int64() { return 4; }
int32_t aoti_torch_layout_strided() { return 0; }
bool aoti_torch_grad_mode_is_enabled() { return false; }
void aoti_torch_grad_mode_set_enabled(bool) {}
void aoti_torch_check(bool, const char*, const char*, uint32_t, const char*) {}

#define MPK_FAILING_STUB(name) \
  int32_t name() { return 1; }
MPK_FAILING_STUB(aoti_torch__reinterpret_tensor)
MPK_FAILING_STUB(aoti_torch_clone)
MPK_FAILING_STUB(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu)
MPK_FAILING_STUB(aoti_torch_cpu_addmm_out)
MPK_FAILING_STUB(aoti_torch_cpu_convolution)
MPK_FAILING_STUB(aoti_torch_cpu_mm_out)
MPK_FAILING_STUB(aoti_torch_create_tensor_from_blob)
MPK_FAILING_STUB(aoti_torch_create_tensor_from_blob_v2)
MPK_FAILING_STUB(aoti_torch_delete_tensor_object)
MPK_FAILING_STUB(aoti_torch_empty_strided)
MPK_FAILING_STUB(aoti_torch_get_data_ptr)
MPK_FAILING_STUB(aoti_torch_get_device_type)
MPK_FAILING_STUB(aoti_torch_get_dtype)
MPK_FAILING_STUB(aoti_torch_get_sizes)
MPK_FAILING_STUB(aoti_torch_get_storage_offset)
MPK_FAILING_STUB(aoti_torch_get_storage_size)
MPK_FAILING_STUB(aoti_torch_get_strides)
MPK_FAILING_STUB(aoti_torch_new_tensor_handle)
#undef MPK_FAILING_STUB
}
