"""FFT (_fft_r2c, _fft_c2c), hann_window, the random ops and the fused moving-average fake-quant helper.

FFT results have the strides of torch's x86 CPU FFT (MKL, torch 2.x); torch 1.13's pocketfft made them contiguous,
so the cases whose layouts differ come from torch 2.11 only. Left out, as the two torches disagree and neither is
a meaning to copy: an empty batch (1.13 transforms it, 2.11's MKL fails), a repeated dim or normalization 3 (1.13
refuses them, 2.11 returns a result); the shim transforms an empty batch and refuses the other two.

The random ops give values from torch's distributions, not torch's values (its generators cannot be reproduced
outside torch): their cases compare sizes, dtype, strides and the mean and standard deviation (check="moments",
10000+ elements), randperm's a permutation; only their deterministic corners (p = 0 or 1, train=False) compare
values. Factory arguments after size/n are dtype, layout, device, pin_memory (None: torch's defaults).

CPU only: the factory functions (their cases name no device), the FFTs (their strides are MKL's; cuFFT's may
differ) and the fused fake-quant helper (torch's CUDA kernel computes its qparams differently).
"""

import torch

from ..spec import Case, err, op

aten = torch.ops.aten
FLOATS = (torch.float32, torch.float64)
N = 20000  # elements of a moments case: mean and std within 6 standard errors of torch's
DEFAULTS = [None, None, None, None]  # dtype, layout, device, pin_memory


@op("_fft_r2c", torch_op="aten._fft_r2c.default")
def fft_r2c(g):
    for dt in FLOATS:
        yield Case(f"{dt} last dim onesided", [g.randn(3, 8, dtype=dt), [1], 0, True])
    yield Case("dims 0 and 2, 1/sqrt(n), onesided", [g.randn(3, 4, 5), [0, 2], 1, True], min_torch="2.1")
    yield Case("all dims two-sided, 1/n", [g.randn(2, 3, 6), [0, 1, 2], 2, False])
    yield Case("odd prime length", [g.randn(2, 13), [1], 0, True])
    yield Case("non-contiguous", [g.randn(6, 4).t(), [1], 0, True])
    yield Case("strided, dim 0 two-sided", [g.strided(g.randn(4, 10)), [0], 1, False], min_torch="2.1")
    yield err("integer input", [g.randint(0, 5, (4, 4)), [1], 0, True])
    yield err("complex input", [g.randn(4, 4).to(torch.complex64), [1], 0, True])
    yield err("dim out of range", [g.randn(4, 4), [2], 0, True])
    yield err("a transformed dim of size 0", [torch.empty(4, 0), [1], 0, True], min_torch="2.1")


@op("_fft_c2c", torch_op="aten._fft_c2c.default")
def fft_c2c(g):
    for dt in (torch.complex64, torch.complex128):
        yield Case(f"{dt} forward", [torch.complex(g.randn(4, 6), g.randn(4, 6)).to(dt), [1], 0, True])
    yield Case("inverse over both dims, 1/n", [torch.complex(g.randn(5, 6), g.randn(5, 6)), [0, 1], 2, False])
    yield Case("dims 2 then 0, 1/sqrt(n)", [torch.complex(g.randn(3, 2, 7), g.randn(3, 2, 7)), [2, 0], 1, True],
               min_torch="2.1")
    yield Case("non-contiguous, dim 0", [torch.complex(g.randn(6, 5), g.randn(6, 5)).t(), [0], 0, False],
               min_torch="2.1")
    yield Case("non-contiguous, dim 1", [torch.complex(g.randn(6, 5), g.randn(6, 5)).t(), [1], 0, True])
    yield err("real input", [g.randn(4, 4), [1], 0, True])


@op("hann_window", torch_op="aten.hann_window.default")
def hann_window(g):
    yield Case("12, float32", [12, *DEFAULTS])
    yield Case("7, float64", [7, torch.float64, None, None, None])
    yield Case("1", [1, *DEFAULTS])
    yield Case("0", [0, *DEFAULTS])
    yield Case("float16", [9, torch.float16, None, None, None], min_torch="2.1")
    yield Case("bfloat16", [10, torch.bfloat16, None, None, None], min_torch="2.1")
    yield err("integer dtype", [8, torch.int64, None, None, None])
    yield err("negative length", [-1, *DEFAULTS])


def moments(name, args, **kw):
    return Case(name, args, check="moments", **kw)


@op("rand", torch_op="aten.rand.default")
def rand(g):
    yield moments("float32", [[100, 200], *DEFAULTS])
    yield moments("float64", [[N], torch.float64, None, None, None])
    yield moments("bfloat16", [[N], torch.bfloat16, None, None, None])
    yield Case("empty", [[0, 3], *DEFAULTS], check="shape")
    yield err("integer dtype", [[4], torch.int64, None, None, None])
    yield err("negative size", [[2, -1], *DEFAULTS])


@op("rand_generator", torch_op="aten.rand.generator")
def rand_generator(g):
    yield moments("float32", [[N], None, *DEFAULTS])


@op("randn", torch_op="aten.randn.default")
def randn(g):
    yield moments("float32", [[100, 200], *DEFAULTS])
    yield moments("float16", [[N], torch.float16, None, None, None])
    yield Case("0-d", [[], *DEFAULTS], check="shape")
    yield err("bool dtype", [[4], torch.bool, None, None, None])


@op("randn_generator", torch_op="aten.randn.generator")
def randn_generator(g):
    yield moments("float64", [[N], None, torch.float64, None, None, None])


@op("randint", torch_op="aten.randint.default")
def randint(g):
    yield moments("int64 [0, 10)", [10, [N], *DEFAULTS])
    yield moments("uint8 [0, 256)", [256, [N], torch.uint8, None, None, None])
    yield moments("float32", [7, [N], torch.float32, None, None, None])
    yield err("high 0", [0, [4], *DEFAULTS])
    yield err("beyond uint8", [300, [4], torch.uint8, None, None, None])


@op("randint_generator", torch_op="aten.randint.generator")
def randint_generator(g):
    yield moments("int32", [1000, [N], None, torch.int32, None, None, None])


@op("randint_low", torch_op="aten.randint.low")
def randint_low(g):
    yield moments("[-5, 5)", [-5, 5, [N], *DEFAULTS])
    yield moments("int8 [-128, 128)", [-128, 128, [N], torch.int8, None, None, None])
    yield Case("one value", [3, 4, [5], *DEFAULTS])  # [3, 4) holds 3 alone: exact
    yield err("low == high", [5, 5, [4], *DEFAULTS])


@op("randint_low_out", call=lambda out, low, high, size: aten.randint.low_out(low, high, size, out=out))
def randint_low_out(g):
    yield Case("same size", [torch.empty(N, dtype=torch.int64), -2, 9, [N]], mutated=[0], check="moments")
    yield Case("resized", [torch.empty(3, dtype=torch.int64), 0, 4, [100, 200]], mutated=[0], check="moments")
    yield err("low > high", [torch.empty(3, dtype=torch.int64), 4, 0, [3]])


@op("randperm", torch_op="aten.randperm.default")
def randperm(g):
    yield Case("int64", [500, *DEFAULTS], check="permutation")
    yield Case("int32", [100, torch.int32, None, None, None], check="permutation")
    yield Case("float32", [64, torch.float32, None, None, None], check="permutation")
    yield Case("empty", [0, *DEFAULTS], check="shape")
    yield err("uint8 too small", [300, torch.uint8, None, None, None])
    yield err("bool", [4, torch.bool, None, None, None])


@op("normal_functional", torch_op="aten.normal_functional.default")
def normal_functional(g):
    yield moments("mean 2 std 3", [torch.empty(100, 200), 2.0, 3.0, None])
    yield moments("f64 transposed", [torch.empty(200, 100, dtype=torch.float64).t(), -1.0, 0.5, None])
    yield Case("std 0", [torch.empty(4, 5), 1.5, 0.0, None])
    yield err("negative std", [torch.empty(4), 0.0, -1.0, None])
    yield err("integer self", [torch.empty(4, dtype=torch.int64), 0.0, 1.0, None])


@op("uniform", torch_op="aten.uniform.default")
def uniform(g):
    yield moments("[-2, 5)", [torch.empty(100, 200), -2.0, 5.0, None])
    yield moments("bf16 [0, 1)", [torch.empty(N, dtype=torch.bfloat16), 0.0, 1.0, None])
    yield Case("from == to", [torch.empty(3, 4), 1.0, 1.0, None])
    yield err("from > to", [torch.empty(4), 2.0, 1.0, None])


@op("exponential", torch_op="aten.exponential.default")
def exponential(g):
    yield moments("lambda 2", [torch.empty(100, 200), 2.0, None])
    yield moments("f64 lambda 0.5", [torch.empty(N, dtype=torch.float64), 0.5, None])
    yield err("lambda -1", [torch.empty(4), -1.0, None])


@op("bernoulli__float", torch_op="aten.bernoulli_.float")
def bernoulli_float(g):
    yield Case("p 0.3", [torch.empty(100, 200), 0.3, None], mutated=[0], check="moments")
    yield Case("p 0 int64", [torch.ones(4, 5, dtype=torch.int64), 0.0, None], mutated=[0])
    yield Case("p 1 bool transposed", [torch.zeros(5, 4, dtype=torch.bool).t(), 1.0, None], mutated=[0])
    yield Case("p 1 f64", [torch.zeros(6, dtype=torch.float64), 1.0, None], mutated=[0])
    yield err("p 2", [torch.zeros(4), 2.0, None])


@op("native_dropout", torch_op="aten.native_dropout.default")
def native_dropout(g):
    x = g.randn(100, 200)
    yield moments("p 0.25 train", [x, 0.25, True])
    yield moments("p 0.5 train unset, transposed", [g.randn(200, 100).t(), 0.5, None])
    yield Case("train false", [g.randn(4, 6), 0.5, False])
    yield Case("train false int64", [g.randint(-5, 5, (3, 4)), 0.5, False])
    yield Case("p 0", [g.randn(4, 6), 0.0, True])
    yield Case("p 1", [g.randn(4, 6), 1.0, True])
    yield Case("bf16 p 0", [g.randn(4, 6, dtype=torch.bfloat16), 0.0, True])
    yield err("p 1.5", [g.randn(4), 1.5, True])
    yield err("integer input in training", [g.randint(-5, 5, (4,)), 0.5, True])


def fq_state(per_row: bool, rows: int, g, fresh: bool):
    """running_min, running_max, scale, zero_point: fresh (inf, as torch's observer starts) or observed before."""
    n = rows if per_row else 1
    if fresh:
        return [torch.full((n,), float("inf")), torch.full((n,), float("-inf")), torch.ones(n),
                torch.zeros(n, dtype=torch.int32)]
    lo = -g.rand(n) - 0.5
    return [lo, lo + 2.0 + g.rand(n), torch.ones(n), torch.zeros(n, dtype=torch.int32)]


def fq_cases(g):
    on, off = torch.tensor([1]), torch.tensor([0])
    x = g.randn(4, 9)
    yield "per tensor, fresh", [x, on, on, *fq_state(False, 4, g, True), 0.01, 0, 255, 0, False, False]
    yield "per tensor, moving average, symmetric", [x, on, on, *fq_state(False, 4, g, False), 0.1, -128, 127, 0,
                                                    False, True]
    yield "per row, fresh", [x, on, on, *fq_state(True, 4, g, True), 0.01, -128, 127, 0, True, False]
    yield "per row, symmetric, averaged", [x * 3, on, on, *fq_state(True, 4, g, False), 0.2, 0, 15, 0, True, True]
    yield "observer off", [x, off, on, *fq_state(False, 4, g, False), 0.01, 0, 255, 0, False, False]
    yield "fake quant off, transposed", [g.randn(9, 4).t(), on, off, *fq_state(False, 4, g, True), 0.01, 0, 255, 0,
                                         False, False]
    yield "a NaN", [torch.tensor([[0.5, float("nan"), -1.0]]), off, on, *fq_state(False, 1, g, False), 0.01, 0, 255,
                    0, False, False]


@op("_fused_moving_avg_obs_fq_helper", torch_op="aten._fused_moving_avg_obs_fq_helper.default")
def fused_moving_avg_obs_fq_helper(g):
    for name, args in fq_cases(g):
        yield Case(name, args, mutated=[3, 4, 5, 6])
    yield err("per row on axis 1", [g.randn(4, 9), torch.tensor([1]), torch.tensor([1]),
                                    *fq_state(True, 4, g, True), 0.01, 0, 255, 1, True, False])


@op("_fused_moving_avg_obs_fq_helper_functional",
    torch_op="aten._fused_moving_avg_obs_fq_helper_functional.default")
def fused_moving_avg_obs_fq_helper_functional(g):
    for name, args in fq_cases(g):
        yield Case(name, args)
