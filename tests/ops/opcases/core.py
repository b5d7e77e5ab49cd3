"""The torch ops among the generic functions of torch's c/shim.h (group "core"): _mm_plus_mm_out, the out= forms of
scatter, scatter_reduce and index_put, and fbgemm's fp16-weight Linear."""

import struct

import torch

from ..spec import Case, err, op

aten = torch.ops.aten


def _mm_plus_mm(out, a, b, c, d):
    # torch::inductor::_mm_plus_mm_out: mm into out, then out.addmm_(c, d).
    torch.mm(a, b, out=out)
    return out.addmm_(c, d)


@op("_mm_plus_mm_out", function="aoti_torch__mm_plus_mm_out", devices=("cpu",), call=_mm_plus_mm)
def mm_plus_mm_out(g):
    for dt in (torch.float32, torch.float64):
        yield Case(f"{dt}", [torch.empty(4, 3, dtype=dt), g.randn(4, 5, dtype=dt), g.randn(5, 3, dtype=dt),
                             g.randn(4, 2, dtype=dt), g.randn(2, 3, dtype=dt)], mutated=[0], rtol=1e-5)
    yield Case("bf16", [torch.empty(3, 3, dtype=torch.bfloat16), g.randn(3, 4, dtype=torch.bfloat16),
                        g.randn(4, 3, dtype=torch.bfloat16), g.randn(3, 2, dtype=torch.bfloat16),
                        g.randn(2, 3, dtype=torch.bfloat16)], mutated=[0], rtol=2e-2, atol=2e-2)
    yield Case("f16", [torch.empty(3, 3, dtype=torch.float16), g.randn(3, 4, dtype=torch.float16),
                       g.randn(4, 3, dtype=torch.float16), g.randn(3, 2, dtype=torch.float16),
                       g.randn(2, 3, dtype=torch.float16)], mutated=[0], rtol=1e-2, atol=1e-2, min_torch="2.1")
    yield Case("int64", [torch.empty(2, 2, dtype=torch.int64), g.randint(-5, 5, (2, 3)), g.randint(-5, 5, (3, 2)),
                         g.randint(-5, 5, (2, 4)), g.randint(-5, 5, (4, 2))], mutated=[0])
    yield Case("transposed and strided operands", [torch.empty(4, 3), g.randn(5, 4).t(), g.strided(g.randn(5, 3)),
                                                   g.randn(4, 6), g.randn(3, 6).t()], mutated=[0], rtol=1e-5)
    yield Case("empty K in one product", [torch.empty(3, 2), torch.empty(3, 0), torch.empty(0, 2), g.randn(3, 1),
                                          g.randn(1, 2)], mutated=[0])
    yield err("inner sizes differ", [torch.empty(2, 3), g.randn(2, 4), g.randn(4, 3), g.randn(2, 5), g.randn(4, 3)])


@op("scatter_out", function="aoti_torch_scatter_out", devices=("cpu",),
    call=lambda out, s, dim, index, src: aten.scatter.src_out(s, dim, index, src, out=out))
def scatter_out(g):
    yield Case("dim 1", [torch.empty(3, 5), g.randn(3, 5), 1, torch.tensor([[0, 4], [2, 1], [3, 0]]), g.randn(3, 2)],
               mutated=[0])
    yield Case("dim 0 int32 values, negative dim", [torch.empty(4, 2, dtype=torch.int32),
                                                    g.randint(-9, 9, (4, 2), dtype=torch.int32), -2,
                                                    torch.tensor([[3, 0]]), g.randint(-9, 9, (1, 2), dtype=torch.int32)],
               mutated=[0])
    yield Case("strided self", [torch.empty(3, 3), g.strided(g.randn(3, 3)), 1, torch.tensor([[2], [0], [1]]),
                                g.randn(3, 1)], mutated=[0])
    yield err("index out of range", [torch.empty(2, 3), g.randn(2, 3), 1, torch.tensor([[5], [0]]), g.randn(2, 1)])


@op("scatter_reduce_out", function="aoti_torch_scatter_reduce_out", devices=("cpu",),
    call=lambda out, s, dim, index, src, reduce, inc: aten.scatter_reduce.two_out(s, dim, index, src, reduce,
                                                                                  include_self=inc, out=out))
def scatter_reduce_out(g):
    index = torch.tensor([[0, 2, 0, 3, 2, 0]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            yield Case(f"{reduce} include_self={inc}", [torch.empty(1, 4), g.randn(1, 4), 1, index, g.randn(1, 6),
                                                         reduce, inc], mutated=[0], rtol=1e-5)
    yield Case("f64 sum along dim 0", [torch.empty(3, 2, dtype=torch.float64), g.randn(3, 2, dtype=torch.float64), 0,
                                       torch.tensor([[2, 2], [0, 2]]), g.randn(2, 2, dtype=torch.float64), "sum",
                                       True], mutated=[0])
    yield err("unknown reduce", [torch.empty(1, 4), g.randn(1, 4), 1, index, g.randn(1, 6), "median", True])


@op("index_put_out", function="aoti_torch_index_put_out", devices=("cpu",),
    call=lambda out, s, indices, values, acc: aten.index_put.out(s, indices, values, acc, out=out))
def index_put_out(g):
    yield Case("rows by int64", [torch.empty(5, 3), g.randn(5, 3), [torch.tensor([4, 0])], g.randn(2, 3), False],
               mutated=[0])
    yield Case("None then index, accumulate", [torch.empty(3, 4), g.randn(3, 4), [None, torch.tensor([0, 3, 0])],
                                               g.randn(3, 3), True], mutated=[0], rtol=1e-5)
    yield Case("bool mask, broadcast value", [torch.empty(2, 3), g.randn(2, 3),
                                              [torch.tensor([[True, False, True], [False, False, True]])],
                                              torch.tensor(9.0), False], mutated=[0])
    yield Case("int64 values", [torch.empty(4, dtype=torch.int64), g.randint(-9, 9, (4,)), [torch.tensor([1, 1, 3])],
                                torch.tensor([1, 2, 3]), True], mutated=[0])
    yield err("index out of range", [torch.empty(3), g.randn(3), [torch.tensor([3])], torch.tensor([1.0]), False])


def _pack_fp16(w):
    # mpspack's packed form (torch's is an fbgemm object no tensor compares with): the weight clamped to float16's
    # range, as fbgemm's packing saturates, in float16, row-major. The Linear cases check the pair against torch.
    if w.dim() != 2:
        raise RuntimeError("fbgemm weight packing only packs matrices not vectors.")
    if w.dtype != torch.float32:
        raise RuntimeError(f"expected scalar type Float but found {w.dtype}")
    return w.clamp(-65504, 65504).half().contiguous()


@op("wrapped_fbgemm_pack_gemm_matrix_fp16", reference="cpu", call=_pack_fp16)
def wrapped_fbgemm_pack_gemm_matrix_fp16(g):
    yield Case("rounds to float16", [g.randn(5, 7)])
    yield Case("saturates", [torch.tensor([[70000.0, -1e6], [0.1, 65504.0]])])
    yield Case("transposed", [g.randn(4, 3).t()])
    yield err("a vector", [g.randn(6)])


def _linear_fp16(x, w16, bias, out_channel):
    # torch's pair, packed from the float16 weight the mpspack pack gives (the same values).
    packed = torch.ops._quantized.wrapped_fbgemm_pack_gemm_matrix_fp16(w16.float())
    return torch.ops._quantized.wrapped_fbgemm_linear_fp16_weight(x, packed, bias, out_channel)


@op("wrapped_fbgemm_linear_fp16_weight", reference="cpu", min_torch="2.1", call=_linear_fp16)
def wrapped_fbgemm_linear_fp16_weight(g):
    w = g.randn(6, 8).half()
    yield Case("2-d input", [g.randn(4, 8), w, g.randn(6), 6], rtol=1e-5, atol=1e-5)
    yield Case("3-d strided input", [g.strided(g.randn(2, 3, 8)), w, g.randn(6), 6], rtol=1e-5, atol=1e-5)
    yield Case("no rows", [torch.empty(0, 8), w, g.randn(6), 6])
    yield err("input's last size differs", [g.randn(4, 5), w, g.randn(6), 6])


# mpspack's prepacked int8 weight (torch's is an fbgemm object no tensor compares with): a header (magic "MPQ8",
# float scale, int32 zero point, int32 has_bias, int64 N, int64 K, little-endian), the float32 bias, then the
# weight quantized by torch's own quantize_per_tensor to qint8.
_QUANT_HEADER = struct.Struct("<4sfiiqq")


def _prepack_int8(w, scale, zero_point, bias):
    if w.dim() != 2:
        raise RuntimeError("fbgemm weight packing only packs matrices not vectors.")
    q = torch.quantize_per_tensor(w, float(scale.item()), int(zero_point.item()), torch.qint8).int_repr()
    has_bias = bias is not None
    blob = _QUANT_HEADER.pack(b"MPQ8", float(scale.item()), int(zero_point.item()), int(has_bias), w.shape[0],
                              w.shape[1])
    blob += bias.float().contiguous().numpy().tobytes() if has_bias else b""
    blob += q.contiguous().numpy().tobytes()
    return torch.frombuffer(bytearray(blob), dtype=torch.uint8)


def _unpack_int8(packed):
    """The float weight, scale, zero point and bias a packed weight holds (the weight exactly on its grid)."""
    raw = packed.numpy().tobytes()
    _, scale, zero_point, has_bias, n, k = _QUANT_HEADER.unpack_from(raw)
    at = _QUANT_HEADER.size
    bias = torch.frombuffer(bytearray(raw[at:at + 4 * n]), dtype=torch.float32) if has_bias else None
    at += 4 * n if has_bias else 0
    q = torch.frombuffer(bytearray(raw[at:at + n * k]), dtype=torch.int8).reshape(n, k)
    return (q.float() - zero_point) * scale, scale, zero_point, bias


@op("_wrapped_linear_prepack", reference="cpu", call=_prepack_int8)
def wrapped_linear_prepack(g):
    yield Case("zero point 0, bias", [g.randn(5, 7), torch.tensor(0.02), torch.tensor(0), g.randn(5)])
    yield Case("zero point 3, saturating, no bias", [g.randn(4, 6) * 5, torch.tensor(0.01), torch.tensor(3), None])
    yield Case("transposed weight", [g.randn(6, 3).t(), torch.tensor(0.05), torch.tensor(-2), g.randn(3)])
    yield err("a vector", [g.randn(6), torch.tensor(0.1), torch.tensor(0), None])


def _quantized_linear(x, x_scale, x_zero_point, packed, out_scale, out_zero_point, out_channel):
    # torch's pair on the weight the mpspack packed form holds.
    w, scale, zero_point, bias = _unpack_int8(packed)
    torch_packed = torch.ops._quantized._wrapped_linear_prepack(w, torch.tensor(scale), torch.tensor(zero_point),
                                                                bias)
    return torch.ops._quantized._wrapped_quantized_linear_prepacked(x, x_scale, x_zero_point, torch_packed,
                                                                    out_scale, out_zero_point, out_channel)


@op("_wrapped_quantized_linear_prepacked", reference="cpu", min_torch="2.5", call=_quantized_linear)
def wrapped_quantized_linear_prepacked(g):
    w = g.randn(6, 8)
    for name, zp, bias in (("weight zero point 0, bias", 0, g.randn(6)), ("weight zero point 2", 2, g.randn(6))):
        packed = _prepack_int8(w, torch.tensor(0.02), torch.tensor(zp), bias)
        # Ties in the final rounding may fall either way: one step of the output's scale.
        yield Case(name, [g.randn(4, 8), torch.tensor(0.03), torch.tensor(128), packed, torch.tensor(0.05),
                          torch.tensor(120), 6], rtol=0.0, atol=0.051)
    packed = _prepack_int8(w, torch.tensor(0.02), torch.tensor(0), g.randn(6))
    yield Case("input zero point 0 clamps negatives", [g.randn(3, 8), torch.tensor(0.02), torch.tensor(0), packed,
                                                       torch.tensor(0.1), torch.tensor(10), 6], rtol=0.0, atol=0.101)
