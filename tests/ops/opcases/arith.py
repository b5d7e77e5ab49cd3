"""The arithmetic group, beyond the reference name lists: mul/add (Tensor and Scalar), subtract, pow, fill_,
slice. torch's result_type decides the dtype (0-d tensors and the double scalars only lift the category), inputs
broadcast, and outputs get TensorIterator's strides; complex64/complex128 for mul, add and pow.
"""

import torch

from ..spec import Case, err, op

aten = torch.ops.aten
FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
INTS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def cplx(g, *shape, dtype=torch.complex64):
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(g.randn(*shape, dtype=part), g.randn(*shape, dtype=part))


def typed(g, shape, dt):
    if dt.is_floating_point:
        return g.randn(*shape, dtype=dt)
    if dt == torch.bool:
        return g.randint(0, 2, shape).bool()
    return g.randint(-50 if dt != torch.uint8 else 0, 100, shape, dtype=dt)


def reduced(dt):
    """Half-precision arithmetic on the CPU arrived after torch 1.13 for some ops: those cases come from 2.11."""
    return "2.1" if dt in (torch.float16,) else None


def binary_cases(g, extra=()):
    """Cases of a (self, other, *extra) tensor op shared by mul, add and subtract."""
    for dt in FLOATS + (torch.int64, torch.int32, torch.uint8):
        yield Case(f"{dt} broadcast rows", [typed(g, (3, 5), dt), typed(g, (5,), dt), *extra])
    yield Case("f32 by f64: promoted", [g.randn(4, 3), g.randn(4, 3, dtype=torch.float64), *extra])
    yield Case("int64 by f16: f16", [typed(g, (2, 3), torch.int64), g.randn(2, 3, dtype=torch.float16), *extra])
    yield Case("f16 by a 0-d f32: stays f16", [g.randn(3, 4, dtype=torch.float16), g.randn(()), *extra])
    yield Case("int32 by a 0-d f64: f64 wins the category", [typed(g, (3,), torch.int32),
                                                          g.randn((), dtype=torch.float64), *extra])
    yield Case("int8 by a 0-d int64: stays int8", [typed(g, (4,), torch.int8), torch.tensor(3), *extra])
    yield Case("uint8 by int8: int16", [typed(g, (4,), torch.uint8), typed(g, (4,), torch.int8), *extra])
    yield Case("both 0-d", [g.randn(()), g.randn((), dtype=torch.float64), *extra])
    yield Case("transposed with contiguous", [g.randn(5, 4).t(), g.randn(4, 5), *extra])
    yield Case("both transposed", [g.randn(5, 4).t(), g.randn(5, 4).t(), *extra])
    yield Case("channels last with a broadcast channel", [
        g.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last), g.randn(3, 1, 1), *extra])
    yield Case("column with row: outer", [g.randn(4, 1), g.randn(1, 6), *extra])
    yield Case("every other column", [g.randn(3, 8)[:, ::2], g.randn(3, 4), *extra])
    yield Case("empty", [g.randn(0, 3), g.randn(3), *extra])
    yield Case("inf and nan", [torch.tensor([float("inf"), float("nan"), -0.0, 1.0]),
                               torch.tensor([0.0, 2.0, float("inf"), float("-inf")]), *extra])
    yield Case("complex64", [cplx(g, 3, 4), cplx(g, 4), *extra])
    yield Case("complex128 by f32: complex128", [cplx(g, 3, dtype=torch.complex128), g.randn(2, 3)[0], *extra])
    yield Case("complex64 by f64: complex128", [cplx(g, 3), g.randn(3, dtype=torch.float64), *extra])
    yield Case("f64 by a 0-d complex64: complex128", [g.randn(3, dtype=torch.float64), cplx(g, ()), *extra])
    yield Case("int64 wraps", [torch.tensor([2**62, -2**62, 7]), torch.tensor([4, 3, -2]), *extra])
    yield err("shapes do not broadcast", [g.randn(2, 3), g.randn(4), *extra])


@op("mul_Tensor", torch_op="aten.mul.Tensor")
def mul_tensor(g):
    yield from binary_cases(g)
    yield Case("bool by bool: and", [typed(g, (6,), torch.bool), typed(g, (6,), torch.bool)])
    yield Case("bool by f32", [typed(g, (6,), torch.bool), g.randn(6)])
    x = cplx(g, 2, 8, 16)
    yield Case("rotary: complex64 by a broadcast complex64 table", [x, cplx(g, 8, 16)])
    yield Case("complex64 view_as_complex of a transposed pair", [
        torch.view_as_complex(g.randn(2, 6, 2).transpose(0, 1).contiguous()), cplx(g, 6, 2)])


@op("mul_Scalar", torch_op="aten.mul.Scalar")
def mul_scalar(g):
    for dt in FLOATS:
        yield Case(f"{dt}", [typed(g, (3, 5), dt), 0.37])
    yield Case("int64 by a float: float32", [typed(g, (4,), torch.int64), 2.5])
    yield Case("bool: float32", [typed(g, (4,), torch.bool), 3.0])
    yield Case("0-d int32: float32", [torch.tensor(7, dtype=torch.int32), -1.5])
    yield Case("complex64", [cplx(g, 2, 3), -2.0])
    yield Case("complex128", [cplx(g, 3, dtype=torch.complex128), 0.5])
    yield Case("transposed", [g.randn(4, 3).t(), 2.0])
    yield Case("empty", [g.randn(2, 0), 2.0])
    yield Case("inf times 0", [torch.tensor([float("inf"), 1.0]), 0.0])


@op("add_Tensor", torch_op="aten.add.Tensor")
def add_tensor(g):
    yield from binary_cases(g, (1,))
    yield Case("alpha 0.5", [g.randn(3, 4), g.randn(3, 4), 0.5])
    yield Case("f64 alpha -2", [g.randn(5, dtype=torch.float64), g.randn(5, dtype=torch.float64), -2.0])
    yield Case("complex64 alpha 2", [cplx(g, 4), cplx(g, 4), 2.0])
    yield Case("int64 alpha 3 (an int scalar)", [typed(g, (5,), torch.int64), typed(g, (5,), torch.int64), 3])
    yield Case("bool or bool", [typed(g, (6,), torch.bool), typed(g, (6,), torch.bool), 1])
    yield err("int64 with a fractional alpha", [typed(g, (5,), torch.int64), typed(g, (5,), torch.int64), 0.5])


@op("add_Scalar", torch_op="aten.add.Scalar")
def add_scalar(g):
    for dt in FLOATS:
        # torch's CUDA kernel adds the scalar in float32, its CPU kernel rounds it to the half type first: one
        # step of float16 apart (the shim follows the CPU kernel).
        tol = {"rtol": 2e-3} if g.device == "cuda" and dt == torch.float16 else {}
        yield Case(f"{dt}", [typed(g, (3, 5), dt), 0.37, 1.0], **tol)
    yield Case("alpha 2", [g.randn(4), 1.5, 2.0])
    yield Case("int64 plus a float: float32", [typed(g, (4,), torch.int64), 2.5, 1.0])
    yield Case("bool plus a float: float32", [typed(g, (4,), torch.bool), 0.25, 1.0])
    yield Case("complex64", [cplx(g, 2, 3), -2.0, 1.0])
    yield Case("transposed", [g.randn(4, 3).t(), 2.0, 1.0])
    yield Case("0-d", [g.randn(()), 2.0, 1.0])
    yield Case("empty", [g.randn(0), 2.0, 1.0])


@op("aten_subtract_Tensor", torch_op="aten.subtract.Tensor")
def subtract_tensor(g):
    yield from binary_cases(g, (1,))
    yield Case("alpha 2.5", [g.randn(3, 4), g.randn(4), 2.5])
    yield Case("int32 alpha 2 (an int scalar)", [typed(g, (5,), torch.int32), typed(g, (5,), torch.int32), 2])
    yield err("bool minus bool", [typed(g, (3,), torch.bool), typed(g, (3,), torch.bool), 1])
    yield err("f32 minus bool", [g.randn(3), typed(g, (3,), torch.bool), 1.0])


@op("pow_Tensor_Tensor", torch_op="aten.pow.Tensor_Tensor")
def pow_tensor_tensor(g):
    for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        base = typed(g, (3, 4), dt).abs() + 0.5
        yield Case(f"{dt}", [base, typed(g, (4,), dt)], min_torch=reduced(dt), rtol=1e-5 if dt == torch.float32 else None)
    yield Case("negative bases, integral exponents", [g.randn(5), torch.tensor([0.0, 1.0, 2.0, 3.0, -1.0])])
    yield Case("negative base, fractional exponent: nan", [torch.tensor([-2.0, 0.0, 0.0]), torch.tensor([0.5, 0.0, -1.0])])
    yield Case("int64 powers, negative exponents", [torch.tensor([2, -3, 1, -1, -1, 5, 0]),
                                                     torch.tensor([10, 3, -4, -3, -2, -1, 0])])
    yield Case("int32 wraps", [torch.tensor([3, 7], dtype=torch.int32), torch.tensor([25, 40], dtype=torch.int32)])
    yield Case("int64 by f32 exponents", [torch.tensor([2, 3, 4]), torch.tensor([0.5, 1.5, 2.0])])
    yield Case("transposed", [g.randn(4, 3).t().abs(), g.randn(3, 4)], rtol=1e-5)
    yield Case("empty", [g.randn(0, 2), g.randn(2)])
    yield Case("complex64", [cplx(g, 4), cplx(g, 4)], rtol=1e-5, atol=1e-5)
    yield err("bool", [typed(g, (3,), torch.bool), typed(g, (3,), torch.bool)])


@op("pow_Tensor_Scalar", torch_op="aten.pow.Tensor_Scalar")
def pow_tensor_scalar(g):
    for e in (2.0, 0.5, -1.0, 3.0, 0.0, 1.7, -2.5):
        yield Case(f"f32 exponent {e}", [g.randn(3, 4).abs() + 0.1, e], rtol=1e-5)
    yield Case("f64", [g.randn(5, dtype=torch.float64), 3.0])
    yield Case("bf16", [g.randn(5, dtype=torch.bfloat16).abs(), 2.0])
    yield Case("f16", [g.randn(5, dtype=torch.float16).abs(), 0.5], min_torch="2.1")
    yield Case("int64 with a float exponent: float32", [torch.tensor([1, 2, 3, -2]), 2.0])
    yield Case("transposed", [g.randn(4, 3).t(), 2.0])
    yield Case("0-d", [g.randn(()), 3.0])
    yield Case("empty", [g.randn(0), 2.0])
    yield Case("complex64 squared", [cplx(g, 4), 2.0], rtol=1e-5, atol=1e-5)


@op("pow_Scalar", torch_op="aten.pow.Scalar")
def pow_scalar(g):
    yield Case("2 to f32 powers", [2.0, g.randn(3, 4)], rtol=1e-5)
    yield Case("0.5 to f64 powers", [0.5, g.randn(5, dtype=torch.float64)])
    yield Case("base 1: ones, nan exponent too", [1.0, torch.tensor([float("nan"), 2.0, -3.0])])
    yield Case("to int64 powers: float32", [3.0, torch.tensor([0, 1, 2, -1])])
    yield Case("bf16", [2.0, g.randn(4, dtype=torch.bfloat16)])
    yield Case("transposed", [1.5, g.randn(4, 3).t()], rtol=1e-5)
    yield Case("empty", [2.0, g.randn(0, 3)])


def fill_cases(g):
    for dt in FLOATS + (torch.int64, torch.int32, torch.uint8, torch.bool):
        yield Case(f"{dt}", [typed(g, (3, 4), dt), 2.0], mutated=[0])
    yield Case("transposed", [g.randn(4, 3).t(), -1.5], mutated=[0])
    yield Case("complex64", [cplx(g, 3), 0.25], mutated=[0])
    yield Case("0-d", [g.randn(()), 7.0], mutated=[0])
    yield Case("empty", [g.randn(0, 2), 1.0], mutated=[0])
    yield Case("nan", [g.randn(3), float("nan")], mutated=[0])


@op("fill__Scalar", call=lambda self, value: aten.fill_.Scalar(self, value))
def fill_scalar(g):
    yield from fill_cases(g)


@op("aten_fill__Scalar", call=lambda self, value: aten.fill_.Scalar(self, value))
def aten_fill_scalar(g):
    yield from fill_cases(g)


@op("slice_Tensor", torch_op="aten.slice.Tensor")
def slice_tensor(g):
    x = g.randn(6, 8)
    yield Case("rows 1..4", [x, 0, 1, 4, 1])
    yield Case("columns, step 3", [x, 1, 0, 8, 3])
    yield Case("negative dim and indices", [x, -1, -5, -1, 2])
    yield Case("no start or end", [x, 1, None, None, 2])
    yield Case("end past the dim: clamped", [x, 0, 2, 100, 1])
    yield Case("start past the end: empty", [x, 0, 5, 2, 1])
    yield Case("start before the dim: clamped", [x, 1, -100, 3, 1])
    yield Case("transposed", [g.randn(8, 6).t(), 1, 1, 7, 2])
    yield Case("int64", [typed(g, (5, 3), torch.int64), 0, 1, None, 1])
    yield Case("complex64", [cplx(g, 4, 3), 0, 1, 3, 1])
    yield Case("empty dim", [g.randn(0, 3), 0, 0, 2, 1])
    yield err("0-d", [g.randn(()), 0, 0, 1, 1])
    yield err("step 0", [x, 0, 0, 4, 0])
    yield err("dim out of range", [x, 2, 0, 4, 1])


@op("index_Tensor", torch_op="aten.index.Tensor")
def index_tensor(g):
    x = g.randn(4, 5, 6)
    yield Case("first dim by int64", [x, [torch.tensor([3, 0, -1])]])
    yield Case("middle dim, None first", [x, [None, torch.tensor([[1, 4], [0, 0]])]])
    yield Case("two adjacent dims broadcast", [x, [None, torch.tensor([[0], [2]]), torch.tensor([1, 5, -6])]])
    yield Case("separated dims: the index shape goes first", [x, [torch.tensor([0, 3]), None, torch.tensor([2, 1])]])
    yield Case("int32 index", [x, [torch.tensor([1, 2], dtype=torch.int32)]], min_torch="2.1")
    yield Case("bool mask", [g.randn(3, 4), [g.randint(0, 2, (3, 4)).bool()]])
    yield Case("bool mask of the first dim", [g.randn(3, 4), [torch.tensor([True, False, True])]])
    yield Case("permuted self", [g.randn(3, 4, 5).permute(2, 0, 1), [None, torch.tensor([1, 0])]])
    yield Case("transposed self, first dim", [g.randn(4, 5).t(), [torch.tensor([0, 2])]])
    yield Case("int64 self", [g.randint(-9, 9, (5, 3)), [torch.tensor([4, 1])]])
    yield Case("complex64 self", [cplx(g, 5, 2), [torch.tensor([4, 1, 1])]])
    yield Case("bf16 self", [g.randn(5, 2, dtype=torch.bfloat16), [torch.tensor([0, 1])]])
    yield Case("empty index", [x, [torch.tensor([], dtype=torch.int64)]])
    yield err("index out of range", [x, [torch.tensor([4])]])
    yield err("float index", [x, [torch.tensor([1.0])]])
    yield err("indices do not broadcast", [x, [torch.tensor([0, 1]), torch.tensor([0, 1, 2])]])
    yield err("too many indices", [g.randn(2), [torch.tensor([0]), torch.tensor([0])]])


def sorted_seq(g, *shape, dtype=torch.float32):
    return g.randn(*shape, dtype=dtype).sort(dim=-1).values


@op("searchsorted_Tensor", torch_op="aten.searchsorted.Tensor")
def searchsorted_tensor(g):
    seq = torch.tensor([0.0, 1.0, 1.0, 2.0, 5.0])
    vals = torch.tensor([[-1.0, 0.0, 1.0], [1.5, 5.0, 9.0]])
    yield Case("1-d sequence, left", [seq, vals, False, False, None, None])
    yield Case("1-d sequence, right", [seq, vals, False, True, None, None])
    yield Case("side right, int32 out", [seq, vals, True, False, "right", None])
    yield Case("side left", [seq, vals, False, False, "left", None])
    yield Case("rows of a 2-d sequence", [sorted_seq(g, 3, 6), g.randn(3, 4), False, False, None, None])
    yield Case("f64 with nan and inf values", [sorted_seq(g, 7, dtype=torch.float64),
                                               torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0],
                                                            dtype=torch.float64), False, True, None, None])
    yield Case("int64", [torch.tensor([1, 3, 3, 8]), torch.tensor([0, 3, 4, 9]), False, False, None, None])
    yield Case("with a sorter", [torch.tensor([5.0, 1.0, 3.0, 2.0]), torch.tensor([0.0, 2.0, 2.5, 6.0]), False,
                                 False, None, torch.tensor([1, 3, 2, 0])])
    yield Case("transposed values", [seq, g.randn(3, 2).t(), False, False, None, None])
    yield Case("0-d value", [seq, torch.tensor(1.0), False, False, None, None])
    yield Case("empty values", [seq, g.randn(0, 2), False, False, None, None])
    yield Case("empty sequence", [torch.tensor([]), vals, False, False, None, None])
    yield err("side left with right", [seq, vals, False, True, "left", None])
    yield err("leading dims differ", [sorted_seq(g, 2, 5), g.randn(3, 4), False, False, None, None])
    yield err("sorter of int32", [seq, vals, False, False, None, torch.tensor([0, 1, 2, 3, 4], dtype=torch.int32)])


@op("searchsorted_Scalar", torch_op="aten.searchsorted.Scalar")
def searchsorted_scalar(g):
    seq = torch.tensor([0.0, 1.0, 1.0, 2.0, 5.0])
    yield Case("left", [seq, 1.0, False, False, None, None])
    yield Case("right, int32", [seq, 1.0, True, True, None, None])
    yield Case("side right", [seq, 3.0, False, False, "right", None])
    yield Case("past the end", [seq, 10.0, False, False, None, None])
    yield Case("int64 sequence", [torch.tensor([1, 3, 3, 8]), 3.0, False, False, None, None])
    yield err("2-d sequence", [sorted_seq(g, 2, 5), 1.0, False, False, None, None])


@op("bucketize_Tensor", torch_op="aten.bucketize.Tensor")
def bucketize_tensor(g):
    b = torch.tensor([0.0, 1.0, 2.0, 5.0])
    vals = torch.tensor([[-1.0, 0.0, 1.0], [1.5, 5.0, 9.0]])
    yield Case("left", [vals, b, False, False])
    yield Case("right, int32", [vals, b, True, True])
    yield Case("f64 values", [g.randn(4, 3, dtype=torch.float64), b.double(), False, False])
    yield Case("int64", [torch.tensor([0, 3, 4, 9]), torch.tensor([1, 3, 8]), False, True])
    yield Case("transposed values", [g.randn(3, 4).t(), b, False, False])
    yield Case("0-d", [torch.tensor(1.5), b, False, False])
    yield Case("empty", [g.randn(0), b, False, False])
    yield err("2-d boundaries", [vals, torch.ones(2, 2), False, False])


@op("repeat_interleave_Tensor", torch_op="aten.repeat_interleave.Tensor")
def repeat_interleave_tensor(g):
    yield Case("int64", [torch.tensor([2, 0, 3, 1]), None])
    yield Case("int32", [torch.tensor([1, 2], dtype=torch.int32), None])
    yield Case("with the output size", [torch.tensor([2, 1]), 3])
    yield Case("every other element", [torch.tensor([1, 9, 2, 9, 3])[::2], None])
    yield Case("empty", [torch.tensor([], dtype=torch.int64), None])
    yield err("negative", [torch.tensor([1, -1]), None])
    yield err("2-d", [torch.tensor([[1]]), None])
    yield err("float", [torch.tensor([1.0]), None])
    yield err("output size differs", [torch.tensor([2, 1]), 4])


@op("set__source_Tensor", call=lambda self, source: self.set_(source))
def set_source_tensor(g):
    yield Case("f32: takes source's shape", [g.randn(2), g.randn(3, 4)], mutated=[0])
    yield Case("transposed source", [g.randn(5), g.randn(4, 3).t()], mutated=[0])
    yield Case("int64 0-d source", [g.randint(0, 9, (3,)), torch.tensor(7)], mutated=[0])
    yield Case("empty source", [g.randn(2, 2), g.randn(0, 3)], mutated=[0])
    yield Case("complex64", [cplx(g, 1), cplx(g, 2, 3)], mutated=[0])


@op("bernoulli__Tensor", call=lambda self, p, generator: self.bernoulli_(p))
def bernoulli_tensor(g):
    p = torch.full((100, 100), 0.3)
    yield Case("f32, p 0.3", [torch.empty(100, 100), p, None], mutated=[0], check="moments")
    yield Case("f64, broadcast row of p", [torch.empty(200, 60, dtype=torch.float64),
                                           torch.linspace(0.1, 0.9, 60, dtype=torch.float64), None],
               mutated=[0], check="moments")
    yield Case("int64", [torch.empty(100, 100, dtype=torch.int64), p, None], mutated=[0], check="moments")
    yield Case("p of 0 and 1: exact", [torch.empty(2, 3), torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]), None],
               mutated=[0])
    yield Case("transposed self", [torch.empty(100, 120).t(), torch.full((120, 100), 0.5), None],
               mutated=[0], check="moments")
    yield Case("empty", [torch.empty(0, 3), torch.full((3,), 0.5), None], mutated=[0])
    yield err("p above 1", [torch.empty(2), torch.tensor([2.0]), None], mutated=[0])
    yield err("p does not broadcast", [torch.empty(2), torch.ones(3), None], mutated=[0])
