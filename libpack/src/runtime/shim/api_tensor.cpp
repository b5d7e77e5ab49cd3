// The C shim's constants, handle functions and copies (torch/csrc/inductor/aoti_torch/c/shim.h semantics).
#include "aoti_shim.h"
#include "tensor.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace mpspack::shim;

namespace {

thread_local bool t_grad_enabled = true;

template <class T>
T& out_ref(T* p, const char* name) {
  if (p == nullptr) fail(std::string(name) + " is null");
  return *p;
}

// The tensor of a handle, defined or not (torch copies, assigns and deletes undefined tensors too).
Tensor& handle_ref(AtenTensorHandle h, const char* what) {
  if (h == nullptr) fail(std::string(what) + " handle is null");
  return *h;
}

std::span<const int64_t> arr(const int64_t* p, int64_t n, const char* what) {
  if (n < 0) fail(std::string(what) + ": negative ndim");
  if (n > 0 && p == nullptr) fail(std::string(what) + " is null");
  return {p, static_cast<std::size_t>(n)};
}

Tensor* view_of(const Tensor& base, int32_t dtype, std::span<const int64_t> sizes, std::span<const int64_t> strides,
                int64_t storage_offset) {
  if (storage_offset < 0) fail("negative storage offset " + std::to_string(storage_offset));
  auto t = std::make_unique<Tensor>();
  t->storage = base.storage;
  t->dtype = dtype;
  t->storage_offset = storage_offset;
  t->sizes.assign(sizes.begin(), sizes.end());
  t->strides.assign(strides.begin(), strides.end());
  t->sizes.reserve(1);
  t->strides.reserve(1);
  return t.release();
}

// omp_in_parallel() of the OpenMP runtime the model library brought, if any.
bool in_openmp_parallel_region() {
  // Looked up on every (failing) check, not cached: the runtime may be loaded or unloaded with the models.
  using Fn = int (*)();
  const auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "omp_in_parallel"));
  return fn != nullptr && fn() != 0;
}

template <class T>
AOTITorchError item(AtenTensorHandle h, T* ret, const char* func) {
  return guarded(func, [&] {
    const Tensor& t = deref(h);
    require_cpu(t, func);
    if (t.numel() != 1) fail("item() of a tensor with " + std::to_string(t.numel()) + " elements");
    const double v = load_as_double(t.data(), t.dtype);
    if constexpr (std::is_same_v<T, bool>) {
      out_ref(ret, "ret_value") = v != 0.0;
    } else {
      out_ref(ret, "ret_value") = static_cast<T>(v);
    }
  });
}

template <class T>
AOTITorchError scalar_to_tensor(T value, int32_t dtype, AtenTensorHandle* ret, const char* func) {
  return guarded(func, [&] {
    Tensor* t = new_tensor({}, {}, dtype);
    std::memcpy(t->data(), &value, sizeof(T));
    out_ref(ret, "ret_new_tensor") = t;
  });
}

}  // namespace

extern "C" {

int32_t aoti_torch_device_type_cpu(void) { return kCpu; }
int32_t aoti_torch_device_type_cuda(void) { return kCuda; }
int32_t aoti_torch_device_type_mps(void) { return kMps; }

int32_t aoti_torch_dtype_bfloat16(void) { return static_cast<int32_t>(DType::bf16); }
int32_t aoti_torch_dtype_float16(void) { return static_cast<int32_t>(DType::f16); }
int32_t aoti_torch_dtype_float32(void) { return static_cast<int32_t>(DType::f32); }
int32_t aoti_torch_dtype_float64(void) { return static_cast<int32_t>(DType::f64); }
int32_t aoti_torch_dtype_uint8(void) { return static_cast<int32_t>(DType::u8); }
int32_t aoti_torch_dtype_int8(void) { return static_cast<int32_t>(DType::i8); }
int32_t aoti_torch_dtype_int16(void) { return static_cast<int32_t>(DType::i16); }
int32_t aoti_torch_dtype_int32(void) { return static_cast<int32_t>(DType::i32); }
int32_t aoti_torch_dtype_int64(void) { return static_cast<int32_t>(DType::i64); }
int32_t aoti_torch_dtype_bool(void) { return static_cast<int32_t>(DType::boolean); }
int32_t aoti_torch_dtype_complex32(void) { return mpspack::dtype::complex32; }
int32_t aoti_torch_dtype_complex64(void) { return mpspack::dtype::complex64; }
int32_t aoti_torch_dtype_complex128(void) { return mpspack::dtype::complex128; }
int32_t aoti_torch_dtype_float8_e5m2(void) { return mpspack::dtype::float8_e5m2; }
int32_t aoti_torch_dtype_float8_e4m3fn(void) { return mpspack::dtype::float8_e4m3fn; }
int32_t aoti_torch_dtype_float8_e5m2fnuz(void) { return mpspack::dtype::float8_e5m2fnuz; }
int32_t aoti_torch_dtype_float8_e4m3fnuz(void) { return mpspack::dtype::float8_e4m3fnuz; }
int32_t aoti_torch_dtype_uint16(void) { return mpspack::dtype::uint16; }
int32_t aoti_torch_dtype_uint32(void) { return mpspack::dtype::uint32; }
int32_t aoti_torch_dtype_uint64(void) { return mpspack::dtype::uint64; }

size_t aoti_torch_dtype_element_size(int32_t dtype) {
  try {
    return element_size(dtype);
  } catch (...) { return 0; }
}

int32_t aoti_torch_layout_strided(void) { return kLayoutStrided; }

int32_t aoti_torch_memory_format_contiguous_format(void) { return 0; }
int32_t aoti_torch_memory_format_preserve_format(void) { return 1; }
int32_t aoti_torch_memory_format_channels_last(void) { return 2; }
int32_t aoti_torch_memory_format_channels_last_3d(void) { return 3; }

bool aoti_torch_grad_mode_is_enabled(void) { return t_grad_enabled; }
void aoti_torch_grad_mode_set_enabled(bool enabled) { t_grad_enabled = enabled; }

void aoti_torch_check(bool cond, const char* func, const char* file, uint32_t line, const char* msg) {
  if (cond) return;
  std::string text = std::string(msg ? msg : "check failed") + " (" + (func ? func : "?") + " at " +
                     (file ? file : "?") + ":" + std::to_string(line) + ")";
  if (in_openmp_parallel_region()) {
    // No exception can leave an OpenMP region and returning would let the kernel go on past a failed
    // invariant (for an index check: read out of bounds). Say why, then stop.
    std::fprintf(stderr, "Error: mpspack shim: model check failed inside a parallel region: %s\n", text.c_str());
    std::abort();
  }
  // The model library's C API catches std::exception and returns error code 1 (torch throws c10::Error).
  throw ShimError(text);
}

void aoti_torch_warn(const char* func, const char* file, uint32_t line, const char* msg) {
  std::fprintf(stderr, "Warning: %s (%s at %s:%u)\n", msg ? msg : "", func ? func : "?", file ? file : "?",
               static_cast<unsigned>(line));
}

AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor) {
  return guarded(__func__, [&] { delete &handle_ref(tensor, "tensor"); });
}

AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr) {
  return guarded(__func__, [&] { out_ref(ret_data_ptr, "ret_data_ptr") = deref(tensor).data(); });
}
AOTITorchError aoti_torch_get_mutable_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr) {
  return aoti_torch_get_data_ptr(tensor, ret_data_ptr);
}
AOTITorchError aoti_torch_get_const_data_ptr(AtenTensorHandle tensor, const void** ret_data_ptr) {
  return guarded(__func__, [&] { out_ref(ret_data_ptr, "ret_data_ptr") = deref(tensor).data(); });
}

AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle tensor, int64_t* ret_size) {
  return guarded(__func__,
                 [&] { out_ref(ret_size, "ret_size") = static_cast<int64_t>(deref(tensor).storage->nbytes); });
}
AOTITorchError aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret_dim) {
  return guarded(__func__, [&] { out_ref(ret_dim, "ret_dim") = deref(tensor).dim(); });
}
AOTITorchError aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret_numel) {
  return guarded(__func__, [&] { out_ref(ret_numel, "ret_numel") = deref(tensor).numel(); });
}
AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle tensor, int64_t* ret_numel) {
  return guarded(__func__, [&] {
    const Tensor& t = deref(tensor);
    out_ref(ret_numel, "ret_numel") = static_cast<int64_t>(t.storage->nbytes / t.itemsize());
  });
}
AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret_sizes) {
  return guarded(__func__, [&] { out_ref(ret_sizes, "ret_sizes") = deref(tensor).sizes.data(); });
}
AOTITorchError aoti_torch_get_size(AtenTensorHandle tensor, int64_t d, int64_t* ret_size) {
  return guarded(__func__, [&] {
    const Tensor& t = deref(tensor);
    const int64_t i = d < 0 ? d + t.dim() : d;
    if (i < 0 || i >= t.dim()) fail("dim " + std::to_string(d) + " out of range");
    out_ref(ret_size, "ret_size") = t.sizes[i];
  });
}
AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret_strides) {
  return guarded(__func__, [&] { out_ref(ret_strides, "ret_strides") = deref(tensor).strides.data(); });
}
AOTITorchError aoti_torch_get_stride(AtenTensorHandle tensor, int64_t d, int64_t* ret_stride) {
  return guarded(__func__, [&] {
    const Tensor& t = deref(tensor);
    const int64_t i = d < 0 ? d + t.dim() : d;
    if (i < 0 || i >= t.dim()) fail("dim " + std::to_string(d) + " out of range");
    out_ref(ret_stride, "ret_stride") = t.strides[i];
  });
}
AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret_dtype) {
  return guarded(__func__, [&] { out_ref(ret_dtype, "ret_dtype") = deref(tensor).dtype; });
}
AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret_device_type) {
  return guarded(__func__, [&] { out_ref(ret_device_type, "ret_device_type") = deref(tensor).device_type(); });
}
AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret_device_index) {
  return guarded(__func__,
                 [&] { out_ref(ret_device_index, "ret_device_index") = deref(tensor).storage->device_index; });
}
AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor, int32_t* ret_layout) {
  return guarded(__func__, [&] {
    deref(tensor);
    out_ref(ret_layout, "ret_layout") = kLayoutStrided;
  });
}
AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor, int64_t* ret_storage_offset) {
  return guarded(__func__, [&] { out_ref(ret_storage_offset, "ret_storage_offset") = deref(tensor).storage_offset; });
}
AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret_is_contiguous) {
  return guarded(__func__, [&] { out_ref(ret_is_contiguous, "ret_is_contiguous") = deref(tensor).is_contiguous(); });
}
AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor, bool* ret_is_defined) {
  return guarded(__func__,
                 [&] { out_ref(ret_is_defined, "ret_is_defined") = tensor != nullptr && tensor->storage != nullptr; });
}

AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig_handle, AtenTensorHandle* new_handle) {
  return guarded(__func__, [&] {
    auto& out = out_ref(new_handle, "new_handle");
    out = new Tensor(handle_ref(orig_handle, "orig_handle"));
  });
}

AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim, const int64_t* sizes_ptr,
                                              const int64_t* strides_ptr, int64_t storage_offset,
                                              AtenTensorHandle* ret_new_tensor) {
  return guarded(__func__, [&] {
    const Tensor& t = deref(self);
    // torch::inductor::_reinterpret_tensor: the offset is added to self's offset.
    out_ref(ret_new_tensor, "ret_new_tensor") =
        view_of(t, t.dtype, arr(sizes_ptr, ndim, "sizes"), arr(strides_ptr, ndim, "strides"),
                t.storage_offset + storage_offset);
  });
}

AOTITorchError aoti_torch__alloc_from_pool(AtenTensorHandle self, int64_t offset_bytes, int32_t dtype, int64_t ndim,
                                           const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                           AtenTensorHandle* ret_new_tensor) {
  return guarded(__func__, [&] {
    const Tensor& pool = deref(self);
    if (pool.storage_offset != 0) fail("_alloc_from_pool: the pool has a storage offset");
    const auto isz = static_cast<int64_t>(element_size(dtype));
    if (offset_bytes < 0 || offset_bytes % isz != 0)
      fail("_alloc_from_pool: offset " + std::to_string(offset_bytes) + " is not a multiple of the element size");
    out_ref(ret_new_tensor, "ret_new_tensor") =
        view_of(pool, dtype, arr(sizes_ptr, ndim, "sizes"), arr(strides_ptr, ndim, "strides"), offset_bytes / isz);
  });
}

AOTITorchError aoti_torch_as_strided(AtenTensorHandle self, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                     AtenTensorHandle* ret) {
  return guarded(__func__, [&] {
    const Tensor& t = deref(self);
    out_ref(ret, "ret") =
        view_of(t, t.dtype, arr(sizes_ptr, t.dim(), "sizes"), arr(strides_ptr, t.dim(), "strides"), t.storage_offset);
  });
}

AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                        int32_t dtype, int32_t device_type, int32_t device_index,
                                        AtenTensorHandle* ret_new_tensor) {
  return guarded(__func__, [&] {
    out_ref(ret_new_tensor, "ret_new_tensor") = new_tensor_on(device_type, device_index, arr(sizes_ptr, ndim, "sizes"),
                                                              arr(strides_ptr, ndim, "strides"), dtype);
  });
}

AOTITorchError aoti_torch_create_tensor_from_blob(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                  const int64_t* strides_ptr, int64_t storage_offset, int32_t dtype,
                                                  int32_t device_type, int32_t device_index, AtenTensorHandle* ret) {
  return guarded(__func__, [&] {
    auto sizes = arr(sizes_ptr, ndim, "sizes");
    auto strides = arr(strides_ptr, ndim, "strides");
    auto& out = out_ref(ret, "ret");
    if (data == nullptr) {  // torch: a 0-size tensor may come without data; it allocates instead
      out = new_tensor_on(device_type, device_index, sizes, strides, dtype);
      return;
    }
    if (storage_offset < 0) fail("negative storage offset");
    const std::size_t isz = element_size(dtype);
    // torch (TensorMaker): storage bytes = extent of (sizes, strides) + storage_offset elements.
    const std::size_t nbytes = storage_nbytes(sizes, strides, isz) + static_cast<std::size_t>(storage_offset) * isz;
    auto t = std::make_unique<Tensor>();
    t->storage = Storage::borrow(data, nbytes, device_type, device_index);
    t->dtype = dtype;
    t->storage_offset = storage_offset;
    t->sizes.assign(sizes.begin(), sizes.end());
    t->strides.assign(strides.begin(), strides.end());
    t->sizes.reserve(1);
    t->strides.reserve(1);
    out = t.release();
  });
}

AOTITorchError aoti_torch_create_tensor_from_blob_v2(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                     const int64_t* strides_ptr, int64_t storage_offset, int32_t dtype,
                                                     int32_t device_type, int32_t device_index, AtenTensorHandle* ret,
                                                     int32_t layout, const uint8_t* opaque_metadata,
                                                     int64_t opaque_metadata_size) {
  if (layout != kLayoutStrided)
    return report_failure(__func__, ("layout " + std::to_string(layout) +
                                     " (mkldnn-packed constants) is not supported: only strided tensors")
                                        .c_str());
  return aoti_torch_create_tensor_from_blob(data, ndim, sizes_ptr, strides_ptr, storage_offset, dtype, device_type,
                                            device_index, ret);
}

AOTITorchError aoti_torch_assign_tensors(AtenTensorHandle src, AtenTensorHandle dst) {
  return guarded(__func__, [&] { handle_ref(dst, "dst") = handle_ref(src, "src"); });
}
AOTITorchError aoti_torch_assign_tensors_out(AtenTensorHandle src, AtenTensorHandle* ret_dst) {
  return aoti_torch_new_tensor_handle(src, ret_dst);
}

AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* ret) {
  return guarded(__func__, [&] {
    const Tensor& t = deref(self);
    TensorPtr out(new_tensor_on(t.device_type(), t.storage->device_index, t.sizes, empty_like_strides(t), t.dtype));
    copy_any(*out, t);
    out_ref(ret, "ret") = out.release();
  });
}

AOTITorchError aoti_torch_clone_preserve_strides(AtenTensorHandle self, AtenTensorHandle* ret) {
  return guarded(__func__, [&] {
    const Tensor& t = deref(self);
    // The same extent at offset 0, its bytes copied as they are (gaps included).
    TensorPtr out(new_tensor_on(t.device_type(), t.storage->device_index, t.sizes, t.strides, t.dtype));
    const std::size_t n = out->storage->nbytes;
    if (n == 0) return;
    if (t.device_type() == kCpu) {
      std::memcpy(out->data(), t.data(), n);
    } else {
      const int64_t bytes = static_cast<int64_t>(n), one = 1;
      Tensor from, to;  // flat byte views of the two extents
      from.storage = t.storage;
      to.storage = out->storage;
      from.dtype = to.dtype = static_cast<int32_t>(DType::u8);
      from.storage_offset = t.storage_offset * static_cast<int64_t>(t.itemsize());
      from.sizes = to.sizes = {bytes};
      from.strides = to.strides = {one};
      copy_any(to, from);
    }
    out_ref(ret, "ret") = out.release();
  });
}

AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking) {
  return guarded(__func__, [&] { copy_any(deref(self, "self"), deref(src, "src")); });
}
AOTITorchError aoti_torch_tensor_copy_(AtenTensorHandle src, AtenTensorHandle dst) {
  return aoti_torch_copy_(dst, src, 0);
}

AOTITorchError aoti_torch_zero_(AtenTensorHandle self) {
  return guarded(__func__, [&] {
    Tensor& t = deref(self);
    require_cpu(t, "zero_");
    TensorPtr zero(new_tensor({}, {}, t.dtype));
    std::memset(zero->data(), 0, zero->itemsize());
    copy_into(t, *zero);
  });
}

AOTITorchError aoti_torch_item_float32(AtenTensorHandle t, float* r) { return item(t, r, __func__); }
AOTITorchError aoti_torch_item_float64(AtenTensorHandle t, double* r) { return item(t, r, __func__); }
AOTITorchError aoti_torch_item_uint8(AtenTensorHandle t, uint8_t* r) { return item(t, r, __func__); }
AOTITorchError aoti_torch_item_int8(AtenTensorHandle t, int8_t* r) { return item(t, r, __func__); }
AOTITorchError aoti_torch_item_int16(AtenTensorHandle t, int16_t* r) { return item(t, r, __func__); }
AOTITorchError aoti_torch_item_int32(AtenTensorHandle t, int32_t* r) { return item(t, r, __func__); }
AOTITorchError aoti_torch_item_int64(AtenTensorHandle t, int64_t* r) {
  return guarded(__func__, [&] {  // exact, not through double
    const Tensor& x = deref(t);
    require_cpu(x, "item");
    if (x.numel() != 1) fail("item() of a tensor with " + std::to_string(x.numel()) + " elements");
    TensorPtr v(new_tensor({}, {}, static_cast<int32_t>(DType::i64)));
    TensorPtr one(new Tensor(x));
    one->sizes.clear();
    one->strides.clear();
    copy_into(*v, *one);
    std::memcpy(&out_ref(r, "ret_value"), v->data(), 8);
  });
}
AOTITorchError aoti_torch_item_bool(AtenTensorHandle t, bool* r) { return item(t, r, __func__); }

AOTITorchError aoti_torch_scalar_to_tensor_float32(float v, AtenTensorHandle* r) {
  return scalar_to_tensor(v, static_cast<int32_t>(DType::f32), r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_float64(double v, AtenTensorHandle* r) {
  return scalar_to_tensor(v, static_cast<int32_t>(DType::f64), r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_uint8(uint8_t v, AtenTensorHandle* r) {
  return scalar_to_tensor(v, static_cast<int32_t>(DType::u8), r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_int8(int8_t v, AtenTensorHandle* r) {
  return scalar_to_tensor(v, static_cast<int32_t>(DType::i8), r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_int16(int16_t v, AtenTensorHandle* r) {
  return scalar_to_tensor(v, static_cast<int32_t>(DType::i16), r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_int32(int32_t v, AtenTensorHandle* r) {
  return scalar_to_tensor(v, static_cast<int32_t>(DType::i32), r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_int64(int64_t v, AtenTensorHandle* r) {
  return scalar_to_tensor(v, static_cast<int32_t>(DType::i64), r, __func__);
}
AOTITorchError aoti_torch_scalar_to_tensor_bool(bool v, AtenTensorHandle* r) {
  return scalar_to_tensor(v, static_cast<int32_t>(DType::boolean), r, __func__);
}

}  // extern "C"
