"""The fallbacks the shim had before the suite: products, convolution, attention, scans, sorting, scatter,
index_put, nonzero, int8 weights, embedding bags."""

import torch

from ..spec import Case, err, op

aten = torch.ops.aten
HALF = (torch.float16, torch.bfloat16)


@op("mm_out", call=lambda out, a, b: aten.mm.out(a, b, out=out))
def mm_out(g):
    for dt in (torch.float32, torch.float64, *HALF):
        tol = {} if dt in (torch.float32, torch.float64) else {"rtol": 2e-2, "atol": 2e-2, "min_torch": "2.1"}
        yield Case(f"{dt} 5x7 @ 7x3", [torch.empty(5, 3, dtype=dt), g.randn(5, 7, dtype=dt), g.randn(7, 3, dtype=dt)],
                   mutated=[0], **tol)
    yield Case("transposed operands", [torch.empty(4, 6), g.randn(8, 4).t(), g.randn(6, 8).t()], mutated=[0])
    yield Case("empty K", [torch.empty(3, 2), torch.empty(3, 0), torch.empty(0, 2)], mutated=[0])
    yield err("inner sizes differ", [torch.empty(3, 3), g.randn(3, 4), g.randn(5, 3)])


@op("addmm_out", call=lambda out, s, a, b, beta, alpha: aten.addmm.out(s, a, b, beta=beta, alpha=alpha, out=out))
def addmm_out(g):
    yield Case("bias row, beta 0.5 alpha 2", [torch.empty(4, 3), g.randn(3), g.randn(4, 5), g.randn(5, 3), 0.5, 2.0],
               mutated=[0])
    yield Case("f64 full self", [torch.empty(2, 3, dtype=torch.float64), g.randn(2, 3, dtype=torch.float64),
                                 g.randn(2, 6, dtype=torch.float64), g.randn(6, 3, dtype=torch.float64), 1.0, 1.0],
               mutated=[0])
    yield Case("beta 0 ignores NaN in self", [torch.empty(2, 2), torch.full((2, 2), float("nan")), g.randn(2, 3),
                                              g.randn(3, 2), 0.0, 1.0], mutated=[0])


@op("bmm_out", call=lambda out, a, b: aten.bmm.out(a, b, out=out))
def bmm_out(g):
    yield Case("3 batches", [torch.empty(3, 4, 5), g.randn(3, 4, 6), g.randn(3, 6, 5)], mutated=[0])
    yield Case("bf16", [torch.empty(2, 3, 3, dtype=torch.bfloat16), g.randn(2, 3, 4, dtype=torch.bfloat16),
                        g.randn(2, 4, 3, dtype=torch.bfloat16)], mutated=[0], rtol=2e-2, atol=2e-2, min_torch="2.1")
    yield err("batch sizes differ", [torch.empty(3, 4, 5), g.randn(3, 4, 6), g.randn(2, 6, 5)])


@op("baddbmm_out",
    call=lambda out, s, a, b, beta, alpha: aten.baddbmm.out(s, a, b, beta=beta, alpha=alpha, out=out))
def baddbmm_out(g):
    yield Case("broadcast self", [torch.empty(2, 3, 4), g.randn(3, 4), g.randn(2, 3, 5), g.randn(2, 5, 4), 0.25, 1.5],
               mutated=[0])


@op("convolution", torch_op="aten.convolution.default")
def convolution(g):
    yield Case("2d 3x3 pad 1 bias", [g.randn(2, 3, 8, 8), g.randn(4, 3, 3, 3), g.randn(4), [1, 1], [1, 1], [1, 1],
                                     False, [0, 0], 1], rtol=1e-4, atol=1e-4)
    yield Case("2d stride 2 dilation 2 groups 2 no bias", [g.randn(1, 4, 9, 9), g.randn(6, 2, 3, 3), None, [2, 2],
                                                          [0, 0], [2, 2], False, [0, 0], 2], rtol=1e-4, atol=1e-4)
    yield Case("1d", [g.randn(2, 3, 10), g.randn(5, 3, 4), g.randn(5), [1], [2], [1], False, [0], 1],
               rtol=1e-4, atol=1e-4)
    yield Case("depthwise channels-last", [g.randn(1, 4, 6, 6).to(memory_format=torch.channels_last),
                                           g.randn(4, 1, 3, 3), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 4],
               rtol=1e-4, atol=1e-4)
    # ConvNeXt's block: a 7x7 depthwise convolution (bias) of a channels-last input (a permuted LayerNorm's output).
    yield Case("depthwise 7x7 bias channels-last", [g.randn(1, 16, 12, 12).to(memory_format=torch.channels_last),
                                                    g.randn(16, 1, 7, 7), g.randn(16), [1, 1], [3, 3], [1, 1], False,
                                                    [0, 0], 16], rtol=1e-4, atol=1e-4)
    # AOTInductor passes that input as a view whose batch dim (size 1) has stride 0.
    x = g.randn(1, 12, 12, 16)
    yield Case("depthwise 7x7 channels-last, batch stride 0", [x.as_strided((1, 16, 12, 12), (0, 1, 192, 16)),
                                                              g.randn(16, 1, 7, 7), g.randn(16), [1, 1], [3, 3],
                                                              [1, 1], False, [0, 0], 16], rtol=1e-4, atol=1e-4)
    yield Case("depthwise 7x7 bias", [g.randn(1, 16, 12, 12), g.randn(16, 1, 7, 7), g.randn(16), [1, 1], [3, 3], [1, 1],
                                      False, [0, 0], 16], rtol=1e-4, atol=1e-4)
    yield err("channels differ from the weight's", [g.randn(1, 3, 5, 5), g.randn(2, 4, 3, 3), None, [1, 1], [0, 0],
                                                    [1, 1], False, [0, 0], 1])
    if g.device == "cuda":
        yield from _tf32_choice_cases(g)


# float32 convolutions where torch 2.11's cuDNN engine choice (TF32 allowed, its default) computes in full float32
# for some shapes (few channels, depthwise, a 7x7 stem) and in TF32 for others (bench/device/tf32_probe.py).
_TF32_SHAPES = [("3->16 k3", (1, 3, 32, 32), (16, 3, 3, 3), 1, 1), ("16->32 k3", (1, 16, 32, 32), (32, 16, 3, 3), 1, 1),
                ("64->64 k3", (1, 64, 28, 28), (64, 64, 3, 3), 1, 1), ("64->128 k1", (1, 64, 28, 28), (128, 64, 1, 1), 1, 1),
                ("3->32 k7 s2", (1, 3, 64, 64), (32, 3, 7, 7), 2, 1), ("depthwise 96 k7", (1, 96, 28, 28), (96, 1, 7, 7), 1, 96)]


def torch_uses_tf32(args) -> bool:
    """Whether torch's default run of this float32 convolution on the GPU computed in TF32: its result differs from
    the one with TF32 off."""
    on_gpu = [a.cuda() if isinstance(a, torch.Tensor) else a for a in args]
    default = aten.convolution(*on_gpu)
    saved = torch.backends.cudnn.allow_tf32
    try:
        torch.backends.cudnn.allow_tf32 = False
        full = aten.convolution(*on_gpu)
    finally:
        torch.backends.cudnn.allow_tf32 = saved
    return not torch.equal(default, full)


def _tf32_choice_cases(g):
    """Where torch keeps full float32 the shim must too (float32 tolerance: a TF32 result is off by 1e-2 there);
    where torch uses TF32, any TF32 engine's result passes."""
    for name, x, w, stride, groups in _TF32_SHAPES:
        k = w[-1]
        args = [g.randn(*x), g.randn(*w), g.randn(w[0]), [stride, stride], [k // 2, k // 2], [1, 1], False, [0, 0], groups]
        tol = {"rtol": 1e-2, "atol": 0.1} if torch_uses_tf32(args) else {"rtol": 1e-4, "atol": 2e-3}
        yield Case(f"default precision {name}", args, **tol)


@op("_scaled_dot_product_flash_attention_for_cpu", min_torch="2.1",
    torch_op="aten._scaled_dot_product_flash_attention_for_cpu.default", devices=("cpu",))
def flash_attention_cpu(g):
    q, k, v = g.randn(2, 3, 5, 8), g.randn(2, 3, 7, 8), g.randn(2, 3, 7, 8)
    yield Case("plain", [q, k, v, 0.0, False, None, None], rtol=1e-4, atol=1e-5)
    yield Case("causal, scale", [q, g.randn(2, 3, 5, 8), g.randn(2, 3, 5, 8), 0.0, True, None, 0.5],
               rtol=1e-4, atol=1e-5)
    yield Case("additive mask", [q, k, v, 0.0, False, g.randn(2, 3, 5, 7), None], rtol=1e-4, atol=1e-5)


@op("cumsum", torch_op="aten.cumsum.default")
def cumsum(g):
    yield Case("f32 last dim", [g.randn(4, 6), -1, None])
    yield Case("int64 from int32", [g.randint(-9, 9, (3, 5), dtype=torch.int32), 0, None])
    yield Case("bool to int64", [g.randint(0, 2, (7,), dtype=torch.bool), 0, None])
    yield Case("to f64", [g.randn(3, 4), 1, torch.float64])
    yield Case("strided", [g.strided(g.randn(5, 3)), 0, None])
    yield Case("empty", [torch.empty(0, 3), 0, None])
    yield Case("0-d", [torch.tensor(2.5), 0, None])
    yield err("dim out of range", [g.randn(2, 3), 2, None])


@op("cumprod", torch_op="aten.cumprod.default")
def cumprod(g):
    yield Case("f32", [g.rand(3, 5) + 0.5, 1, None])
    yield Case("f64 dim 0", [g.randn(4, 2, dtype=torch.float64), 0, None])
    yield Case("int", [g.randint(-3, 4, (2, 6)), -1, None])


@op("sort", torch_op="aten.sort.default")
def sort(g):
    yield Case("f32 ascending", [g.distinct(4, 7), -1, False])
    yield Case("descending dim 0", [g.distinct(5, 3), 0, True])
    yield Case("NaN sorts last", [torch.tensor([3.0, float("nan"), -1.0, 2.0]), 0, False])
    yield Case("int64", [g.randint(-1000, 1000, (3, 8)), 1, False])
    yield Case("strided", [g.strided(g.distinct(3, 6)), 1, True])
    yield Case("empty", [torch.empty(0, 4), 1, False])


@op("sort_stable", torch_op="aten.sort.stable")
def sort_stable(g):
    yield Case("ties keep their order", [g.randint(0, 4, (3, 10)).float(), True, -1, False])
    yield Case("descending with ties", [g.randint(0, 3, (12,)), True, 0, True])
    yield Case("bf16", [g.distinct(2, 9, dtype=torch.bfloat16), False, 1, False])


@op("topk", torch_op="aten.topk.default")
def topk(g):
    x = g.distinct(3, 8)
    yield Case("largest k=3", [x, 3, -1, True, True])
    yield Case("smallest dim 0", [g.distinct(6, 4), 2, 0, False, True])
    yield Case("f16", [g.distinct(2, 10, dtype=torch.float16), 4, 1, True, True], min_torch="2.1")
    yield Case("bf16", [g.distinct(2, 10, dtype=torch.bfloat16), 4, 1, True, True])
    yield Case("int32", [torch.tensor([[5, -2, 9, 1], [0, 3, -7, 8]], dtype=torch.int32), 2, 1, True, True])
    yield Case("k 0", [x, 0, -1, True, True])
    yield err("k larger than the dim", [x, 9, -1, True, True])
    yield err("dim out of range", [x, 1, 2, True, True])


@op("scatter_src_out", call=lambda out, s, dim, index, src: aten.scatter.src_out(s, dim, index, src, out=out))
def scatter_src_out(g):
    # No index twice in a row: which write wins is not defined (torch's CUDA kernel and its CPU one differ).
    yield Case("dim 1", [torch.empty(3, 5), g.randn(3, 5), 1, torch.tensor([[0, 4], [2, 1], [3, 0]]), g.randn(3, 2)],
               mutated=[0])
    yield err("index out of range", [torch.empty(2, 3), g.randn(2, 3), 1, torch.tensor([[5], [0]]), g.randn(2, 1)])


@op("scatter_value_out", call=lambda out, s, dim, index, value: aten.scatter.value_out(s, dim, index, value, out=out))
def scatter_value_out(g):
    yield Case("dim 0", [torch.empty(4, 3), g.randn(4, 3), 0, torch.tensor([[3, 0, 1]]), -2.5], mutated=[0])


@op("scatter_reduce_two_out",
    call=lambda out, s, dim, index, src, reduce, inc: aten.scatter_reduce.two_out(s, dim, index, src, reduce,
                                                                                  include_self=inc, out=out))
def scatter_reduce_two_out(g):
    index = torch.tensor([[0, 1, 0, 2, 1, 0]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            yield Case(f"{reduce} include_self={inc}", [torch.empty(1, 4), g.randn(1, 4), 1, index, g.randn(1, 6),
                                                         reduce, inc], mutated=[0], rtol=1e-5)
    yield err("unknown reduce", [torch.empty(1, 4), g.randn(1, 4), 1, index, g.randn(1, 6), "median", True])


@op("index_put", torch_op="aten.index_put.default")
def index_put(g):
    yield Case("rows by int64", [g.randn(5, 3), [torch.tensor([4, 0])], g.randn(2, 3), False])
    yield Case("accumulate repeated", [g.randn(4), [torch.tensor([1, 1, 3])], torch.tensor([1.0, 2.0, 3.0]), True])
    yield Case("None then index", [g.randn(3, 4), [None, torch.tensor([0, 3])], g.randn(3, 2), False])
    yield Case("bool mask", [g.randn(2, 3), [torch.tensor([[True, False, True], [False, False, True]])],
                             torch.tensor(9.0), False])
    yield err("index out of range", [g.randn(3), [torch.tensor([3])], torch.tensor([1.0]), False])


@op("nonzero", torch_op="aten.nonzero.default")
def nonzero(g):
    yield Case("f32 2-d", [(g.randn(4, 5) > 0.3).float()])
    yield Case("bool 3-d strided", [g.strided(g.randint(0, 2, (2, 3, 4), dtype=torch.bool))])
    yield Case("all zero", [torch.zeros(3, 3)])
    yield Case("0-d", [torch.tensor(1.0)])


@op("_weight_int8pack_mm", min_torch="2.3", torch_op="aten._weight_int8pack_mm.default")
def weight_int8pack_mm(g):
    yield Case("f32 4x16 by 8x16", [g.randn(4, 16), g.randint(-128, 128, (8, 16), dtype=torch.int8), g.rand(8)],
               rtol=1e-5, atol=1e-4)
    yield Case("bf16", [g.randn(3, 32, dtype=torch.bfloat16), g.randint(-128, 128, (5, 32), dtype=torch.int8),
                        g.rand(5, dtype=torch.bfloat16)], rtol=2e-2, atol=5e-2)
    # The shapes the shim's kernels are built around: one row (a decode step), a few, a prompt's worth (the
    # dequantized panels); K and N whole vectors and blocks, then odd sizes that leave a tail everywhere. Scales of
    # a quantized layer's size. float32 sums of K terms may differ by any order of summation: atol is that bound.
    # bfloat16 only at K a multiple of 16 (torch's AVX-512 kernel reads 16 activations at a time, with no tail).
    for m, k, n in ((1, 256, 64), (8, 192, 64), (128, 64, 32), (1, 37, 65), (8, 100, 37), (128, 33, 19)):
        a, w, sc = g.randn(m, k), g.randint(-128, 128, (n, k), dtype=torch.int8), g.rand(n) * 0.019 + 0.001
        bound = (a.double().abs() @ w.double().abs().t() * sc.double()).max().item() * k * 2.0 ** -24
        yield Case(f"f32 {m}x{k} by {n}x{k}", [a, w, sc], rtol=1e-5, atol=max(2 * bound, 1e-5))
    for m, k, n in ((1, 256, 64), (8, 64, 64), (128, 64, 32)):
        yield Case(f"bf16 {m}x{k} by {n}x{k}", [g.randn(m, k, dtype=torch.bfloat16),
                                                g.randint(-128, 128, (n, k), dtype=torch.int8),
                                                (g.rand(n) * 0.019 + 0.001).to(torch.bfloat16)], rtol=2e-2, atol=5e-2)


def _int4_packed_for_cpu(g, n, k, group, dt):
    """4-bit weights [n, k] packed by torch for the CPU it runs on (the recording names that CPU's capability, which
    decides the layout: make_cases.py), and scales and zeros per group of k in the activations' dtype."""
    packed = aten._convert_weight_to_int4pack_for_cpu(g.randint(0, 16, (n, k), dtype=torch.int32), 1)
    scales_zeros = torch.stack([g.rand(k // group, n) * 0.05 + 0.001, g.randn(k // group, n) * 0.1], dim=2)
    return packed, scales_zeros.to(dt)


@op("_weight_int4pack_mm_cpu_tensor", min_torch="2.6", devices=("cpu",),
    call=lambda x, w, group, sz: torch.ops.quantized.int4mm_packed_weight_cpu(x, w, group, sz))
def weight_int4pack_mm_cpu_tensor(g):
    # N: one partial block (16), a partial one of 48 on AVX-512, and whole blocks with a partial one after them
    # (96, 160): every layout torch's packer writes. float32 sums of K terms in torch's order, each weight
    # dequantized with one rounding: atol bounds what a contracted or separate multiply-add changes.
    group_t = lambda n: torch.tensor(n, dtype=torch.int64)  # noqa: E731
    tol = {torch.float32: {"rtol": 1e-5, "atol": 1e-4}, torch.bfloat16: {"rtol": 1.6e-2, "atol": 1e-2},
           torch.float16: {"rtol": 2e-3, "atol": 2e-3}}
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        for m, n, group in ((1, 160, 32), (3, 96, 64), (17, 48, 128), (1, 16, 128), (3, 160, 128), (17, 96, 32)):
            k = 256
            packed, sz = _int4_packed_for_cpu(g, n, k, group, dt)
            yield Case(f"{dt} m {m} n {n} k {k} group {group}", [g.randn(m, k, dtype=dt), packed, group_t(group), sz],
                       **tol[dt])
    x, (packed, sz) = g.randn(2, 64), _int4_packed_for_cpu(g, 32, 64, 32, torch.float32)
    yield Case("group of the whole K", [x, packed, group_t(64), _int4_packed_for_cpu(g, 32, 64, 64, torch.float32)[1]],
               **tol[torch.float32])
    yield err("X not contiguous", [g.randn(64, 2).t(), packed, group_t(32), sz])
    yield err("X float64", [x.double(), packed, group_t(32), sz])
    yield err("group size not a scalar", [x, packed, torch.tensor([32, 32]), sz])
    yield err("group size int32", [x, packed, torch.tensor(32, dtype=torch.int32), sz])
    yield err("group size 48", [x, packed, group_t(48), sz])
    yield err("K not a multiple of the group", [g.randn(2, 96), torch.zeros(32, 48, dtype=torch.uint8), group_t(64),
                                                torch.ones(2, 32, 2)])
    yield err("w int8", [x, packed.view(torch.int8), group_t(32), sz])
    yield err("w not K / 2 wide", [x, torch.zeros(32, 64, dtype=torch.uint8), group_t(32), sz])
    yield err("qScaleAndZeros for other columns", [x, packed, group_t(32), torch.ones(2, 16, 2)])
    yield err("qScaleAndZeros bfloat16", [x, packed, group_t(32), sz.bfloat16()])
    yield err("N not a multiple of 16", [x, torch.zeros(40, 32, dtype=torch.uint8), group_t(32), torch.ones(2, 40, 2)])


def _bag_cases(g):
    w = g.randn(10, 4)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor([0, 3, 3, 6])
    for mode in (0, 1, 2):
        yield Case(f"mode {mode}", [w, idx, off, False, mode, False, None, False, -1])
    # torch's CUDA kernel gives bag_size an entry per offset and never writes the last: not compared there.
    yield Case("include_last_offset", [w, idx, torch.tensor([0, 2, 5, 8]), False, 0, False, None, True, -1],
               ignore=[2] if g.device == "cuda" else [])
    yield Case("per-sample weights", [w, idx, off, False, 0, False, g.rand(8), False, -1])
    yield Case("padding_idx", [w, idx, off, False, 1, False, None, False, 4])


@op("_embedding_bag", torch_op="aten._embedding_bag.default")
def embedding_bag(g):
    yield from _bag_cases(g)


@op("_embedding_bag_forward_only", torch_op="aten._embedding_bag_forward_only.default")
def embedding_bag_forward_only(g):
    yield from _bag_cases(g)
