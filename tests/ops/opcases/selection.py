"""Selection: order statistics (median, nanmedian, kthvalue, mode), histograms (histc, histogram, histogramdd),
running extremes and logcumsumexp, index_reduce and segment_reduce, masked_select, masked_scatter and
nonzero_static."""

import torch

from ..spec import Case, err, op

CPU = ("cpu",)  # the histogram functions, which torch 2.11's c_shim_cuda.h does not declare
NAN, INF = float("nan"), float("inf")


def t(values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype)


@op("median", torch_op="aten.median.default")
def median(g):
    yield Case("f32 odd count", [g.distinct(3, 5)])
    yield Case("f32 even count takes the lower middle", [g.distinct(4, 6)])
    yield Case("NaN propagates", [t([1.0, NAN, -2.0, 3.0])])
    yield Case("infinities", [t([1.0, INF, -INF, 2.0, -INF])])
    yield Case("f64 strided", [g.strided(g.distinct(5, 4, dtype=torch.float64))])
    yield Case("bf16", [g.distinct(2, 7, dtype=torch.bfloat16)])
    yield Case("int64 with ties", [g.randint(-5, 5, (6, 5))])
    yield Case("int32", [g.randint(-100, 100, (11,), dtype=torch.int32)])
    yield Case("uint8", [g.randint(0, 255, (8,), dtype=torch.uint8)])
    yield Case("int16", [g.randint(-100, 100, (9,), dtype=torch.int16)])
    yield Case("0-d", [t(2.5)])
    yield Case("empty is NaN", [torch.empty(0, 3)])
    yield err("bool", [g.randint(0, 2, (4,), dtype=torch.bool)])


@op("nanmedian", torch_op="aten.nanmedian.default")
def nanmedian(g):
    yield Case("f32 without NaN", [g.distinct(3, 5)])
    yield Case("NaN left out", [t([4.0, NAN, 1.0, NAN, 3.0, 2.0])])
    yield Case("all NaN", [t([NAN, NAN, NAN])])
    yield Case("f64 strided", [g.strided(g.distinct(4, 4, dtype=torch.float64))])
    yield Case("bf16 with NaN", [t([2.0, NAN, -1.0, 5.0], torch.bfloat16)])
    yield Case("int32", [g.randint(-50, 50, (4, 5), dtype=torch.int32)])
    yield Case("0-d NaN", [t(NAN)])
    yield Case("empty is NaN", [torch.empty(0)])


@op("kthvalue", torch_op="aten.kthvalue.default")
def kthvalue(g):
    x = g.distinct(3, 7)
    yield Case("f32 k=3 last dim", [x, 3, -1, False])
    yield Case("k=1 dim 0 keepdim", [x, 1, 0, True])
    yield Case("k = size", [x, 7, 1, False])
    yield Case("3-d middle dim, keepdim", [g.distinct(2, 5, 3), 4, 1, True])
    yield Case("non-contiguous", [g.distinct(6, 4).t(), 2, 1, False])
    yield Case("strided f64", [g.strided(g.distinct(4, 5, dtype=torch.float64)), 5, -1, False])
    yield Case("NaN is the largest", [t([1.0, NAN, 0.0, 3.0]), 4, 0, False])
    yield Case("below NaN", [t([1.0, NAN, 0.0, 3.0]), 3, 0, False])
    yield Case("bf16", [g.distinct(3, 6, dtype=torch.bfloat16), 2, 1, False])
    yield Case("int64", [g.distinct(4, 6).mul(4).to(torch.int64), 5, 1, False])
    yield Case("int8", [g.distinct(9).mul(4).to(torch.int8), 4, 0, True])
    yield Case("0-d", [t(3.0), 1, 0, False])
    yield Case("empty outer dim", [torch.empty(0, 3), 2, 1, False])
    yield err("k = 0", [x, 0, -1, False])
    yield err("k larger than the dim", [x, 8, -1, False])
    yield err("dim out of range", [x, 1, 2, False])
    yield err("empty reduction dim", [torch.empty(3, 0), 1, 1, False])


def unique_mode(x: torch.Tensor, dim: int) -> torch.Tensor:
    """The same tensor (strides kept) with each line along dim led by a strict majority of its first value, so
    that the line has one mode."""
    y = x.clone().movedim(dim, -1)
    n = y.shape[-1]
    y[..., : n // 2 + 1] = y[..., :1].clone()
    return y.movedim(-1, dim)


@op("mode", torch_op="aten.mode.default")
def mode(g):
    # Lines of at most 16 elements: there torch's index is the last occurrence of the mode (see order_stats.cpp).
    # Ties among equally frequent values go to the smallest on the CPU; torch's CUDA kernel takes any of them (the
    # smallest of distinct values, the largest of [3, 2, 1, 3, 2, 0, 3, 0, 2]'s 3s and 2s), so a GPU gets lines
    # with one mode.
    cpu = g.device == "cpu"
    one = (lambda x, dim: x) if cpu else unique_mode
    if cpu:
        yield Case("int64 rows, ties go to the smaller value", [t([[1, 2, 2, 3, 3, 1], [5, 5, 4, 4, 4, 7]], torch.int64),
                                                                -1, False])
        yield Case("f32 ties", [t([3.0, 1.0, 3.0, 1.0, 2.0]), 0, False])
        yield Case("all distinct: the smallest", [t([4.0, 2.0, 3.0, -1.5]), 0, True])
    else:
        yield Case("int64 rows", [t([[1, 2, 2, 3, 1, 1], [5, 5, 4, 4, 4, 7]], torch.int64), -1, False])
        yield Case("f32", [t([3.0, 1.0, 3.0, 1.0, 2.0, 3.0]), 0, False])
    yield Case("random small ints, dim 0 keepdim", [one(g.randint(0, 3, (12, 5)), 0), 0, True])
    yield Case("3-d middle dim", [one(g.randint(-2, 2, (3, 10, 4), dtype=torch.int32).float(), 1), 1, False])
    yield Case("non-contiguous", [one(g.randint(0, 4, (9, 3)).t(), 1), 1, False])
    yield Case("strided f64", [g.strided(one(g.randint(0, 3, (4, 8)).double(), -1)), -1, False])
    yield Case("bool", [one(g.randint(0, 2, (3, 7), dtype=torch.bool), 1), 1, False])
    yield Case("f16", [one(g.randint(0, 3, (2, 9)).half(), 1), 1, False])
    yield Case("bf16", [one(g.randint(0, 3, (2, 9)).bfloat16(), 1), 1, False])
    yield Case("uint8", [one(g.randint(0, 4, (16,), dtype=torch.uint8), 0), 0, False])
    yield Case("0-d", [t(7.0), 0, False])
    yield Case("empty outer dim", [torch.empty(0, 3), 1, False])
    yield err("empty reduction dim", [torch.empty(3, 0), 1, False])
    yield err("dim out of range", [g.randn(2, 3), -3, False])


@op("cummax", torch_op="aten.cummax.default")
def cummax(g):
    yield Case("f32 last dim", [g.distinct(3, 8), -1])
    yield Case("dim 0", [g.distinct(5, 3), 0])
    yield Case("ties take the later position", [t([2, 2, 1, 2, 3, 3], torch.int64), 0])
    yield Case("NaN propagates, a later NaN moves the index", [t([1.0, 3.0, NAN, 2.0, 5.0, NAN, 0.0]), 0])
    yield Case("f64 non-contiguous", [g.distinct(6, 4, dtype=torch.float64).t(), 1])
    yield Case("strided int32", [g.strided(g.randint(-9, 9, (4, 6), dtype=torch.int32)), 1])
    yield Case("bool", [t([False, True, False, True], torch.bool), 0])
    yield Case("bf16", [g.distinct(2, 9, dtype=torch.bfloat16), 1])
    yield Case("f16", [g.distinct(2, 9, dtype=torch.float16), 1], min_torch="2.1")
    yield Case("uint8 3-d", [g.randint(0, 20, (2, 5, 3), dtype=torch.uint8), 1])
    yield Case("0-d", [t(3.0), 0])
    yield Case("empty", [torch.empty(0, 3), 1])
    yield err("dim out of range", [g.randn(2, 3), 2])


@op("cummin", torch_op="aten.cummin.default")
def cummin(g):
    yield Case("f32 last dim", [g.distinct(3, 8), -1])
    yield Case("ties take the later position", [t([2, 2, 1, 1, 3, 1], torch.int64), 0])
    yield Case("NaN propagates", [t([1.0, -3.0, NAN, -7.0, NAN, 0.0]), 0])
    yield Case("-inf", [t([1.0, -INF, 0.0, -INF]), 0])
    yield Case("f64 non-contiguous", [g.distinct(6, 4, dtype=torch.float64).t(), 0])
    yield Case("int8", [g.randint(-100, 100, (3, 7), dtype=torch.int8), 1])
    yield Case("bf16", [g.distinct(2, 9, dtype=torch.bfloat16), -1])
    yield Case("0-d", [t(-1.0), -1])
    yield Case("empty", [torch.empty(2, 0), 1])
    yield err("dim out of range", [g.randn(4), -2])


@op("logcumsumexp", torch_op="aten.logcumsumexp.default")
def logcumsumexp(g):
    yield Case("f32 last dim", [g.randn(3, 9), -1])
    yield Case("f64 dim 0", [g.randn(6, 3, dtype=torch.float64), 0])
    yield Case("infinities and NaN", [t([0.0, 1.0, -INF, INF, 2.0, NAN, 1.0]), 0])
    yield Case("-inf stays until a number", [t([-INF, -INF, 0.0, -INF]), 0])
    yield Case("+inf twice", [t([INF, INF, 0.0]), 0])
    yield Case("large values do not overflow", [t([1000.0, 1000.0, -1000.0, 999.0]), 0])
    yield Case("non-contiguous", [g.randn(5, 4).t(), 1])
    yield Case("strided 3-d", [g.strided(g.randn(2, 4, 3)), 1])
    yield Case("bf16", [g.randn(2, 8, dtype=torch.bfloat16), 1])
    yield Case("0-d", [t(0.5), 0])
    yield Case("empty", [torch.empty(0, 4), 0])
    yield err("int64", [g.randint(0, 5, (4,)), 0])
    yield err("dim out of range", [g.randn(3), 1])


@op("histc", torch_op="aten.histc.default")
def histc(g):
    x = g.randn(200)
    yield Case("f32 data range", [x, 10, 0.0, 0.0])
    yield Case("given range, outliers left out", [x, 7, -1.0, 1.5])
    yield Case("the max lands in the last bin", [t([0.0, 1.0, 2.0, 3.0, 4.0]), 4, 0.0, 4.0])
    yield Case("one value: range widened by 1", [t([2.0, 2.0, 2.0]), 3, 0.0, 0.0])
    # torch 1.13 let NaN through to an undefined bin; 2.x leaves it out.
    yield Case("NaN left out when a range is given", [t([1.0, NAN, 2.0, 0.5]), 3, 0.0, 3.0], min_torch="2.1")
    yield Case("f64 2-d strided", [g.strided(g.randn(6, 5, dtype=torch.float64)), 6, 0.0, 0.0])
    yield Case("non-contiguous", [g.randn(8, 5).t(), 5, -2.0, 2.0])
    yield Case("bf16", [g.randn(50, dtype=torch.bfloat16), 5, 0.0, 0.0])
    yield Case("f16", [g.randn(50, dtype=torch.float16), 5, -1.0, 1.0], min_torch="2.1")
    yield Case("0-d", [t(3.0), 3, 0.0, 0.0])
    yield Case("empty", [torch.empty(0), 4, 0.0, 0.0])
    yield err("bins 0", [x, 0, 0.0, 0.0])
    yield err("max below min", [x, 3, 2.0, 1.0])
    yield err("NaN in data without a range", [t([1.0, NAN]), 3, 0.0, 0.0])
    yield err("infinite range", [x, 3, 0.0, INF])
    yield err("int64", [g.randint(0, 9, (5,)), 3, 0.0, 0.0])


@op("histogram_bin_ct", torch_op="aten.histogram.bin_ct", devices=CPU)
def histogram_bin_ct(g):
    x = g.randn(120)
    yield Case("f32 data range", [x, 8, None, None, False])
    yield Case("range", [x, 5, [-1.0, 2.0], None, False])
    yield Case("weights", [x, 6, None, g.rand(120), False])
    yield Case("density", [x, 6, [-2.0, 2.0], None, True])
    yield Case("weights and density, f64",
               [g.randn(4, 10, dtype=torch.float64), 4, None, g.rand(40, dtype=torch.float64), True])
    yield Case("one value: range widened by 0.5", [t([2.0, 2.0]), 4, None, None, False])
    yield Case("edges on the data", [t([0.0, 1.0, 2.0, 3.0, 4.0]), 4, None, None, False])
    yield Case("strided 2-d", [g.strided(g.randn(5, 6)), 3, None, None, False])
    yield Case("empty: edges 0 to 1", [torch.empty(0), 4, None, None, False])
    yield Case("NaN left out when a range is given", [t([1.0, NAN, 2.0]), 2, [0.0, 2.0], None, False], min_torch="2.1")
    yield Case("bf16 with a range", [g.randn(40, dtype=torch.bfloat16), 4, [-1.0, 1.0], None, False], min_torch="2.1")
    yield err("bf16 without a range", [g.randn(40, dtype=torch.bfloat16), 4, None, None, False])
    yield err("bins 0", [x, 0, None, None, False])
    yield err("range inverted", [x, 4, [2.0, 1.0], None, False])
    yield err("NaN in data without a range", [t([1.0, NAN]), 3, None, None, False])
    yield err("weight dtype differs", [x, 4, None, g.rand(120, dtype=torch.float64), False])
    yield err("weight count differs", [x, 4, None, g.rand(7), False])
    yield err("int64", [g.randint(0, 9, (5,)), 3, None, None, False])


@op("_histogramdd_from_bin_cts", torch_op="aten._histogramdd_from_bin_cts.default", devices=CPU)
def histogramdd_from_bin_cts(g):
    pts = g.randn(60, 2)
    yield Case("2-d data range", [pts, [3, 4], None, None, False])
    yield Case("range", [pts, [2, 3], [-1.0, 1.0, 0.0, 2.0], None, False])
    yield Case("weights and density", [pts, [3, 3], None, g.rand(60), True])
    yield Case("3 coordinates, batched points, f64", [g.randn(2, 10, 3, dtype=torch.float64), [2, 3, 2], None, None,
                                                      False])
    yield Case("non-contiguous points", [g.randn(2, 25).t(), [4, 2], None, None, False])
    yield Case("1 coordinate", [g.randn(30, 1), [5], None, None, False])
    yield Case("no points", [torch.empty(0, 2), [2, 3], None, None, False])
    yield err("1-d input", [g.randn(6), [3], None, None, False])
    yield err("range of the wrong length", [pts, [2, 3], [0.0, 1.0], None, False])
    yield err("bins 0", [pts, [2, 0], None, None, False])


@op("index_reduce", torch_op="aten.index_reduce.default")
def index_reduce(g):
    index = torch.tensor([0, 2, 0, 3, 2])
    for reduce in ("prod", "mean", "amax", "amin"):
        for inc in (True, False):
            yield Case(f"{reduce} include_self={inc}", [g.randn(4, 3), 0, index, g.randn(5, 3), reduce, inc],
                       rtol=1e-5)
    yield Case("dim -1, int32 index", [g.randn(3, 5), -1, torch.tensor([4, 4, 1], dtype=torch.int32), g.randn(3, 3),
                                       "amax", True])
    yield Case("int32 mean rounds down", [t([[1, 2], [3, 4], [5, 6]], torch.int32), 0, torch.tensor([0, 0, 0]),
                                          t([[-7, 1], [1, 2], [1, 9]], torch.int32), "mean", False])
    yield Case("int64 prod include_self", [g.randint(-4, 5, (3, 4)), 1, torch.tensor([1, 1, 3]),
                                           g.randint(-4, 5, (3, 3)), "prod", True])
    yield Case("NaN propagates through amax", [g.randn(2, 3), 0, torch.tensor([1, 1]),
                                               t([[1.0, NAN, 3.0], [NAN, 0.0, 0.0]]), "amax", True])
    yield Case("non-contiguous self and source", [g.randn(5, 4).t(), 1, torch.tensor([0, 4]), g.randn(2, 4).t(),
                                                  "amin", False])
    yield Case("strided f64 mean", [g.strided(g.randn(3, 4, 2, dtype=torch.float64)), 1, torch.tensor([3, 0, 3]),
                                    g.randn(3, 3, 2, dtype=torch.float64), "mean", True])
    yield Case("bf16 amax", [g.randn(4, 2, dtype=torch.bfloat16), 0, torch.tensor([1, 3, 1]),
                             g.randn(3, 2, dtype=torch.bfloat16), "amax", False])
    yield Case("0-d", [t(2.0), 0, torch.tensor([0]), t(3.0), "prod", True])
    yield Case("no indices", [g.randn(3, 2), 0, torch.tensor([], dtype=torch.int64), torch.empty(0, 2), "mean", True])
    yield err("reduce 'sum'", [g.randn(4, 3), 0, index, g.randn(5, 3), "sum", True])
    yield err("index out of range", [g.randn(4, 3), 0, torch.tensor([0, 4]), g.randn(2, 3), "prod", True])
    yield err("negative index", [g.randn(4, 3), 0, torch.tensor([0, -1]), g.randn(2, 3), "prod", True])
    yield err("float index", [g.randn(4, 3), 0, torch.tensor([0.0, 1.0]), g.randn(2, 3), "prod", True])
    yield err("2-d index", [g.randn(4, 3), 0, torch.tensor([[0]]), g.randn(1, 3), "prod", True])
    yield err("source dtype differs", [g.randn(4, 3), 0, torch.tensor([0, 1]), g.randn(2, 3, dtype=torch.float64),
                                       "mean", True])
    yield err("index count differs from source", [g.randn(4, 3), 0, torch.tensor([0, 1, 2]), g.randn(2, 3), "amax",
                                                  True])
    yield err("source slices differ from self's", [g.randn(4, 3), 0, torch.tensor([0]), g.randn(1, 2), "amax", True])
    yield err("dim out of range", [g.randn(4, 3), 2, torch.tensor([0]), g.randn(4, 1), "amax", True])


@op("segment_reduce", torch_op="aten.segment_reduce.default")
def segment_reduce(g):
    data = g.randn(7)
    lengths = torch.tensor([2, 0, 4, 1])
    for reduce in ("sum", "mean", "max", "min", "prod"):
        yield Case(f"{reduce} by lengths, one empty segment", [data, reduce, lengths, None, None, 0, False, None])
    yield Case("max with initial", [data, "max", lengths, None, None, 0, False, 0.5])
    yield Case("mean with initial", [data, "mean", lengths, None, None, 0, False, 10.0])
    yield Case("sum by offsets", [data, "sum", None, None, torch.tensor([0, 2, 2, 6, 7]), 0, False, None])
    yield Case("offsets not from 0", [data, "prod", None, None, torch.tensor([1, 3, 5]), 0, False, None])
    yield Case("axis 1, 2-d lengths, int32", [g.randn(2, 6, 3), "sum", torch.tensor([[2, 4], [3, 3]],
                                                                                   dtype=torch.int32),
                                              None, None, 1, False, None])
    yield Case("axis -2 by offsets", [g.randn(2, 5, 2), "max", None, None, torch.tensor([[0, 1, 5], [0, 4, 5]]), -2,
                                      False, None])
    yield Case("unsafe: lengths need not cover the axis", [data, "sum", torch.tensor([2, 3]), None, None, 0, True,
                                                           None])
    yield Case("NaN propagates through max", [t([1.0, NAN, 3.0]), "max", torch.tensor([2, 1]), None, None, 0, False,
                                              None])
    yield Case("non-contiguous data, axis 0", [g.randn(4, 5).t(), "mean", torch.tensor([3, 2]), None, None, 0, False,
                                               None])
    yield Case("f64", [g.randn(6, dtype=torch.float64), "sum", torch.tensor([1, 5]), None, None, 0, False, None])
    yield Case("bf16", [g.randn(6, dtype=torch.bfloat16), "sum", torch.tensor([3, 3]), None, None, 0, False, None])
    yield Case("f16", [g.randn(6, dtype=torch.float16), "mean", torch.tensor([4, 2]), None, None, 0, False, None])
    # torch 1.13 refused empty data; 2.x reduces nothing to each segment's starting value.
    yield Case("empty data, two empty segments", [torch.empty(0), "max", torch.tensor([0, 0]), None, None, 0, False,
                                                  None], min_torch="2.1")
    yield Case("empty rows, initial", [torch.empty(0, 3), "min", torch.tensor([0]), None, None, 0, False, 2.0],
               min_torch="2.1")
    yield err("unknown reduce", [data, "avg", lengths, None, None, 0, False, None])
    yield err("neither lengths nor offsets", [data, "sum", None, None, None, 0, False, None])
    yield err("lengths do not sum to the axis", [data, "sum", torch.tensor([2, 2]), None, None, 0, False, None])
    yield err("negative length", [data, "sum", torch.tensor([3, -1, 5]), None, None, 0, False, None])
    yield err("axis is not lengths' last dim", [g.randn(2, 6), "sum", torch.tensor([2, 4]), None, None, 1, False,
                                                None])
    yield err("int64 data", [g.randint(0, 5, (4,)), "sum", torch.tensor([4]), None, None, 0, False, None])


@op("masked_select", torch_op="aten.masked_select.default")
def masked_select(g):
    x = g.randn(3, 4)
    yield Case("f32 same shape", [x, g.rand(3, 4) > 0.5])
    yield Case("mask broadcast", [x, torch.tensor([True, False, True, True])])
    yield Case("both broadcast", [g.randn(4), torch.tensor([[True], [False], [True]])])
    yield Case("non-contiguous self", [g.randn(5, 3).t(), g.rand(3, 5) > 0.3])
    yield Case("strided mask", [x, g.strided(g.rand(3, 4) > 0.5)])
    yield Case("int64", [g.randint(-9, 9, (2, 5)), g.rand(2, 5) > 0.5])
    yield Case("bool", [g.randint(0, 2, (6,), dtype=torch.bool), g.rand(6) > 0.5])
    yield Case("f16", [g.randn(7, dtype=torch.float16), g.rand(7) > 0.5])
    yield Case("0-d", [t(3.0), torch.tensor(True)])
    yield Case("nothing selected", [x, torch.zeros(3, 4, dtype=torch.bool)])
    yield Case("empty", [torch.empty(0, 4), torch.tensor([True, False, True, True])])
    yield err("int32 mask", [x, torch.ones(3, 4, dtype=torch.int32)])
    yield err("uint8 mask", [x, torch.ones(3, 4, dtype=torch.uint8)], min_torch="2.1")
    yield err("shapes do not broadcast", [x, torch.tensor([True, False])])


@op("masked_scatter", torch_op="aten.masked_scatter.default")
def masked_scatter(g):
    x = g.randn(3, 4)
    yield Case("f32 same shape", [x, g.rand(3, 4) > 0.5, g.randn(12)])
    yield Case("mask broadcast, 2-d source", [x, torch.tensor([True, False, True, False]), g.randn(4, 5)])
    yield Case("self broadcast by the mask", [g.randn(4), torch.tensor([[True], [False], [True]]), g.randn(9)])
    yield Case("non-contiguous self and source", [g.randn(4, 3).t(), g.rand(3, 4) > 0.4, g.randn(4, 4).t()])
    yield Case("int32", [g.randint(-9, 9, (2, 5), dtype=torch.int32), g.rand(2, 5) > 0.5,
                         g.randint(100, 200, (10,), dtype=torch.int32)])
    yield Case("bf16", [g.randn(6, dtype=torch.bfloat16), g.rand(6) > 0.5, g.randn(6, dtype=torch.bfloat16)])
    yield Case("0-d", [t(3.0), torch.tensor(True), t([7.0])])
    yield Case("nothing masked, empty source", [x, torch.zeros(3, 4, dtype=torch.bool), torch.empty(0)])
    yield Case("empty", [torch.empty(0, 4), torch.tensor([True, False, True, True]), t([1.0])])
    yield err("source too small", [x, torch.ones(3, 4, dtype=torch.bool), g.randn(11)])
    yield err("source dtype differs", [x, g.rand(3, 4) > 0.5, g.randn(12, dtype=torch.float64)])
    yield err("uint8 mask", [x, torch.ones(3, 4, dtype=torch.uint8), g.randn(12)], min_torch="2.1")
    yield err("shapes do not broadcast", [x, torch.tensor([True, False]), g.randn(12)])


@op("nonzero_static", torch_op="aten.nonzero_static.default", min_torch="2.1")
def nonzero_static(g):
    x = (g.randn(4, 5) > 0.3).float()
    yield Case("padded with -1", [x, 30, -1])
    yield Case("cut to size", [x, 2, -1])
    yield Case("fill value", [g.randint(0, 2, (3, 3), dtype=torch.int32), 12, 99])
    yield Case("bool 3-d strided", [g.strided(g.randint(0, 2, (2, 3, 4), dtype=torch.bool)), 10, -1])
    yield Case("NaN counts as nonzero", [t([0.0, NAN, -0.0, 1.0]), 4, -7])
    yield Case("size 0", [x, 0, -1])
    yield Case("0-d", [t(1.0), 3, -1])
    yield Case("empty", [torch.empty(0, 3), 2, 5])
    yield err("negative size", [x, -1, -1])
