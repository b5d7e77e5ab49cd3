"""The CUDA fallbacks without a CPU twin: torch's efficient, cuDNN and flash attention backends and the kernels
under them, mm.dtype_out, the float8 grouped product. Recorded on a GPU."""

import torch

from ..spec import Case, op

CUDA = ("cuda",)
# Half types: accumulation order differs between kernels; logsumexp is float32.
TOL = {torch.float16: {"rtol": 2e-3, "atol": 2e-3}, torch.bfloat16: {"rtol": 1.6e-2, "atol": 1e-2},
       torch.float32: {"rtol": 1e-4, "atol": 1e-5}}


def qkv(g, dt, b=2, h=3, lq=9, lk=11, e=16):
    return g.randn(b, h, lq, e, dtype=dt), g.randn(b, h, lk, e, dtype=dt), g.randn(b, h, lk, e, dtype=dt)


@op("_scaled_dot_product_efficient_attention", min_torch="2.1", devices=CUDA,
    torch_op="aten._scaled_dot_product_efficient_attention.default")
def efficient(g):
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        q, k, v = qkv(g, dt)
        yield Case(f"{dt} with logsumexp", [q, k, v, None, True, 0.0, False, None], ignore=[2, 3], **TOL[dt])
        yield Case(f"{dt} causal, scale", [q, k, v, None, False, 0.0, True, 0.3], ignore=[2, 3], **TOL[dt])
    q, k, v = qkv(g, torch.float16)
    # torch's kernel wants the bias's batch and head strides to be multiples of 8: a padded row, sliced.
    bias = g.randn(2, 3, 9, 16, dtype=torch.float16)[..., :11]
    yield Case("f16 additive bias", [q, k, v, bias, False, 0.0, False, None], ignore=[2, 3], **TOL[torch.float16])


@op("_scaled_dot_product_flash_attention", min_torch="2.1", devices=CUDA,
    torch_op="aten._scaled_dot_product_flash_attention.default")
def flash(g):
    for dt in (torch.float16, torch.bfloat16):
        q, k, v = qkv(g, dt)
        yield Case(f"{dt}", [q, k, v, 0.0, False, False, None], ignore=[6, 7, 8], **TOL[dt])
        yield Case(f"{dt} causal, scale", [q, k, v, 0.0, True, False, 0.25], ignore=[6, 7, 8], **TOL[dt])
    q, k, v = qkv(g, torch.float16)
    yield Case("f16 [B, L, H, E] memory", [q.transpose(1, 2).contiguous().transpose(1, 2), k, v, 0.0, False, False,
                                           None], ignore=[6, 7, 8], **TOL[torch.float16])
    # Grouped-query attention: 4 query heads on 2 key/value heads (torch's flash kernel takes them).
    q4, k2, v2 = g.randn(2, 4, 9, 16, dtype=torch.float16), *qkv(g, torch.float16, h=2)[1:]
    yield Case("f16 grouped-query, causal", [q4, k2, v2, 0.0, True, False, None], ignore=[6, 7, 8],
               **TOL[torch.float16])


@op("_scaled_dot_product_cudnn_attention", min_torch="2.5", devices=CUDA,
    torch_op="aten._scaled_dot_product_cudnn_attention.default")
def cudnn(g):
    for dt in (torch.float16, torch.bfloat16):
        q, k, v = qkv(g, dt, e=64)
        yield Case(f"{dt}", [q, k, v, None, True, 0.0, False, False, None], ignore=[6, 7, 8], **TOL[dt])
        yield Case(f"{dt} causal", [q, k, v, None, True, 0.0, True, False, None], ignore=[6, 7, 8], **TOL[dt])


def bshe(g, dt, b=2, lq=9, lk=11, h=3, e=16):
    """query, key and value as the raw attention kernels take them: [B, S, H, E]."""
    return g.randn(b, lq, h, e, dtype=dt), g.randn(b, lk, h, e, dtype=dt), g.randn(b, lk, h, e, dtype=dt)


def i32(values):
    return torch.tensor(values, dtype=torch.int32)


# A packed batch of three sequences (B = 1): queries 5, 9 and 7 (max 9), keys 7, 11 and 8 (max 11).
CU_Q, CU_K, TOTAL_Q, TOTAL_K = [0, 5, 14, 21], [0, 7, 18, 26], 21, 26


@op("_efficient_attention_forward", min_torch="2.5", devices=CUDA,
    torch_op="aten._efficient_attention_forward.default")
def efficient_forward(g):
    # args: q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, custom_mask_type,
    # compute_log_sumexp, scale, seqlen_k, window_size; results 2 and 3 (philox seed and offset) are not compared.
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        q, k, v = bshe(g, dt)
        yield Case(f"{dt} with logsumexp", [q, k, v, None, None, None, None, None, 0.0, 0, True, None, None, None],
                   ignore=[2, 3], **TOL[dt])
        yield Case(f"{dt} causal from the top left, scale", [q, k, v, None, None, None, None, None, 0.0, 1, True,
                                                              0.3, None, None], ignore=[2, 3], **TOL[dt])
    q, k, v = bshe(g, torch.float16)
    tol = TOL[torch.float16]
    yield Case("f16 causal from the bottom right, no logsumexp",
               [q, k, v, None, None, None, None, None, 0.0, 2, False, None, None, None], ignore=[2, 3], **tol)
    yield Case("f16 bottom right, window of 4", [q, k, v, None, None, None, None, None, 0.0, 2, True, None, None, 4],
               ignore=[2, 3], **tol)
    # The bias [B, H, M, N] with its batch and head strides multiples of 8 (torch's kernel wants them so).
    bias = g.randn(2, 3, 9, 16, dtype=torch.float16)[..., :11]
    yield Case("f16 additive bias", [q, k, v, bias, None, None, None, None, 0.0, 0, True, None, None, None],
               ignore=[2, 3], **tol)
    yield Case("f16 [B, H, S, E] memory (SDPA's transposed view)",
               [q.transpose(1, 2).contiguous().transpose(1, 2), k, v, None, None, None, None, None, 0.0, 1, True,
                None, None, None], ignore=[2, 3], **tol)
    for dt in (torch.float16, torch.bfloat16):
        q, k, v = bshe(g, dt, b=1, lq=TOTAL_Q, lk=TOTAL_K)
        for mask in (0, 2):
            yield Case(f"{dt} packed batch, mask type {mask}",
                       [q, k, v, None, i32(CU_Q), i32(CU_K), 9, 11, 0.0, mask, True, None, None, None],
                       ignore=[2, 3], **TOL[dt])
    q, k, v = bshe(g, torch.float16, b=1, lq=TOTAL_Q, lk=TOTAL_K)
    yield Case("f16 packed batch, keys used per sequence",
               [q, k, v, None, i32(CU_Q), i32(CU_K), 9, 11, 0.0, 0, True, None, i32([6, 9, 8]), None],
               ignore=[2, 3], **tol)


@op("_flash_attention_forward", min_torch="2.5", devices=CUDA, torch_op="aten._flash_attention_forward.default")
def flash_forward(g):
    # args: q, k, v, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, return_debug_mask, scale,
    # window_size_left, window_size_right, seqused_k, alibi_slopes; results 2 and 3 (rng state) are not compared.
    for dt in (torch.float16, torch.bfloat16):
        q, k, v = bshe(g, dt)
        yield Case(f"{dt}", [q, k, v, None, None, 9, 11, 0.0, False, False, None, None, None, None, None],
                   ignore=[2, 3], **TOL[dt])
        yield Case(f"{dt} causal, scale", [q, k, v, None, None, 9, 11, 0.0, True, False, 0.25, None, None, None,
                                           None], ignore=[2, 3], **TOL[dt])
    q, k, v = bshe(g, torch.float16)
    tol = TOL[torch.float16]
    yield Case("f16 sliding window 3 left, 1 right", [q, k, v, None, None, 9, 11, 0.0, False, False, None, 3, 1,
                                                      None, None], ignore=[2, 3], **tol)
    yield Case("f16 causal, window 4 left", [q, k, v, None, None, 9, 11, 0.0, True, False, None, 4, None, None,
                                             None], ignore=[2, 3], **tol)
    yield Case("f16 [B, H, S, E] memory (SDPA's transposed view)",
               [q.transpose(1, 2).contiguous().transpose(1, 2), k, v, None, None, 9, 11, 0.0, True, False, None,
                None, None, None, None], ignore=[2, 3], **tol)
    # Grouped-query attention: 4 query heads on 2 key/value heads; a single query (torch swaps its groups in).
    q, k, v = g.randn(2, 9, 4, 16, dtype=torch.float16), *bshe(g, torch.float16, h=2)[1:]
    yield Case("f16 grouped-query, causal", [q, k, v, None, None, 9, 11, 0.0, True, False, None, None, None, None,
                                             None], ignore=[2, 3], **tol)
    yield Case("f16 grouped-query, one query", [q[:, :1].contiguous(), k, v, None, None, 1, 11, 0.0, False, False,
                                                None, None, None, None, None], ignore=[2, 3], **tol)
    for dt in (torch.float16, torch.bfloat16):
        q, k, v = (x[0] for x in bshe(g, dt, b=1, lq=TOTAL_Q, lk=TOTAL_K))
        yield Case(f"{dt} packed batch, causal", [q, k, v, i32(CU_Q), i32(CU_K), 9, 11, 0.0, True, False, None,
                                                  None, None, None, None], ignore=[2, 3], **TOL[dt])
    q, k, v = (x[0] for x in bshe(g, torch.float16, b=1, lq=TOTAL_Q, lk=TOTAL_K))
    yield Case("f16 packed batch, keys used per sequence", [q, k, v, i32(CU_Q), i32(CU_K), 9, 11, 0.0, False, False,
                                                            None, None, None, i32([6, 9, 8]), None],
               ignore=[2, 3], **tol)


def _e4m3(g, *shape):
    """float8 e4m3fn values in [-4, 4) (exact in every wider type)."""
    return (g.rand(*shape) * 8 - 4).to(torch.float8_e4m3fn)


def _col_major(x):
    """The same values with the last two dims column-major, as torch's grouped product wants mat2."""
    return x.transpose(-2, -1).contiguous().transpose(-2, -1)


@op("_scaled_grouped_mm", min_torch="2.8", devices=CUDA, torch_op="aten._scaled_grouped_mm.default")
def scaled_grouped_mm(g):
    # args: mat_a, mat_b, scale_a, scale_b, offs, bias, scale_result, out_dtype, use_fast_accum. bfloat16 out:
    # torch's kernel and this one sum in different orders before the one rounding.
    tol = {"rtol": 1.6e-2, "atol": 1e-2}
    scale = lambda *shape: g.rand(*shape) + 0.5  # noqa: E731
    yield Case("2-d x 3-d, groups of 8, 5 and 11 rows",
               [_e4m3(g, 24, 32), _col_major(_e4m3(g, 3, 32, 16)), scale(24), scale(3, 16), i32([8, 13, 24]), None,
                None, torch.bfloat16, False], **tol)
    yield Case("3-d x 3-d", [_e4m3(g, 2, 16, 32), _col_major(_e4m3(g, 2, 32, 48)), scale(2, 16), scale(2, 48), None,
                             None, None, None, False], **tol)
    yield Case("2-d x 2-d, groups of 16, 32 and 16 along K",
               [_e4m3(g, 16, 64), _col_major(_e4m3(g, 64, 32)), scale(3 * 16), scale(3 * 32), i32([16, 48, 64]),
                None, None, torch.bfloat16, False], **tol)


@op("mm_dtype_out", min_torch="2.8", devices=CUDA,
    call=lambda out, a, b, dt: torch.ops.aten.mm.dtype_out(a, b, dt, out=out))
def mm_dtype_out(g):
    for dt in (torch.float16, torch.bfloat16):
        yield Case(f"{dt} to float32", [torch.empty(5, 3), g.randn(5, 40, dtype=dt), g.randn(40, 3, dtype=dt),
                                        torch.float32], mutated=[0], rtol=1e-4, atol=1e-4)


def _int4_weights(g, n, k, group):
    """uint4 weights [n, k], packed by torch for the GPU, and bfloat16 scales and zeros per group."""
    q = g.randint(0, 16, (n, k), dtype=torch.int32)
    as_bytes = ((q[:, ::2] << 4) | q[:, 1::2]).to(torch.uint8)
    scales_zeros = torch.stack([g.rand(k // group, n) * 0.1 + 0.01, g.randn(k // group, n) * 0.1], dim=2)
    return as_bytes, scales_zeros.to(torch.bfloat16)


@op("_weight_int4pack_mm", min_torch="2.4", devices=CUDA, torch_op="aten._weight_int4pack_mm.default")
def weight_int4pack_mm(g):
    for m, n, k, group, inner in ((1, 16, 64, 32, 2), (5, 24, 256, 64, 4), (3, 8, 256, 128, 8)):
        as_bytes, scales_zeros = _int4_weights(g, n, k, group)
        packed = torch.ops.aten._convert_weight_to_int4pack(as_bytes.to(g.device), inner).cpu()
        yield Case(f"m {m} n {n} k {k} group {group} inner_k_tiles {inner}",
                   [g.randn(m, k, dtype=torch.bfloat16), packed, group, scales_zeros], rtol=2e-2, atol=2e-2)


@op("_thnn_fused_lstm_cell", min_torch="2.1", devices=CUDA, torch_op="aten._thnn_fused_lstm_cell.default")
def thnn_fused_lstm_cell(g):
    b, h = 3, 5
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        tol = TOL[dt]
        yield Case(f"{dt} with biases", [g.randn(b, 4 * h, dtype=dt), g.randn(b, 4 * h, dtype=dt),
                                         g.randn(b, h, dtype=dt), g.randn(4 * h, dtype=dt), g.randn(4 * h, dtype=dt)],
                   **tol)
    yield Case("f32 without biases", [g.randn(b, 4 * h), g.randn(b, 4 * h), g.randn(b, h), None, None],
               **TOL[torch.float32])
