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
    yield Case("f16 additive bias", [q, k, v, g.randn(2, 3, 9, 11, dtype=torch.float16), False, 0.0, False, None],
               ignore=[2, 3], **TOL[torch.float16])


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
