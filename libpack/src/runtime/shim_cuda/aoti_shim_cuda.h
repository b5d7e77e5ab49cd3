/* The CUDA part of the AOTInductor C shim mpspack exports (torch 2.11's aoti_torch/c/shim.h CUDA guards and
 * generated/c_shim_cuda.h, same names and parameter types). Built only when the CUDA toolkit is found.
 * Tensors on device type cuda (1) live in device memory from the stream-ordered pool; the generic functions
 * of aoti_shim.h (empty_strided, clone, copy_, delete) reach it through the DeviceMemory this part registers.
 */
#ifndef MPSPACK_RUNTIME_SHIM_AOTI_SHIM_CUDA_H
#define MPSPACK_RUNTIME_SHIM_AOTI_SHIM_CUDA_H

#include "runtime/shim/aoti_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUDAGuardOpaque;
typedef struct CUDAGuardOpaque* CUDAGuardHandle;
struct CUDAStreamGuardOpaque;
typedef struct CUDAStreamGuardOpaque* CUDAStreamGuardHandle;

/* Device and stream guards: set the current device / stream of this thread until deleted. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_create_cuda_guard(int32_t device_index, CUDAGuardHandle* ret_guard);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_delete_cuda_guard(CUDAGuardHandle guard);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_guard_set_index(CUDAGuardHandle guard, int32_t device_index);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_create_cuda_stream_guard(void* stream, int32_t device_index,
                                                                       CUDAStreamGuardHandle* ret_guard);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_delete_cuda_stream_guard(CUDAStreamGuardHandle guard);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);
/* Raw device memory from the tensors' stream-ordered pool, on the current device and stream (nbytes 0 gives null);
 * delete frees it on the stream it was made on, and accepts null. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_caching_allocator_raw_alloc(uint64_t nbytes, void** ret_ptr);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_caching_allocator_raw_delete(void* ptr);

/* Fallback ops. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_addmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                             AtenTensorHandle mat1, AtenTensorHandle mat2, double beta,
                                                             double alpha);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                          AtenTensorHandle mat2);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_mm_dtype_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                AtenTensorHandle mat2, int32_t out_dtype);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                           AtenTensorHandle mat2);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                               AtenTensorHandle batch1, AtenTensorHandle batch2,
                                                               double beta, double alpha);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_convolution(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_dot_product_efficient_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_dot_product_cudnn_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, int32_t return_debug_mask, double* scale,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4,
    int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7, AtenTensorHandle* ret8);
/* The same attention as torch's flash backend names it (no mask; outputs as its meta function makes them). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_dot_product_flash_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7,
    AtenTensorHandle* ret8);
/* The kernels under torch's SDPA backends, called directly: operands [B, S, H, E] (or packed [total, H, E] with
 * cumulative sequence lengths), masks aligned as torch's kernels align them, outputs in their layouts. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__efficient_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* bias,
    AtenTensorHandle* cu_seqlens_q, AtenTensorHandle* cu_seqlens_k, int64_t* max_seqlen_q, int64_t* max_seqlen_k,
    double dropout_p, int64_t custom_mask_type, int32_t compute_log_sumexp, double* scale, AtenTensorHandle* seqlen_k,
    int64_t* window_size, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__flash_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* cum_seq_q,
    AtenTensorHandle* cum_seq_k, int64_t max_q, int64_t max_k, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double* scale, int64_t* window_size_left, int64_t* window_size_right,
    AtenTensorHandle* seqused_k, AtenTensorHandle* alibi_slopes, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2, AtenTensorHandle* ret3, AtenTensorHandle* ret4);
/* Row-wise scaled float8 (e4m3fn) products over groups (a mixture of experts' layers): 2-d x 3-d, 3-d x 2-d and
 * 2-d x 2-d with offs (int32 group ends), 3-d x 3-d without; bfloat16 out. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_grouped_mm(
    AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scale_a, AtenTensorHandle scale_b,
    AtenTensorHandle* offs, AtenTensorHandle* bias, AtenTensorHandle* scale_result, int32_t* out_dtype,
    int32_t use_fast_accum, AtenTensorHandle* ret0);
/* bfloat16 [m, k] times int4 weights in _convert_weight_to_int4pack's layout, per-group scales and zeros. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__weight_int4pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                                       int64_t qGroupSize,
                                                                       AtenTensorHandle qScaleAndZeros,
                                                                       AtenTensorHandle* ret0);
/* nn.LSTMCell's fused step: (hy, cy, the activated gates as workspace). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__thnn_fused_lstm_cell(
    AtenTensorHandle input_gates, AtenTensorHandle hidden_gates, AtenTensorHandle cx, AtenTensorHandle* input_bias,
    AtenTensorHandle* hidden_bias, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2);
/* Embedding bags as aoti_torch_cpu__embedding_bag computes them, the backward-only outputs as torch's CUDA kernel
 * gives them. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
                                                                  AtenTensorHandle offsets, int32_t scale_grad_by_freq,
                                                                  int64_t mode, int32_t sparse,
                                                                  AtenTensorHandle* per_sample_weights,
                                                                  int32_t include_last_offset, int64_t padding_idx,
                                                                  AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                                  AtenTensorHandle* ret2, AtenTensorHandle* ret3);
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__embedding_bag_forward_only(
    AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq,
    int64_t mode, int32_t sparse, AtenTensorHandle* per_sample_weights, int32_t include_last_offset,
    int64_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3);
/* aten::_addmm_activation as torch's CUDA kernel computes it (tanh GELU; no activation when mat1 has no columns). */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda__addmm_activation(AtenTensorHandle self, AtenTensorHandle mat1,
                                                                     AtenTensorHandle mat2, double beta, double alpha,
                                                                     int32_t use_gelu, AtenTensorHandle* ret0);
/* Running sum along dim, as aoti_torch_cpu_cumsum (aoti_shim.h), on a cuda tensor. */
MPSPACK_SHIM_EXPORT AOTITorchError aoti_torch_cuda_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                          AtenTensorHandle* ret0);

#ifdef __cplusplus
}
#endif

#endif
