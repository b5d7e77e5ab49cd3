"""Pooling: max/avg/adaptive/fractional pools in 2-d and 3-d, and max_unpool. Inputs hold distinct values where a
max's index is compared (torch keeps the first of equal values; ties are left out)."""

import torch

from ..spec import Case, err, op

aten = torch.ops.aten
HALF = (torch.float16, torch.bfloat16)
# torch 1.13's CPU pools lack float16 (and some bfloat16); those cases come from torch 2.11.
NEW = {"min_torch": "2.1"}
HALF_TOL = {"rtol": 1e-2, "atol": 1e-2}


def cl(x):
    """The same values laid out channels-last (NHWC / NDHWC strides)."""
    fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
    return x.contiguous(memory_format=fmt)


def ints(g, *shape, dtype=torch.int32):
    """Distinct integers (0.. for unsigned types)."""
    x = g.distinct(*shape, dtype=torch.float64) * 4
    return (x - x.min() if dtype == torch.uint8 else x).to(dtype)


def with_nan(x, *positions):
    x = x.clone()
    for p in positions:
        x[p] = float("nan")
    return x


@op("max_pool2d_with_indices", torch_op="aten.max_pool2d_with_indices.default")
def max_pool2d_with_indices(g):
    x = g.distinct(2, 3, 7, 8)
    yield Case("k2 default stride", [x, [2, 2], [], [0, 0], [1, 1], False])
    yield Case("k3 s2 pad1 ceil", [x, [3], [2], [1], [1], True])
    yield Case("ceil: last window must start inside", [g.distinct(1, 2, 5, 5), [2, 2], [2, 2], [1, 1], [1, 1], True])
    yield Case("dilation 2 pad 1", [x, [3, 2], [1, 2], [1, 1], [2, 1], False])
    yield Case("unbatched", [g.distinct(3, 6, 5), [2, 3], [1, 2], [1, 1], [1, 1], False])
    yield Case("channels-last", [cl(x), [3, 3], [2, 1], [1, 1], [1, 1], False])
    yield Case("channels-last, every other row", [cl(g.distinct(2, 3, 14, 8))[:, :, ::2], [2, 2], [], [0, 0], [1, 1],
                                                   False])
    yield Case("non-contiguous", [g.distinct(2, 8, 7, 3).permute(0, 3, 2, 1), [2, 2], [1, 1], [0, 0], [1, 1], False])
    yield Case("f64", [g.distinct(1, 2, 6, 6, dtype=torch.float64), [2, 2], [2, 2], [1, 1], [1, 1], True])
    yield Case("bf16", [g.distinct(1, 2, 4, 4, dtype=torch.bfloat16), [2, 2], [], [0, 0], [1, 1], False])
    yield Case("f16", [g.distinct(1, 2, 4, 4, dtype=torch.float16), [2, 2], [], [0, 0], [1, 1], False], **NEW)
    yield Case("NaN wins, the last of two", [with_nan(g.distinct(1, 1, 4, 4), (0, 0, 0, 1), (0, 0, 1, 0)),
                                             [2, 2], [2, 2], [0, 0], [1, 1], False])
    yield Case("-inf only", [torch.full((1, 1, 3, 3), float("-inf")), [2, 2], [1, 1], [1, 1], [1, 1], False])
    # Large enough for the planes to be split over threads.
    yield Case("8 planes of 16x16", [g.distinct(2, 4, 16, 16), [3, 3], [1, 1], [1, 1], [1, 1], False])
    yield Case("empty batch", [torch.empty(0, 3, 5, 5), [2, 2], [], [0, 0], [1, 1], False])
    yield Case("int32", [ints(g, 1, 2, 5, 5), [2, 2], [2, 1], [1, 0], [1, 1], True], **NEW)
    yield Case("uint8", [ints(g, 1, 2, 4, 4, dtype=torch.uint8), [3, 3], [1, 1], [1, 1], [1, 1], False], **NEW)
    yield Case("int8 all at the minimum: the first position", [torch.full((1, 1, 3, 3), -128, dtype=torch.int8),
                                                               [2, 2], [1, 1], [1, 1], [1, 1], False], **NEW)
    yield err("pad more than half the kernel", [x, [2, 2], [], [2, 2], [1, 1], False])
    yield err("pad more than half the kernel, within half the dilated one", [x, [3, 2], [1, 2], [2, 1], [2, 1], False])
    yield err("output size 0", [g.randn(1, 1, 2, 2), [3, 3], [], [0, 0], [1, 1], False])
    yield err("2-d input", [g.randn(4, 4), [2, 2], [], [0, 0], [1, 1], False])
    yield err("kernel of three values", [x, [2, 2, 2], [], [0, 0], [1, 1], False])
    yield err("stride 0", [x, [2, 2], [0, 0], [0, 0], [1, 1], False])


@op("max_pool3d_with_indices", torch_op="aten.max_pool3d_with_indices.default")
def max_pool3d_with_indices(g):
    x = g.distinct(2, 2, 5, 6, 4)
    yield Case("k2", [x, [2, 2, 2], [], [0, 0, 0], [1, 1, 1], False])
    yield Case("k3 s2 pad1 ceil", [x, [3], [2], [1], [1], True])
    yield Case("dilation and padding per dim", [x, [2, 3, 2], [1, 2, 1], [1, 1, 0], [2, 1, 1], False])
    yield Case("unbatched", [g.distinct(2, 4, 5, 6), [2, 2, 3], [1, 2, 2], [0, 1, 1], [1, 1, 1], False])
    yield Case("non-contiguous", [g.strided(g.distinct(1, 2, 4, 4, 4)), [2], [], [0], [1], False])
    # torch 2 keeps channels-last in max_pool3d (1.13 gives a contiguous result).
    yield Case("channels-last 3d", [cl(x), [2, 2, 2], [1, 2, 1], [1, 0, 1], [1, 1, 1], False], **NEW)
    yield Case("int64", [ints(g, 1, 2, 4, 4, 4, dtype=torch.int64), [2], [], [0], [1], False], **NEW)
    yield Case("f64", [g.distinct(1, 1, 4, 4, 4, dtype=torch.float64), [3], [2], [1], [1], True])
    for dt in HALF:
        yield Case(f"{dt}", [g.distinct(1, 2, 4, 4, 4, dtype=dt), [2], [], [0], [1], False], **NEW)
    yield Case("NaN wins", [with_nan(g.distinct(1, 1, 4, 4, 4), (0, 0, 1, 1, 1)), [2], [], [0], [1], False])
    # Large enough for the planes to be split over threads.
    yield Case("4 planes of 8x8x8", [g.distinct(2, 2, 8, 8, 8), [2], [1], [0], [1], False])
    yield Case("empty batch", [torch.empty(0, 2, 4, 4, 4), [2], [], [0], [1], False])
    yield err("pad more than half the kernel", [x, [2], [], [2], [1], False])
    yield err("output size 0", [g.randn(1, 1, 2, 2, 2), [3], [], [0], [1], False])
    yield err("3-d input", [g.randn(4, 4, 4), [2], [], [0], [1], False])


@op("avg_pool2d", torch_op="aten.avg_pool2d.default")
def avg_pool2d(g):
    x = g.randn(2, 3, 7, 8)
    yield Case("k2", [x, [2, 2], [], [0, 0], False, True, None])
    yield Case("k3 s2 pad1 count_include_pad", [x, [3, 3], [2, 2], [1, 1], False, True, None])
    yield Case("k3 s2 pad1 without pad", [x, [3, 3], [2, 2], [1, 1], False, False, None])
    yield Case("ceil mode, windows past the end", [x, [3, 2], [2, 3], [1, 1], True, True, None])
    yield Case("ceil mode without pad", [x, [3, 2], [2, 3], [1, 1], True, False, None])
    yield Case("divisor_override 5", [x, [2, 3], [1, 2], [1, 0], False, True, 5])
    yield Case("unbatched", [g.randn(3, 5, 6), [2], [1], [1], False, True, None])
    yield Case("channels-last", [cl(x), [3, 3], [2, 1], [1, 1], False, False, None])
    yield Case("non-contiguous", [g.randn(2, 8, 7, 3).permute(0, 3, 2, 1), [2, 2], [1, 1], [0, 0], False, True, None])
    yield Case("f64", [g.randn(1, 2, 6, 6, dtype=torch.float64), [3], [2], [1], True, False, None])
    yield Case("int64 divides as integers", [g.randint(-50, 50, (1, 2, 5, 5)), [2, 2], [2, 2], [1, 1], False, True, None])
    yield Case("bf16", [g.randn(1, 2, 6, 6, dtype=torch.bfloat16), [2, 2], [], [0, 0], False, True, None], **HALF_TOL)
    yield Case("f16", [g.randn(1, 2, 6, 6, dtype=torch.float16), [2, 2], [], [0, 0], False, True, None], **HALF_TOL,
               **NEW)
    yield Case("inf and NaN", [with_nan(torch.tensor([[[[1.0, float("inf"), 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]]]),
                                        (0, 0, 1, 3)), [2, 2], [], [0, 0], False, True, None])
    yield Case("empty batch", [torch.empty(0, 2, 4, 4), [2, 2], [], [0, 0], False, True, None])
    # Large enough for the planes to be split over threads.
    yield Case("8 planes of 16x16", [g.randn(2, 4, 16, 16), [3, 3], [1, 1], [1, 1], False, False, None])
    yield err("pad more than half the kernel", [x, [2, 2], [], [2, 2], False, True, None])
    yield err("divisor_override 0", [x, [2, 2], [], [0, 0], False, True, 0])
    yield err("output size 0", [g.randn(1, 1, 2, 2), [3, 3], [], [0, 0], False, True, None])
    yield err("5-d input", [g.randn(1, 1, 2, 4, 4), [2, 2], [], [0, 0], False, True, None])


@op("avg_pool3d", torch_op="aten.avg_pool3d.default")
def avg_pool3d(g):
    x = g.randn(2, 2, 5, 6, 4)
    yield Case("k2", [x, [2, 2, 2], [], [0, 0, 0], False, True, None])
    yield Case("k3 s2 pad1", [x, [3], [2], [1], False, True, None])
    yield Case("k3 s2 pad1 ceil without pad", [x, [3, 3, 2], [2, 2, 3], [1, 1, 1], True, False, None])
    yield Case("divisor_override 3", [x, [2], [1], [1], False, True, 3])
    yield Case("unbatched", [g.randn(2, 4, 5, 6), [2, 2, 3], [1, 2, 2], [0, 1, 1], False, True, None])
    yield Case("non-contiguous", [g.strided(g.randn(1, 2, 4, 4, 4)), [2], [], [0], False, True, None])
    yield Case("channels-last 3d input, contiguous result", [cl(x), [2, 2, 2], [1, 2, 1], [1, 0, 1], False, False,
                                                             None])
    yield Case("f64", [g.randn(1, 1, 4, 4, 4, dtype=torch.float64), [3], [2], [1], True, True, None])
    yield Case("int64", [g.randint(-50, 50, (1, 1, 4, 4, 4)), [2], [], [0], False, True, None])
    yield Case("empty batch", [torch.empty(0, 2, 4, 4, 4), [2], [], [0], False, True, None])
    for dt in HALF:  # torch's CPU avg_pool3d has no half types
        yield err(f"{dt}", [g.randn(1, 2, 4, 4, 4, dtype=dt), [2], [], [0], False, True, None])
    yield err("pad more than half the kernel", [x, [2], [], [2], False, True, None])
    yield err("divisor_override 0", [x, [2], [], [0], False, True, 0])
    yield err("input smaller than the kernel", [g.randn(1, 1, 2, 2, 2), [3], [1], [1], False, True, None])


@op("_adaptive_avg_pool2d", torch_op="aten._adaptive_avg_pool2d.default")
def adaptive_avg_pool2d(g):
    x = g.randn(2, 3, 7, 9)
    yield Case("7x9 to 3x4 (overlapping windows)", [x, [3, 4]])
    yield Case("to 1x1", [x, [1, 1]])
    yield Case("upsampling 7x9 to 10x11", [x, [10, 11]])
    yield Case("unbatched", [g.randn(3, 5, 6), [2, 4]])
    yield Case("channels-last", [cl(x), [3, 4]])
    yield Case("non-contiguous", [g.randn(2, 8, 7, 3).permute(0, 3, 2, 1), [2, 3]])
    yield Case("f64", [g.randn(1, 2, 6, 5, dtype=torch.float64), [4, 3]])
    yield Case("bf16", [g.randn(1, 2, 6, 6, dtype=torch.bfloat16), [4, 4]], **HALF_TOL)
    yield Case("f16", [g.randn(1, 2, 6, 6, dtype=torch.float16), [4, 4]], **HALF_TOL, **NEW)
    yield Case("output 0", [x, [0, 3]])
    # Large enough for the planes to be split over threads.
    yield Case("16 planes of 16x16", [g.randn(2, 8, 16, 16), [8, 8]])
    yield Case("empty batch", [torch.empty(0, 2, 4, 4), [2, 2]])
    yield Case("zero channels (only the spatial dims must be non-empty)", [torch.empty(2, 0, 4, 4), [2, 2]])
    yield err("zero-size spatial dim", [torch.empty(2, 2, 0, 4), [2, 2]])
    yield err("2-d input", [g.randn(4, 4), [2, 2]])


@op("_adaptive_avg_pool3d", torch_op="aten._adaptive_avg_pool3d.default")
def adaptive_avg_pool3d(g):
    x = g.randn(2, 2, 5, 7, 6)
    yield Case("to 2x3x4", [x, [2, 3, 4]])
    yield Case("to 1x1x1", [x, [1, 1, 1]])
    yield Case("unbatched, upsampling", [g.randn(2, 3, 4, 5), [4, 5, 7]])
    yield Case("non-contiguous", [g.strided(g.randn(1, 2, 4, 4, 4)), [3, 3, 3]])
    yield Case("channels-last 3d input, contiguous result", [cl(x), [2, 3, 4]])
    yield Case("f64", [g.randn(1, 1, 4, 5, 6, dtype=torch.float64), [3, 3, 3]])
    for dt in HALF:
        yield Case(f"{dt}", [g.randn(1, 2, 4, 4, 4, dtype=dt), [3, 2, 3]], **HALF_TOL, **NEW)
    yield Case("empty batch", [torch.empty(0, 2, 4, 4, 4), [2, 2, 2]])
    yield err("3-d input", [g.randn(4, 4, 4), [2, 2, 2]])


@op("adaptive_max_pool2d", torch_op="aten.adaptive_max_pool2d.default")
def adaptive_max_pool2d(g):
    x = g.distinct(2, 3, 7, 9)
    yield Case("7x9 to 3x4", [x, [3, 4]])
    yield Case("to 1x1", [x, [1, 1]])
    yield Case("upsampling 7x9 to 10x11", [x, [10, 11]])
    yield Case("unbatched", [g.distinct(3, 5, 6), [2, 4]])
    yield Case("channels-last", [cl(x), [3, 4]])
    yield Case("non-contiguous", [g.distinct(2, 8, 7, 3).permute(0, 3, 2, 1), [2, 3]])
    yield Case("f64", [g.distinct(1, 2, 6, 5, dtype=torch.float64), [4, 3]])
    yield Case("bf16", [g.distinct(1, 2, 4, 4, dtype=torch.bfloat16), [3, 3]])
    yield Case("f16", [g.distinct(1, 2, 4, 4, dtype=torch.float16), [3, 3]], **NEW)
    yield Case("NaN wins", [with_nan(g.distinct(1, 1, 4, 4), (0, 0, 2, 1)), [2, 2]])
    yield Case("empty batch", [torch.empty(0, 2, 4, 4), [2, 2]])
    yield err("zero-size spatial dim", [torch.empty(1, 2, 0, 4), [2, 2]])
    yield err("int64 input", [ints(g, 1, 2, 4, 4, dtype=torch.int64), [2, 2]])


@op("adaptive_max_pool3d", torch_op="aten.adaptive_max_pool3d.default")
def adaptive_max_pool3d(g):
    x = g.distinct(2, 2, 5, 7, 6)
    yield Case("to 2x3x4", [x, [2, 3, 4]])
    yield Case("unbatched, upsampling", [g.distinct(2, 3, 4, 5), [4, 5, 7]])
    yield Case("non-contiguous", [g.strided(g.distinct(1, 2, 4, 4, 4)), [3, 3, 3]])
    yield Case("channels-last 3d input, contiguous result", [cl(x), [2, 3, 4]])
    yield Case("f64", [g.distinct(1, 1, 4, 5, 6, dtype=torch.float64), [3, 3, 3]])
    for dt in HALF:
        yield Case(f"{dt}", [g.distinct(1, 2, 4, 4, 4, dtype=dt), [3, 2, 3]], **NEW)
    yield Case("NaN wins", [with_nan(g.distinct(1, 1, 4, 4, 4), (0, 0, 1, 2, 3)), [2, 2, 2]])
    yield Case("empty batch", [torch.empty(0, 2, 4, 4, 4), [2, 2, 2]])
    yield err("3-d input", [g.randn(4, 4, 4), [2, 2, 2]])


@op("fractional_max_pool2d", torch_op="aten.fractional_max_pool2d.default")
def fractional_max_pool2d(g):
    x = g.distinct(2, 3, 11, 13)
    yield Case("k2 to 5x6", [x, [2, 2], [5, 6], g.rand(2, 3, 2)])
    yield Case("k3x2 to 8x9", [x, [3, 2], [8, 9], g.rand(2, 3, 2)])
    yield Case("output 1x1", [x, [3, 3], [1, 1], g.rand(2, 3, 2)])
    yield Case("unbatched", [g.distinct(2, 9, 7), [2, 2], [4, 3], g.rand(1, 2, 2)])
    yield Case("channels-last input, contiguous result", [cl(x), [2, 2], [5, 6], g.rand(2, 3, 2)])
    yield Case("f64", [g.distinct(1, 2, 10, 10, dtype=torch.float64), [2, 3], [6, 5],
                       g.rand(1, 2, 2, dtype=torch.float64)])
    for dt in HALF:
        yield Case(f"{dt}", [g.distinct(1, 2, 8, 8, dtype=dt), [2, 2], [4, 5], g.rand(1, 2, 2, dtype=dt)], **NEW)
    yield Case("NaN wins", [with_nan(g.distinct(1, 1, 6, 6), (0, 0, 2, 2)), [2, 2], [3, 3], g.rand(1, 1, 2)])
    yield Case("more sample rows than the batch", [x, [2, 2], [5, 6], g.rand(3, 3, 2)])
    # Large enough for the planes to be split over threads.
    yield Case("16 planes of 16x16", [g.distinct(2, 8, 16, 16), [2, 2], [8, 8], g.rand(2, 8, 2)])
    yield err("pool too large for the input", [x, [6, 2], [7, 6], g.rand(2, 3, 2)])
    yield err("float64 samples for float32", [x, [2, 2], [5, 6], g.rand(2, 3, 2, dtype=torch.float64)])


@op("fractional_max_pool3d", torch_op="aten.fractional_max_pool3d.default")
def fractional_max_pool3d(g):
    x = g.distinct(2, 2, 7, 9, 8)
    yield Case("k2 to 3x4x5", [x, [2, 2, 2], [3, 4, 5], g.rand(2, 2, 3)])
    yield Case("k3x2x2 to 4x7x6", [x, [3, 2, 2], [4, 7, 6], g.rand(2, 2, 3)])
    yield Case("unbatched", [g.distinct(2, 6, 7, 5), [2, 2, 2], [3, 4, 2], g.rand(1, 2, 3)])
    yield Case("f64", [g.distinct(1, 2, 6, 6, 6, dtype=torch.float64), [2, 2, 2], [4, 3, 4],
                       g.rand(1, 2, 3, dtype=torch.float64)])
    for dt in HALF:
        yield Case(f"{dt}", [g.distinct(1, 1, 6, 6, 6, dtype=dt), [2, 2, 2], [3, 3, 3], g.rand(1, 1, 3, dtype=dt)],
                   **NEW)
    yield Case("NaN wins", [with_nan(g.distinct(1, 1, 5, 5, 5), (0, 0, 2, 2, 2)), [2, 2, 2], [3, 3, 3],
                            g.rand(1, 1, 3)])
    yield err("pool too large for the input", [x, [2, 2, 2], [7, 4, 5], g.rand(2, 2, 3)])


def pooled(x, nd):
    """A max pool's values and indices (distinct indices per plane), for max_unpool's arguments."""
    pool = aten.max_pool2d_with_indices if nd == 2 else aten.max_pool3d_with_indices
    return pool(x, [2] * nd, [2] * nd, [0] * nd, [1] * nd, False)


@op("max_unpool2d", torch_op="aten.max_unpool2d.default")
def max_unpool2d(g):
    v, i = pooled(g.distinct(2, 3, 6, 8), 2)
    yield Case("back to 6x8", [v, i, [6, 8]])
    yield Case("into a larger 7x9", [v, i, [7, 9]])
    vu, iu = pooled(g.distinct(3, 4, 6), 2)
    yield Case("unbatched", [vu, iu, [4, 6]])
    yield Case("channels-last", [cl(v), cl(i), [6, 8]])
    yield Case("non-contiguous values", [g.strided(v), i, [6, 8]])
    # Large enough for the planes to be split over threads.
    yield Case("16 planes of 16x16", [*pooled(g.distinct(2, 8, 32, 32), 2), [32, 32]])
    v64, i64 = pooled(g.distinct(1, 2, 4, 4, dtype=torch.float64), 2)
    yield Case("f64", [v64, i64, [4, 4]])
    for dt in HALF:
        yield Case(f"{dt}", [v.to(dt), i, [6, 8]], **NEW)
    yield err("index past the output", [v, i, [3, 4]])
    yield err("int32 indices", [v, i.to(torch.int32), [6, 8]])
    yield err("int64 values", [i, i, [6, 8]])
    yield err("output_size of three values", [v, i, [6, 8, 1]])


@op("max_unpool3d", torch_op="aten.max_unpool3d.default")
def max_unpool3d(g):
    v, i = pooled(g.distinct(2, 2, 4, 6, 4), 3)
    yield Case("back to 4x6x4", [v, i, [4, 6, 4], [2, 2, 2], [0, 0, 0]])
    yield Case("into a larger 5x6x5", [v, i, [5, 6, 5], [2, 2, 2], [0, 0, 0]])
    vu, iu = pooled(g.distinct(2, 4, 4, 6), 3)
    yield Case("unbatched", [vu, iu, [4, 4, 6], [2, 2, 2], [0, 0, 0]])
    yield Case("channels-last 3d values, contiguous result", [cl(v), i, [4, 6, 4], [2, 2, 2], [0, 0, 0]])
    v64, i64 = pooled(g.distinct(1, 1, 4, 4, 4, dtype=torch.float64), 3)
    yield Case("f64", [v64, i64, [4, 4, 4], [2, 2, 2], [0, 0, 0]])
    yield err("index past the output", [v, i, [2, 3, 4], [2, 2, 2], [0, 0, 0]])
    yield err("stride 0", [v, i, [4, 6, 4], [2, 0, 2], [0, 0, 0]])
