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
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_const_data_ptr(AtenTensorHandle tensor,
                                                                 const void** ret_data_ptr);
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
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor,
                                                              int32_t* ret_device_index);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor, int32_t* ret_layout);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor,
                                                                int64_t* ret_storage_offset);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret_is_contiguous);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor, bool* ret_is_defined);

/* A second handle on the same tensor (shares storage and metadata values). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig_handle,
                                                               AtenTensorHandle* new_handle);
/* A view of `self`'s storage with new sizes/strides/offset (in elements). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim,
                                                                 const int64_t* sizes_ptr,
                                                                 const int64_t* strides_ptr,
                                                                 int64_t storage_offset,
                                                                 AtenTensorHandle* ret_new_tensor);
/* A view of the contiguous uint8 pool `self` at offset_bytes, as dtype with sizes/strides. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch__alloc_from_pool(AtenTensorHandle self, int64_t offset_bytes,
                                                              int32_t dtype, int64_t ndim,
                                                              const int64_t* sizes_ptr,
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
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_create_tensor_from_blob(void* data, int64_t ndim,
                                                                     const int64_t* sizes_ptr,
                                                                     const int64_t* strides_ptr,
                                                                     int64_t storage_offset, int32_t dtype,
                                                                     int32_t device_type, int32_t device_index,
                                                                     AtenTensorHandle* ret);
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
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_clone_preserve_strides(AtenTensorHandle self,
                                                                    AtenTensorHandle* ret);
/* self.copy_(src): src broadcast to self's shape, converted between the supported dtypes. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src,
                                                   int32_t non_blocking);
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
                                                           AtenTensorHandle mat1, AtenTensorHandle mat2,
                                                           double beta, double alpha);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                        AtenTensorHandle mat2);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_bmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                         AtenTensorHandle mat2);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                             AtenTensorHandle batch1, AtenTensorHandle batch2,
                                                             double beta, double alpha);
/* 1-D and 2-D convolution (input [N,C,(H,)W]); transposed != 0 is refused. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_convolution(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride,
    int64_t stride_len_, const int64_t* padding, int64_t padding_len_, const int64_t* dilation,
    int64_t dilation_len_, int32_t transposed, const int64_t* output_padding, int64_t output_padding_len_,
    int64_t groups, AtenTensorHandle* ret0);
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
/* self [M, K] (float32/float16/bfloat16) times mat2 [N, K] int8 transposed, times scales [N]: [M, N]. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                                     AtenTensorHandle scales, AtenTensorHandle* ret0);
/* Bags of weight rows (indices[offsets[b] .. next offset)) summed, averaged or maxed (mode 0, 1, 2), padding_idx
 * left out. ret0 [bags, D]; ret1-ret3 (offset2bag, bag_size, max_indices) as torch's CPU forward gives them. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__embedding_bag(
    AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq,
    int64_t mode, int32_t sparse, AtenTensorHandle* per_sample_weights, int32_t include_last_offset,
    int64_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__embedding_bag_forward_only(
    AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq,
    int64_t mode, int32_t sparse, AtenTensorHandle* per_sample_weights, int32_t include_last_offset,
    int64_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3);

/* Linear algebra (linalg_products.cpp, linalg_lapack.cpp, distances.cpp, scaled_mm.cpp, dyn_quant_4bit.cpp,
 * rms_norm.cpp). Results as torch's CPU kernels give them; the LAPACK-backed ones column-major per matrix. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_addbmm(AtenTensorHandle self, AtenTensorHandle batch1,
                                                        AtenTensorHandle batch2, double beta, double alpha,
                                                        AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu_addmv(AtenTensorHandle self, AtenTensorHandle mat, AtenTensorHandle vec,
                                                       double beta, double alpha, AtenTensorHandle* ret0);
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
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__pdist_forward(AtenTensorHandle self, double p, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__trilinear(AtenTensorHandle i1, AtenTensorHandle i2,
                                                            AtenTensorHandle i3, const int64_t* expand1,
                                                            int64_t expand1_len_, const int64_t* expand2,
                                                            int64_t expand2_len_, const int64_t* expand3,
                                                            int64_t expand3_len_, const int64_t* sumdim,
                                                            int64_t sumdim_len_, int64_t unroll_dim,
                                                            AtenTensorHandle* ret0);
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
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cpu__dyn_quant_pack_4bit_weight(AtenTensorHandle weights,
                                                                             AtenTensorHandle scales_zeros,
                                                                             AtenTensorHandle* bias,
                                                                             int64_t block_size, int64_t in_features,
                                                                             int64_t out_features,
                                                                             AtenTensorHandle* ret0);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MPSPACK_RUNTIME_SHIM_AOTI_SHIM_H
