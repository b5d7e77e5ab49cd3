"""The CUDA fallbacks without a CPU twin: torch's efficient, cuDNN and flash attention backends, mm.dtype_out.
Recorded on a GPU."""

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


@op("_scaled_dot_product_cudnn_attention", min_torch="2.5", devices=CUDA,
    torch_op="aten._scaled_dot_product_cudnn_attention.default")
def cudnn(g):
    for dt in (torch.float16, torch.bfloat16):
        q, k, v = qkv(g, dt, e=64)
        yield Case(f"{dt}", [q, k, v, None, True, 0.0, False, False, None], ignore=[6, 7, 8], **TOL[dt])
        yield Case(f"{dt} causal", [q, k, v, None, True, 0.0, True, False, None], ignore=[6, 7, 8], **TOL[dt])


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
