/* The AOTInductor C shim that mpspack exports to the model libraries it loads.
 *
 * A model library built with link_libtorch=False leaves these `aoti_torch_*` functions undefined; the process
 * that dlopens it must export them. The declarations match torch's
 * torch/csrc/inductor/aoti_torch/c/shim.h and generated/c_shim_cpu.h (torch 2.11) exactly: same names, same
 * parameter types, same meaning. Codes are c10's: dtype uint8 0, int8 1, int16 2, int32 3, int64 4, float16 5,
 * float32 6, float64 7, bool 11, bfloat16 15; device cpu 0, cuda 1, mps 13; layout strided 0.
 *
 * Every function returning AOTITorchError returns 0 on success and 1 on failure; on failure the reason is
 * printed to stderr (as torch does) and kept for mpspack::shim::last_error() (provided.hpp).
 *
 * Only CPU tensors are computed on. Handles of other devices can be made with create_tensor_from_blob (a
 * borrowed pointer with metadata); operations on them fail with a message.
 */
#ifndef MPSPACK_RUNTIME_SHIM_AOTI_SHIM_H
#define MPSPACK_RUNTIME_SHIM_AOTI_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MPSPACK_SHIM_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque to the model; defined by the shim (libpack/src/runtime/shim/tensor.hpp). */
struct AtenTensorOpaque;
typedef struct AtenTensorOpaque* AtenTensorHandle;
typedef struct AtenGeneratorOpaque* AtenGeneratorHandle; /* torch's generators: always null here */
typedef int32_t AOTITorchError;

#define AOTI_TORCH_SUCCESS 0
#define AOTI_TORCH_FAILURE 1

/* ---- constants ---------------------------------------------------------------------------------------- */
MPSPACK_SHIM_EXPORT int32_t aoti_torch_device_type_cpu(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_device_type_cuda(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_device_type_mps(void);

MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_bfloat16(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_float16(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_float32(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_float64(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_uint8(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_int8(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_int16(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_int32(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_int64(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_bool(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_complex32(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_complex64(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_complex128(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_float8_e5m2(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_float8_e4m3fn(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_float8_e5m2fnuz(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_float8_e4m3fnuz(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_uint16(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_uint32(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_dtype_uint64(void);
/* Bytes of one element of `dtype`; 0 for a dtype the shim does not know. */
MPSPACK_SHIM_EXPORT size_t aoti_torch_dtype_element_size(int32_t dtype);

MPSPACK_SHIM_EXPORT int32_t aoti_torch_layout_strided(void);

MPSPACK_SHIM_EXPORT int32_t aoti_torch_memory_format_contiguous_format(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_memory_format_channels_last(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_memory_format_channels_last_3d(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_memory_format_preserve_format(void);

/* ---- grad mode, checks, warnings ---------------------------------------------------------------------- */
/* Thread-local, enabled by default (c10::GradMode). The shim computes no gradients either way. */
MPSPACK_SHIM_EXPORT bool aoti_torch_grad_mode_is_enabled(void);
MPSPACK_SHIM_EXPORT void aoti_torch_grad_mode_set_enabled(bool enabled);

/* torch raises c10::Error when !cond. The shim throws a std::runtime_error, which the model library's C API
 * catches and turns into error code 1 (so a bad input, e.g. an out-of-range token id, fails the Run instead of
 * the process). Inside an OpenMP parallel region no exception can get out (GCC calls std::terminate), and
 * returning would let the kernel read out of bounds, so there the shim prints the message and aborts. */
MPSPACK_SHIM_EXPORT void aoti_torch_check(bool cond, const char* func, const char* file, uint32_t line,
                                          const char* msg);
/* Prints "Warning: <msg> (<func> at <file>:<line>)" to stderr. */
MPSPACK_SHIM_EXPORT void aoti_torch_warn(const char* func, const char* file, uint32_t line, const char* msg);

/* ---- tensor handles ----------------------------------------------------------------------------------- */
/* Drops one handle; the storage goes when its last handle goes (borrowed storages are never freed). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor);
/* Data pointer of the first element: storage base + storage_offset * element size. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_mutable_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_const_data_ptr(AtenTensorHandle tensor, const void** ret_data_ptr);
/* Bytes of the whole storage. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle tensor, int64_t* ret_size);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret_dim);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret_numel);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle tensor, int64_t* ret_numel);
/* Borrowed pointers, valid while the handle lives. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret_sizes);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_size(AtenTensorHandle tensor, int64_t d, int64_t* ret_size);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret_strides);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_stride(AtenTensorHandle tensor, int64_t d, int64_t* ret_stride);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret_dtype);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret_device_type);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret_device_index);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor, int32_t* ret_layout);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor, int64_t* ret_storage_offset);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret_is_contiguous);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor, bool* ret_is_defined);

/* A second handle on the same tensor (shares storage and metadata values). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig_handle,
                                                                AtenTensorHandle* new_handle);
/* A view of `self`'s storage with new sizes/strides/offset (in elements). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim,
                                                                  const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                                                  int64_t storage_offset,
                                                                  AtenTensorHandle* ret_new_tensor);
/* A view of the contiguous uint8 pool `self` at offset_bytes, as dtype with sizes/strides. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch__alloc_from_pool(AtenTensorHandle self, int64_t offset_bytes,
                                                               int32_t dtype, int64_t ndim, const int64_t* sizes_ptr,
                                                               const int64_t* strides_ptr,
                                                               AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_as_strided(AtenTensorHandle self, const int64_t* sizes_ptr,
                                                         const int64_t* strides_ptr, AtenTensorHandle* ret);
/* New uninitialised CPU storage (64-byte aligned). A non-CPU device_type is an error. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes_ptr,
                                                            const int64_t* strides_ptr, int32_t dtype,
                                                            int32_t device_type, int32_t device_index,
                                                            AtenTensorHandle* ret_new_tensor);
/* Borrows `data` (the storage base; the first element is at data + storage_offset * element size); never
 * frees it. data == NULL allocates as empty_strided does (torch does this for 0-size tensors). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_create_tensor_from_blob(
    void* data, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr, int64_t storage_offset,
    int32_t dtype, int32_t device_type, int32_t device_index, AtenTensorHandle* ret);
/* As above; layout must be strided (mkldnn is refused), opaque metadata is ignored. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_create_tensor_from_blob_v2(
    void* data, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr, int64_t storage_offset,
    int32_t dtype, int32_t device_type, int32_t device_index, AtenTensorHandle* ret, int32_t layout,
    const uint8_t* opaque_metadata, int64_t opaque_metadata_size);

/* Make dst an alias of src / a new handle aliasing src. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_assign_tensors(AtenTensorHandle src, AtenTensorHandle dst);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_assign_tensors_out(AtenTensorHandle src, AtenTensorHandle* ret_dst);

/* ---- copies ------------------------------------------------------------------------------------------- */
/* torch's clone(): new storage; strides preserved when self is dense and non-overlapping, otherwise dense
 * strides in self's stride order. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* ret);
/* Copies the whole span self's strides reach, keeping sizes and strides exactly (offset 0). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_clone_preserve_strides(AtenTensorHandle self, AtenTensorHandle* ret);
/* self.copy_(src): src broadcast to self's shape, converted between the supported dtypes. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking);
/* Deprecated torch spelling: copies src into dst. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_tensor_copy_(AtenTensorHandle src, AtenTensorHandle dst);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_zero_(AtenTensorHandle self);

/* ---- scalars ------------------------------------------------------------------------------------------ */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_float32(AtenTensorHandle tensor, float* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_float64(AtenTensorHandle tensor, double* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_uint8(AtenTensorHandle tensor, uint8_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_int8(AtenTensorHandle tensor, int8_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_int16(AtenTensorHandle tensor, int16_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_int32(AtenTensorHandle tensor, int32_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_int64(AtenTensorHandle tensor, int64_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_bool(AtenTensorHandle tensor, bool* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_float32(float value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_float64(double value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_uint8(uint8_t value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_int8(int8_t value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_int16(int16_t value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_int32(int32_t value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_int64(int64_t value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_bool(bool value, AtenTensorHandle* ret_new_tensor);

/* ---- CPU fallback ops (generated/c_shim_cpu.h) -------------------------------------------------------- */
/* out = beta * self (broadcast to out) + alpha * mat1 @ mat2. f32/f64 on OpenBLAS, other dtypes by loop. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                            AtenTensorHandle mat1, AtenTensorHandle mat2, double beta,
                                                            double alpha);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                         AtenTensorHandle mat2);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_bmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                          AtenTensorHandle mat2);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                              AtenTensorHandle batch1, AtenTensorHandle batch2,
                                                              double beta, double alpha);
/* 1-D and 2-D convolution (input [N,C,(H,)W]); transposed != 0 is refused. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_convolution(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0);
/* q [B,H,L,E], k [B,H,S,E], v [B,H,S,Ev]. ret0: [B,H,L,Ev] with the strides of torch.empty_like(query);
 * ret1: logsumexp [B,H,L] with strides of a [B,L,H] contiguous tensor (float32; float64 for float64 q). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* Running sum along dim (negative counts from the end) into a new contiguous tensor of dtype *dtype, or, when
 * dtype is null, int64 for integer and bool inputs and the input's dtype otherwise. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                         AtenTensorHandle* ret0);
/* Running product along dim, with cumsum's result dtype rule. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cumprod(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                          AtenTensorHandle* ret0);
/* Each line along dim in ascending (or descending) order, stably, NaN above every number. ret0 values with
 * self's strides when self is dense (else dense strides in self's order), ret1 int64 positions, same strides.
 * sort_stable takes a stable flag that changes nothing: every sort here is stable. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_sort(AtenTensorHandle self, int64_t dim, int32_t descending,
                                                       AtenTensorHandle* ret0, AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_sort_stable(AtenTensorHandle self, int32_t* stable, int64_t dim,
                                                              int32_t descending, AtenTensorHandle* ret0,
                                                              AtenTensorHandle* ret1);
/* The k largest (or smallest) of each line along dim, always sorted, ties in input order; contiguous results. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_topk(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest,
                                                       int32_t sorted, AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* out <- self, then out[..., index[i], ...] (along dim) = src[i] / value / reduced with src[i] (reduce: "sum",
 * "prod", "mean", "amax", "amin"; include_self: whether self's element takes part). index is int64. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_scatter_src_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                  int64_t dim, AtenTensorHandle index,
                                                                  AtenTensorHandle src);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_scatter_value_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                    int64_t dim, AtenTensorHandle index, double value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_scatter_reduce_two_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                         int64_t dim, AtenTensorHandle index,
                                                                         AtenTensorHandle src, const char* reduce,
                                                                         int32_t include_self);
/* A copy of self (self's strides when dense) with values put (or added, accumulate != 0) at self[indices]:
 * indices[i] points at the index of dim i, or is null for the whole dim (None); int64/int32 or bool/uint8. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_index_put(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                            int64_t indices_len_, AtenTensorHandle values,
                                                            int32_t accumulate, AtenTensorHandle* ret0);
/* int64 [count, self.dim()]: the positions of self's nonzero elements in row-major order. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_nonzero(AtenTensorHandle self, AtenTensorHandle* ret0);
/* X [M, K] (float32/float16/bfloat16) times the int4 weights torch's _convert_weight_to_int4pack_for_cpu packed
 * ([N, K / 2] uint8), dequantized per group of qGroupSize (an int64 scalar tensor) rows of K by qScaleAndZeros
 * [K / qGroupSize, N, 2] (X's dtype): [M, N]. Declared by torch's hand-written shim_cpu.h. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(AtenTensorHandle X, AtenTensorHandle w,
                                                                                 AtenTensorHandle qGroupSize,
                                                                                 AtenTensorHandle qScaleAndZeros,
                                                                                 AtenTensorHandle* ret0);
/* self [M, K] (float32/float16/bfloat16) times mat2 [N, K] int8 transposed, times scales [N]: [M, N]. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                                      AtenTensorHandle scales, AtenTensorHandle* ret0);
/* Bags of weight rows (indices[offsets[b] .. next offset)) summed, averaged or maxed (mode 0, 1, 2), padding_idx
 * left out. ret0 [bags, D]; ret1-ret3 (offset2bag, bag_size, max_indices) as torch's CPU forward gives them. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
                                                                 AtenTensorHandle offsets, int32_t scale_grad_by_freq,
                                                                 int64_t mode, int32_t sparse,
                                                                 AtenTensorHandle* per_sample_weights,
                                                                 int32_t include_last_offset, int64_t padding_idx,
                                                                 AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                                 AtenTensorHandle* ret2, AtenTensorHandle* ret3);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__embedding_bag_forward_only(
    AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq,
    int64_t mode, int32_t sparse, AtenTensorHandle* per_sample_weights, int32_t include_last_offset,
    int64_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3);

/* Pooling (pooling.cpp, pooling_fractional.cpp): inputs [N, C, spatial...] or unbatched [C, spatial...] (2 or 3
 * spatial dims), the dtypes torch's CPU kernels take (floating types; max_pool also integers, avg_pool int64,
 * avg_pool3d no half types). List arguments hold 1 or 2 (3) values; an empty stride is the kernel. Max pools: NaN
 * wins; indices are int64 flat offsets within each plane. A channels-last batched input gives a channels-last
 * result from the 2-d pools (fractional excepted), max_unpool2d and max_pool3d, as torch's; the rest are contiguous. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_max_pool2d_with_indices(
    AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* stride,
    int64_t stride_len_, const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,
    int32_t ceil_mode, AtenTensorHandle* ret0, AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_max_pool3d_with_indices(
    AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* stride,
    int64_t stride_len_, const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,
    int32_t ceil_mode, AtenTensorHandle* ret0, AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_avg_pool2d(AtenTensorHandle self, const int64_t* kernel_size,
                                                             int64_t kernel_size_len_, const int64_t* stride,
                                                             int64_t stride_len_, const int64_t* padding,
                                                             int64_t padding_len_, int32_t ceil_mode,
                                                             int32_t count_include_pad, int64_t* divisor_override,
                                                             AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_avg_pool3d(AtenTensorHandle self, const int64_t* kernel_size,
                                                             int64_t kernel_size_len_, const int64_t* stride,
                                                             int64_t stride_len_, const int64_t* padding,
                                                             int64_t padding_len_, int32_t ceil_mode,
                                                             int32_t count_include_pad, int64_t* divisor_override,
                                                             AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__adaptive_avg_pool2d(AtenTensorHandle self,
                                                                       const int64_t* output_size,
                                                                       int64_t output_size_len_,
                                                                       AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__adaptive_avg_pool3d(AtenTensorHandle self,
                                                                       const int64_t* output_size,
                                                                       int64_t output_size_len_,
                                                                       AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_adaptive_max_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                                      int64_t output_size_len_, AtenTensorHandle* ret0,
                                                                      AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_adaptive_max_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                                      int64_t output_size_len_, AtenTensorHandle* ret0,
                                                                      AtenTensorHandle* ret1);
/* random_samples [N, C, 2 (3)] of the input's dtype, in [0, 1): per plane the W then H samples (3-d: T, H, W). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_fractional_max_pool2d(
    AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* output_size,
    int64_t output_size_len_, AtenTensorHandle random_samples, AtenTensorHandle* ret0, AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_fractional_max_pool3d(
    AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* output_size,
    int64_t output_size_len_, AtenTensorHandle random_samples, AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* Zeros of output_size per plane with self's values put at indices (int64, self's shape); any dtype. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_max_unpool2d(AtenTensorHandle self, AtenTensorHandle indices,
                                                               const int64_t* output_size, int64_t output_size_len_,
                                                               AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_max_unpool3d(AtenTensorHandle self, AtenTensorHandle indices,
                                                               const int64_t* output_size, int64_t output_size_len_,
                                                               const int64_t* stride, int64_t stride_len_,
                                                               const int64_t* padding, int64_t padding_len_,
                                                               AtenTensorHandle* ret0);
/* ---- the rest of c/shim.h (core.cpp) ------------------------------------------------------------------ */
/* c10::complex<float> / c10::complex<double>: real part then imaginary part, aligned to their size. The same
 * layout and, passed by value, the same registers as c10's class (an aggregate of two floating members). */
typedef struct __attribute__((aligned(8))) {
  float real;
  float imag;
} AotiComplex64;
typedef struct __attribute__((aligned(16))) {
  double real;
  double imag;
} AotiComplex128;
struct DeviceGuardOpaque;
typedef struct DeviceGuardOpaque* DeviceGuardHandle;
struct StreamOpaque;
typedef struct StreamOpaque* StreamHandle;

/* c10::DeviceType codes meta 14, xpu 12, privateuse1 20; c10::Layout codes. */
MPSPACK_SHIM_EXPORT int32_t aoti_torch_device_type_meta(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_device_type_xpu(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_device_type_privateuse1(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_layout_sparse_coo(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_layout_sparse_csr(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_layout_sparse_csc(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_layout_sparse_bsr(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_layout_sparse_bsc(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_layout__mkldnn(void);
MPSPACK_SHIM_EXPORT int32_t aoti_torch_layout_jagged(void);
/* TORCH_ABI_VERSION of the torch whose shim this is (2.11.0): major << 56 | minor << 48 | patch << 40. */
MPSPACK_SHIM_EXPORT uint64_t aoti_torch_abi_version(void);

/* item() converted as c10::Scalar::to<T> does: a value T cannot hold (an integer or finite float out of its
 * range, a complex with an imaginary part for a real T) is an error. float16/bfloat16 results are their bits. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_float16(AtenTensorHandle tensor, uint16_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_bfloat16(AtenTensorHandle tensor, uint16_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_uint16(AtenTensorHandle tensor, uint16_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_uint32(AtenTensorHandle tensor, uint32_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_uint64(AtenTensorHandle tensor, uint64_t* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_item_complex64(AtenTensorHandle tensor, AotiComplex64* ret_value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_uint16(uint16_t value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_uint32(uint32_t value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_uint64(uint64_t value, AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_complex64(AotiComplex64 value,
                                                                         AtenTensorHandle* ret_new_tensor);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_complex128(AotiComplex128 value,
                                                                          AtenTensorHandle* ret_new_tensor);

/* An undefined tensor (torch's at::Tensor()): is_defined says false, every op given it fails; it can be
 * assigned to (assign_tensors), copied as a handle and deleted. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle* ret);
/* empty_strided of ordinary 64-byte-aligned CPU memory; a non-CPU device_type is an error, as in torch. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_empty_strided_pinned(int64_t ndim, const int64_t* sizes_ptr,
                                                                   const int64_t* strides_ptr, int32_t dtype,
                                                                   int32_t device_type, int32_t device_index,
                                                                   AtenTensorHandle* ret_new_tensor);

/* The generic device guard and stream, for the CPU: the guard switches nothing (the index must be -1 or 0, the
 * CPU's), the current device index is -1 (c10's CPU device), the current stream is the CPU's default stream
 * (id 0). Handles are new objects the caller deletes. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_create_device_guard(int32_t device_index, DeviceGuardHandle* ret_guard);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_delete_device_guard(DeviceGuardHandle guard);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_device_guard_set_index(DeviceGuardHandle guard, int32_t device_index);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_current_device_index(int32_t* ret_device_index);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_current_stream(int32_t device_index, StreamHandle* ret_stream);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_delete_stream(StreamHandle stream);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_stream_id(StreamHandle stream, int64_t* ret_stream_id);

/* AOTInductor's debug helpers. check_inf_and_nan fails with "At least one NaN in <name>" / "At least one INF
 * in <name>"; print_tensor_handle writes torch's summary to stderr (stdout carries mpspack's results);
 * save_tensor_handle says on stderr that it cannot write torch's pickle file, naming the file torch writes. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_check_inf_and_nan(const char* tensor_name, AtenTensorHandle tensor);
MPSPACK_SHIM_EXPORT void aoti_torch_print_tensor_handle(AtenTensorHandle self, const char* msg);
MPSPACK_SHIM_EXPORT void aoti_torch_save_tensor_handle(AtenTensorHandle self, const char* tensor_name,
                                                       const char* launch_prefix, const char* kernel_name);

/* out = a @ b + c @ d (torch::inductor::_mm_plus_mm_out), on the mm kernels. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch__mm_plus_mm_out(AtenTensorHandle out, AtenTensorHandle a,
                                                              AtenTensorHandle b, AtenTensorHandle c,
                                                              AtenTensorHandle d);
/* The out= forms of scatter / scatter_reduce.two / index_put: out must have self's sizes and dtype (torch would
 * resize it; AOTInductor always passes it so). index_put_out's indices are handles, null for a None. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scatter_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                          AtenTensorHandle index, AtenTensorHandle src);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_scatter_reduce_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                 int64_t dim, AtenTensorHandle index,
                                                                 AtenTensorHandle src, const char* reduce,
                                                                 int32_t include_self);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_index_put_out(AtenTensorHandle out, AtenTensorHandle self,
                                                            const AtenTensorHandle* indices, const uint32_t num_indices,
                                                            const AtenTensorHandle values, bool accumulate);
/* fbgemm's fp16-weight Linear: pack gives the weight [N, K] rounded to float16 (mpspack's packed form; torch's
 * is an fbgemm object no file holds, so the pair always meets in one process); linear computes in float32,
 * input [..., K] float32 -> [..., N] float32 contiguous, + bias [N] when bias is not null. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_wrapped_fbgemm_pack_gemm_matrix_fp16(AtenTensorHandle weight,
                                                                                       AtenTensorHandle* out);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_wrapped_fbgemm_linear_fp16_weight(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle bias, int64_t out_channel, AtenTensorHandle* out);
/* The int8 Linear of a prepacked weight: prepack quantizes weight [N, K] float32 to qint8 with the one-element
 * weight_scale / weight_zero_point (torch's quantize_per_tensor) and keeps bias [N] (null: none) in mpspack's
 * packed form (a uint8 tensor); linear quantizes input [..., K] float32 to quint8, computes in integers and gives
 * [..., N] float32: the quint8 result at out_scale / out_zeropoint, dequantized, as fbgemm computes it. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__wrapped_linear_prepack(AtenTensorHandle weight,
                                                                          AtenTensorHandle weight_scale,
                                                                          AtenTensorHandle weight_zero_point,
                                                                          AtenTensorHandle bias, AtenTensorHandle* out);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__wrapped_quantized_linear_prepacked(
    AtenTensorHandle input, AtenTensorHandle input_scale, AtenTensorHandle input_zero_point, AtenTensorHandle weight,
    AtenTensorHandle out_scale, AtenTensorHandle out_zeropoint, int64_t out_channel, AtenTensorHandle* out);
/* ---- FFT and windows (fft.cpp) ----------------------------------------------------------------------------
 * _fft_r2c: float32/float64 input, complex64/complex128 result; _fft_c2c: complex in, same dtype out. Over the
 * dims given (negative ones count from the end); normalization 0 none, 1 by 1/sqrt(n), 2 by 1/n; onesided keeps
 * bins 0..n/2 of the last dim; forward 0 is the inverse transform. Results have the strides torch's MKL FFT gives. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__fft_r2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                                           int64_t normalization, int32_t onesided,
                                                           AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__fft_c2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                                           int64_t normalization, int32_t forward,
                                                           AtenTensorHandle* ret0);
/* The periodic Hann window of window_length, float32 unless dtype says otherwise (a floating dtype). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_hann_window(int64_t window_length, int32_t* dtype, int32_t* layout,
                                                              int32_t* device, int32_t device_index_,
                                                              int32_t* pin_memory, AtenTensorHandle* ret0);
/* ---- random ops (random.cpp) -------------------------------------------------------------------------------
 * Values from torch's distributions drawn from one per-process engine seeded from std::random_device; not torch's
 * values, and generator arguments are ignored. Factory options: null dtype is torch's default (int64 for randperm,
 * float32 for the others, randint included, as torch's C shim gives it); layout strided and device CPU only;
 * pin_memory ignored. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_rand(const int64_t* size, int64_t size_len_, int32_t* dtype,
                                                       int32_t* layout, int32_t* device, int32_t device_index_,
                                                       int32_t* pin_memory, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_rand_generator(const int64_t* size, int64_t size_len_,
                                                                 AtenGeneratorHandle* generator, int32_t* dtype,
                                                                 int32_t* layout, int32_t* device,
                                                                 int32_t device_index_, int32_t* pin_memory,
                                                                 AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randn(const int64_t* size, int64_t size_len_, int32_t* dtype,
                                                        int32_t* layout, int32_t* device, int32_t device_index_,
                                                        int32_t* pin_memory, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randn_generator(const int64_t* size, int64_t size_len_,
                                                                  AtenGeneratorHandle* generator, int32_t* dtype,
                                                                  int32_t* layout, int32_t* device,
                                                                  int32_t device_index_, int32_t* pin_memory,
                                                                  AtenTensorHandle* ret0);
/* Integers uniform in [0, high) / [low, high). randint_low_out resizes out to size (as torch's resize_). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randint(int64_t high, const int64_t* size, int64_t size_len_,
                                                          int32_t* dtype, int32_t* layout, int32_t* device,
                                                          int32_t device_index_, int32_t* pin_memory,
                                                          AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randint_generator(int64_t high, const int64_t* size,
                                                                    int64_t size_len_, AtenGeneratorHandle* generator,
                                                                    int32_t* dtype, int32_t* layout, int32_t* device,
                                                                    int32_t device_index_, int32_t* pin_memory,
                                                                    AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randint_low(int64_t low, int64_t high, const int64_t* size,
                                                              int64_t size_len_, int32_t* dtype, int32_t* layout,
                                                              int32_t* device, int32_t device_index_,
                                                              int32_t* pin_memory, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randint_low_out(AtenTensorHandle out, int64_t low, int64_t high,
                                                                  const int64_t* size, int64_t size_len_);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randperm(int64_t n, int32_t* dtype, int32_t* layout, int32_t* device,
                                                           int32_t device_index_, int32_t* pin_memory,
                                                           AtenTensorHandle* ret0);
/* New tensors shaped like self (empty_like's strides, floating dtypes) of N(mean, std), U[from, to), Exp(lambd). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_normal_functional(AtenTensorHandle self, double mean, double std,
                                                                    AtenGeneratorHandle* generator,
                                                                    AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_uniform(AtenTensorHandle self, double from, double to,
                                                          AtenGeneratorHandle* generator, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_exponential(AtenTensorHandle self, double lambd,
                                                              AtenGeneratorHandle* generator, AtenTensorHandle* ret0);
/* self <- 1 with probability p, else 0 (any dtype), in place. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_bernoulli__float(AtenTensorHandle self, double p,
                                                                   AtenGeneratorHandle* generator);
/* ret0: input with each element zeroed with probability p, the rest scaled by 1/(1-p); ret1: the bool mask of the
 * kept ones. train false (not null): a copy and an all-true mask. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_native_dropout(AtenTensorHandle input, double p, int32_t* train,
                                                                 AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* ---- fused observer and fake quantization (fake_quant.cpp) ----------------------------------------------------
 * torch's moving-average min/max observer and fake quantization: running_min/max, scale and zero_point updated in
 * place (the _functional form returns updated copies as ret2..ret5); ret0 the fake-quantized input, ret1 the mask. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__fused_moving_avg_obs_fq_helper(
    AtenTensorHandle self, AtenTensorHandle observer_on, AtenTensorHandle fake_quant_on, AtenTensorHandle running_min,
    AtenTensorHandle running_max, AtenTensorHandle scale, AtenTensorHandle zero_point, double averaging_const,
    int64_t quant_min, int64_t quant_max, int64_t ch_axis, int32_t per_row_fake_quant, int32_t symmetric_quant,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__fused_moving_avg_obs_fq_helper_functional(
    AtenTensorHandle self, AtenTensorHandle observer_on, AtenTensorHandle fake_quant_on, AtenTensorHandle running_min,
    AtenTensorHandle running_max, AtenTensorHandle scale, AtenTensorHandle zero_point, double averaging_const,
    int64_t quant_min, int64_t quant_max, int64_t ch_axis, int32_t per_row_fake_quant, int32_t symmetric_quant,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3,
    AtenTensorHandle* ret4, AtenTensorHandle* ret5);
/* ---- views, concatenation, padding, complex parts (views group) ----------------------------------------- */
/* Views: a new handle over self's storage (reshape copies, into a contiguous tensor, only where no strides
 * can express the new shape, as torch's). Negative dims count from the end. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_reshape(AtenTensorHandle self, const int64_t* shape,
                                                          int64_t shape_len_, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_permute(AtenTensorHandle self, const int64_t* dims, int64_t dims_len_,
                                                          AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_narrow(AtenTensorHandle self, int64_t dim, int64_t start,
                                                         int64_t length, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_squeeze_dim(AtenTensorHandle self, int64_t dim,
                                                              AtenTensorHandle* ret0);
/* The same bytes as `dtype`: with another element size the last dim (stride 1) splits or joins elements. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_view_dtype(AtenTensorHandle self, int32_t dtype,
                                                             AtenTensorHandle* ret0);
/* complex32/64/128 <-> float16/32/64 with a last dim of 2 (real, imaginary). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_view_as_complex(AtenTensorHandle self, AtenTensorHandle* ret0);
/* Concatenation along dim in the promoted dtype; legacy empty 1-d tensors ([0]) are skipped. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cat(const AtenTensorHandle* tensors, int64_t tensors_len_,
                                                      int64_t dim, AtenTensorHandle* ret0);
/* aten.pad: pairs from the last dim; mode "constant" (value, default 0; negative pads crop), "reflect",
 * "replicate", "circular". */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_,
                                                      const char* mode, double* value, AtenTensorHandle* ret0);
/* In place: new sizes with dense strides (memory_format 0 contiguous, 2/3 channels-last, null: unchanged when
 * the sizes are), the owned storage (any device) grown when needed (new elements are uninitialised). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_resize_(AtenTensorHandle self, const int64_t* size, int64_t size_len_,
                                                          int32_t* memory_format);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_resize_as_(AtenTensorHandle self, AtenTensorHandle the_template,
                                                             int32_t* memory_format);
/* A contiguous tensor of zeros (torch's zero tensor has no memory; this one reads the same). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__efficientzerotensor(const int64_t* size, int64_t size_len_,
                                                                       int32_t* dtype, int32_t* layout, int32_t* device,
                                                                       int32_t device_index_, int32_t* pin_memory,
                                                                       AtenTensorHandle* ret0);
/* abs (complex: the real magnitude), angle (real: pi below 0, else 0; integers give float32), polar (float32 or
 * float64 magnitudes and angles to complex), gcd (integers). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_abs(AtenTensorHandle self, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_angle(AtenTensorHandle self, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_polar(AtenTensorHandle abs, AtenTensorHandle angle,
                                                        AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_gcd(AtenTensorHandle self, AtenTensorHandle other,
                                                      AtenTensorHandle* ret0);
/* Arithmetic beyond the reference lists (elementwise_ops.cpp): torch's result_type (a double scalar counts as a
 * float wrapped number), broadcasting, TensorIterator strides; complex for mul, add and pow. alpha must be
 * integral-valued for integer results. slice_Tensor: a view (null start/end: the dim's ends). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mul_Tensor(AtenTensorHandle self, AtenTensorHandle other,
                                                             AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mul_Scalar(AtenTensorHandle self, double other,
                                                             AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_add_Tensor(AtenTensorHandle self, AtenTensorHandle other,
                                                             double alpha, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_add_Scalar(AtenTensorHandle self, double other, double alpha,
                                                             AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_pow_Tensor_Tensor(AtenTensorHandle self, AtenTensorHandle exponent,
                                                                    AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_pow_Tensor_Scalar(AtenTensorHandle self, double exponent,
                                                                    AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_pow_Scalar(double self, AtenTensorHandle exponent,
                                                             AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_fill__Scalar(AtenTensorHandle self, double value);
/* index_Tensor: advanced indexing (indexing.cpp), the indices as index_put takes them. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_index_Tensor(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                               int64_t indices_len_, AtenTensorHandle* ret0);
/* searchsorted / bucketize (bucketize.cpp): binary search of each value in its line of the sorted sequence. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_searchsorted_Tensor(AtenTensorHandle sorted_sequence,
                                                                      AtenTensorHandle self, int32_t out_int32,
                                                                      int32_t right, const char** side,
                                                                      AtenTensorHandle* sorter, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_searchsorted_Scalar(AtenTensorHandle sorted_sequence, double self,
                                                                      int32_t out_int32, int32_t right,
                                                                      const char** side, AtenTensorHandle* sorter,
                                                                      AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_bucketize_Tensor(AtenTensorHandle self, AtenTensorHandle boundaries,
                                                                   int32_t out_int32, int32_t right,
                                                                   AtenTensorHandle* ret0);
/* repeat_interleave_Tensor, set__source_Tensor (set_repeat.cpp): set_ makes self alias source (any device);
 * bernoulli__Tensor (random.cpp): per-element probabilities, broadcast to self. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_repeat_interleave_Tensor(AtenTensorHandle repeats,
                                                                           int64_t* output_size,
                                                                           AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_set__source_Tensor(AtenTensorHandle self, AtenTensorHandle source);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_bernoulli__Tensor(AtenTensorHandle self, AtenTensorHandle p,
                                                                    AtenGeneratorHandle* generator);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_slice_Tensor(AtenTensorHandle self, int64_t dim, int64_t* start,
                                                               int64_t* end, int64_t step, AtenTensorHandle* ret0);
/* ---- device-generic ops (generated/c_shim_aten.h) -------------------------------------------------------- */
/* Any device with registered memory. amax and pad's reflect/replicate/circular: computed on a host copy of a
 * device tensor. full, new_empty, new_zeros: null device: self's, or the CPU; null dtype: self's, or float32.
 * narrow: a view. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_aten_amax(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                                        int32_t keepdim, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_aten_fill__Scalar(AtenTensorHandle self, double value);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_aten_full(const int64_t* size, int64_t size_len_, double fill_value,
                                                        int32_t* dtype, int32_t* layout, int32_t* device,
                                                        int32_t device_index_, int32_t* pin_memory,
                                                        AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_aten_narrow(AtenTensorHandle self, int64_t dim, int64_t start,
                                                          int64_t length, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_aten_new_empty(AtenTensorHandle self, const int64_t* size,
                                                             int64_t size_len_, int32_t* dtype, int32_t* layout,
                                                             int32_t* device, int32_t device_index_,
                                                             int32_t* pin_memory, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_aten_new_zeros(AtenTensorHandle self, const int64_t* size,
                                                             int64_t size_len_, int32_t* dtype, int32_t* layout,
                                                             int32_t* device, int32_t device_index_,
                                                             int32_t* pin_memory, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_aten_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_,
                                                       const char* mode, double* value, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_aten_subtract_Tensor(AtenTensorHandle self, AtenTensorHandle other,
                                                                   double alpha, AtenTensorHandle* ret0);
/* Order statistics. median / nanmedian: the lower middle of all elements (a 0-d tensor): NaN when self holds
 * NaN (median) or holds nothing else (nanmedian). kthvalue: each line's k-th smallest (k from 1), NaN largest;
 * mode: each line's most frequent value, the smallest on a tie, with its last position. Contiguous results. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_median(AtenTensorHandle self, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_nanmedian(AtenTensorHandle self, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_kthvalue(AtenTensorHandle self, int64_t k, int64_t dim,
                                                           int32_t keepdim, AtenTensorHandle* ret0,
                                                           AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mode(AtenTensorHandle self, int64_t dim, int32_t keepdim,
                                                       AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* Running max / min along dim with the position of the last element equal to it (NaN propagates), and
 * log(cumsum(exp(x))) (floating dtypes); contiguous results. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cummax(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                                         AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cummin(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                                         AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_logcumsumexp(AtenTensorHandle self, int64_t dim,
                                                               AtenTensorHandle* ret0);
/* Histograms of floating inputs in their dtype. histc: bins between min and max (min == max: the data's range).
 * histogram_bin_ct: ret0 counts, ret1 the bins + 1 edges; range (2 doubles) or null. _histogramdd_from_bin_cts:
 * self [..., N] as points of N coordinates, bins and range (2 per dim) per coordinate. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_histc(AtenTensorHandle self, int64_t bins, double min, double max,
                                                        AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_histogram_bin_ct(AtenTensorHandle self, int64_t bins,
                                                                   const double** range, int64_t range_len_,
                                                                   AtenTensorHandle* weight, int32_t density,
                                                                   AtenTensorHandle* ret0, AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__histogramdd_from_bin_cts(AtenTensorHandle self, const int64_t* bins,
                                                                            int64_t bins_len_, const double** range,
                                                                            int64_t range_len_,
                                                                            AtenTensorHandle* weight, int32_t density,
                                                                            AtenTensorHandle* ret0);
/* index_reduce: a contiguous copy of self whose slice index[i] along dim is reduced ("prod", "mean", "amax",
 * "amin") with source's slice i. segment_reduce: runs along axis given by lengths or offsets ("sum", "mean",
 * "max", "min", "prod"), starting from *initial when given; floating data; indices must be null. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_index_reduce(AtenTensorHandle self, int64_t dim,
                                                               AtenTensorHandle index, AtenTensorHandle source,
                                                               const char* reduce, int32_t include_self,
                                                               AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_segment_reduce(AtenTensorHandle data, const char* reduce,
                                                                 AtenTensorHandle* lengths, AtenTensorHandle* indices,
                                                                 AtenTensorHandle* offsets, int64_t axis,
                                                                 int32_t unsafe, double* initial,
                                                                 AtenTensorHandle* ret0);
/* masked_select: 1-D, the elements where mask (bool) holds, self and mask broadcast together.
 * masked_scatter: self broadcast with mask, masked elements taken from source in order. nonzero_static:
 * int64 [size, self.dim()], nonzero's rows cut to size or padded with fill_value. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_masked_select(AtenTensorHandle self, AtenTensorHandle mask,
                                                                AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_masked_scatter(AtenTensorHandle self, AtenTensorHandle mask,
                                                                 AtenTensorHandle source, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_nonzero_static(AtenTensorHandle self, int64_t size,
                                                                 int64_t fill_value, AtenTensorHandle* ret0);
/* Linear algebra (linalg_products.cpp, linalg_lapack.cpp, distances.cpp, scaled_mm.cpp, dyn_quant_4bit.cpp,
 * rms_norm.cpp). Results as torch's CPU kernels give them; the LAPACK-backed ones column-major per matrix. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_addbmm(AtenTensorHandle self, AtenTensorHandle batch1,
                                                         AtenTensorHandle batch2, double beta, double alpha,
                                                         AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_addmv(AtenTensorHandle self, AtenTensorHandle mat,
                                                        AtenTensorHandle vec, double beta, double alpha,
                                                        AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__addmm_activation(AtenTensorHandle self, AtenTensorHandle mat1,
                                                                    AtenTensorHandle mat2, double beta, double alpha,
                                                                    int32_t use_gelu, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__int_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                              AtenTensorHandle mat2);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__scaled_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                             AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                                                             AtenTensorHandle* bias, AtenTensorHandle* scale_result,
                                                             int32_t* out_dtype, int32_t use_fast_accum,
                                                             AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__scaled_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                 AtenTensorHandle mat2, AtenTensorHandle scale_a,
                                                                 AtenTensorHandle scale_b, AtenTensorHandle* bias,
                                                                 AtenTensorHandle* scale_result, int32_t* out_dtype,
                                                                 int32_t use_fast_accum);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__cdist_forward(AtenTensorHandle x1, AtenTensorHandle x2, double p,
                                                                 int64_t* compute_mode, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__pdist_forward(AtenTensorHandle self, double p,
                                                                 AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__trilinear(
    AtenTensorHandle i1, AtenTensorHandle i2, AtenTensorHandle i3, const int64_t* expand1, int64_t expand1_len_,
    const int64_t* expand2, int64_t expand2_len_, const int64_t* expand3, int64_t expand3_len_, const int64_t* sumdim,
    int64_t sumdim_len_, int64_t unroll_dim, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cholesky_inverse(AtenTensorHandle self, int32_t upper,
                                                                   AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cholesky_solve(AtenTensorHandle self, AtenTensorHandle input2,
                                                                 int32_t upper, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_triangular_solve(AtenTensorHandle self, AtenTensorHandle A,
                                                                   int32_t upper, int32_t transpose,
                                                                   int32_t unitriangular, AtenTensorHandle* ret0,
                                                                   AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_geqrf(AtenTensorHandle self, AtenTensorHandle* ret0,
                                                        AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_ormqr(AtenTensorHandle self, AtenTensorHandle input2,
                                                        AtenTensorHandle input3, int32_t left, int32_t transpose,
                                                        AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_lu_unpack(AtenTensorHandle LU_data, AtenTensorHandle LU_pivots,
                                                            int32_t unpack_data, int32_t unpack_pivots,
                                                            AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                            AtenTensorHandle* ret2);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__fused_rms_norm(AtenTensorHandle input,
                                                                  const int64_t* normalized_shape,
                                                                  int64_t normalized_shape_len_,
                                                                  AtenTensorHandle* weight, double* eps,
                                                                  AtenTensorHandle* ret0, AtenTensorHandle* ret1);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__dyn_quant_matmul_4bit(AtenTensorHandle inp,
                                                                         AtenTensorHandle packed_weights,
                                                                         int64_t block_size, int64_t in_features,
                                                                         int64_t out_features, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__dyn_quant_pack_4bit_weight(
    AtenTensorHandle weights, AtenTensorHandle scales_zeros, AtenTensorHandle* bias, int64_t block_size,
    int64_t in_features, int64_t out_features, AtenTensorHandle* ret0);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MPSPACK_RUNTIME_SHIM_AOTI_SHIM_H
