"""The views group: views (reshape, permute, narrow, squeeze.dim, view.dtype, view_as_real/complex), cat, pad,
resize_/resize_as_, _efficientzerotensor, abs/angle/polar/gcd, and the device-generic c_shim_aten.h functions.

The runner gives every other case of a function (the 2nd, 4th, ...) a storage offset of 3 elements. A view that
joins elements (view_as_complex, view.dtype to a wider dtype) needs an even offset, as in torch, so those cases
come first in pairs with a case that does not care at the odd places.
"""

import torch

from ..spec import Case, err, op

aten = torch.ops.aten
INTS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
# c10's memory format codes, as the C functions take them.
FORMATS = {0: torch.contiguous_format, 1: torch.preserve_format, 2: torch.channels_last, 3: torch.channels_last_3d}


def cplx(g, *shape, dtype=torch.complex64):
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(g.randn(*shape, dtype=part), g.randn(*shape, dtype=part))


def typed(g, shape, dt):
    if dt.is_floating_point:
        return g.randn(*shape, dtype=dt)
    if dt == torch.bool:
        return g.randint(0, 2, shape).bool()
    return g.randint(-50 if dt != torch.uint8 else 0, 100, shape, dtype=dt)


@op("reshape", torch_op="aten.reshape.default")
def reshape(g):
    x = g.randn(4, 6)
    yield Case("contiguous: a view", [x, [3, 8]])
    yield Case("-1 inferred", [x, [2, -1, 3]])
    yield Case("transposed, expressible as a view", [x.t(), [3, 2, 4]])
    yield Case("transposed flattened: a copy", [x.t(), [24]])
    yield Case("every other row: a copy", [g.randn(4, 6)[::2], [3, 4]])
    yield Case("0-d to [1, 1]", [g.randn(()), [1, 1]])
    yield Case("[1, 1] to 0-d", [g.randn(1, 1), []])
    yield Case("empty", [torch.empty(0, 3), [3, 0]])
    yield Case("empty transposed, same shape", [torch.empty(0, 3).t(), [3, 0]])
    for dt in (torch.float64, torch.float16, torch.bfloat16, *INTS, torch.bool):
        yield Case(f"{dt}", [typed(g, (2, 3, 4), dt).transpose(1, 2), [2, 12]])
    yield Case("complex64 copy", [cplx(g, 3, 4).t(), [12]])
    yield err("wrong element count", [x, [5, -1]])
    yield err("two -1", [x, [-1, -1]])
    yield err("negative size", [x, [-2, 12]])
    yield err("ambiguous -1 for 0 elements", [torch.empty(0, 3), [0, -1]])


@op("permute", torch_op="aten.permute.default")
def permute(g):
    yield Case("3-d", [g.randn(2, 3, 4), [2, 0, 1]])
    yield Case("negative dims", [g.randn(2, 3, 4), [-1, -3, -2]])
    yield Case("non-contiguous input", [g.strided(g.randn(3, 5)), [1, 0]])
    yield Case("0-d", [g.randn(()), []])
    yield Case("empty", [torch.empty(2, 0, 3), [1, 2, 0]])
    yield Case("int64", [g.randint(0, 9, (2, 3)), [1, 0]])
    yield Case("bf16", [g.randn(2, 3, 2, dtype=torch.bfloat16), [2, 1, 0]])
    yield err("repeated dim", [g.randn(3, 1, 2), [0, 0, 1]])
    yield err("too few dims", [g.randn(3, 1, 2), [0, 1]])
    yield err("dim out of range", [g.randn(3, 1, 2), [0, 1, 3]])


def narrow_cases(g):
    x = g.randn(4, 6)
    yield Case("dim 1", [x, 1, 2, 3])
    yield Case("negative start", [x, 1, -2, 2])
    yield Case("negative dim", [x, -2, 1, 2])
    yield Case("start at the end, length 0", [x, 1, 6, 0])
    yield Case("non-contiguous", [x.t(), 0, 1, 4])
    yield Case("f16", [g.randn(3, 5, dtype=torch.float16), 1, 0, 2])
    yield Case("int32", [g.randint(0, 9, (3, 5), dtype=torch.int32), 0, 1, 1])
    yield Case("bool", [g.randint(0, 2, (5,)).bool(), 0, 2, 3])
    yield err("start + length past the end", [x, 1, 2, 5])
    yield err("negative length", [x, 1, 2, -1])
    yield err("dim out of range", [x, 2, 0, 1])
    yield err("0-d", [g.randn(()), 0, 0, 1])


@op("narrow", torch_op="aten.narrow.default")
def narrow(g):
    yield from narrow_cases(g)


@op("aten_narrow", torch_op="aten.narrow.default")
def aten_narrow(g):
    yield from narrow_cases(g)


@op("squeeze_dim", torch_op="aten.squeeze.dim")
def squeeze_dim(g):
    yield Case("size-1 dim", [g.randn(3, 1, 2), 1])
    yield Case("negative dim", [g.randn(3, 1, 2), -2])
    yield Case("size > 1: unchanged", [g.randn(3, 1, 2), 0])
    yield Case("non-contiguous", [g.randn(4, 1, 3).transpose(0, 2), 1])
    yield Case("0-d", [g.randn(()), -1])
    yield Case("empty", [torch.empty(0, 1), 1])
    yield Case("int8", [g.randint(0, 9, (1, 4), dtype=torch.int8), 0])
    yield err("dim out of range", [g.randn(3, 1, 2), 3])
    yield err("0-d dim 1", [g.randn(()), 1])


@op("view_dtype", torch_op="aten.view.dtype")
def view_dtype(g):
    x = g.randn(4, 6)
    # Even places: offset 0 (joining elements needs an even offset); odd places: any offset.
    yield Case("float32 as float64 (joins pairs)", [x, torch.float64])
    yield Case("float32 as int32 (same size)", [x, torch.int32])
    yield Case("int8 as int32", [g.randint(-100, 100, (2, 8), dtype=torch.int8), torch.int32])
    yield Case("float32 as float16 (splits)", [x, torch.float16])
    yield Case("uint8 as bfloat16", [g.randint(0, 255, (3, 4), dtype=torch.uint8), torch.bfloat16])
    yield Case("non-contiguous rows as bfloat16", [g.randn(4, 6)[::2], torch.bfloat16])
    yield Case("float64 as complex128", [g.randn(3, 2, dtype=torch.float64), torch.complex128])
    yield Case("0-d same size", [g.randn(()), torch.int32])
    yield Case("empty", [torch.empty(0, 4), torch.float64])
    yield Case("complex64 as float32", [cplx(g, 2, 3), torch.float32])
    yield err("last dim not divisible", [g.randn(4, 6)[:, :3], torch.float64])
    yield err("last stride not 1", [x.t(), torch.float16])
    yield err("0-d different size", [g.randn(()), torch.float64])


@op("view_as_real", torch_op="aten.view_as_real.default")
def view_as_real(g):
    yield Case("complex64", [cplx(g, 3, 4)])
    yield Case("complex128", [cplx(g, 2, 3, dtype=torch.complex128)])
    yield Case("non-contiguous", [cplx(g, 4, 3).t()])
    yield Case("0-d", [cplx(g, 1).reshape(())])
    yield Case("complex32", [cplx(g, 2, 2).to(torch.complex32)], min_torch="2.1")
    yield Case("empty", [torch.empty(0, 2, dtype=torch.complex64)])
    yield err("float32", [g.randn(3, 4)])


@op("view_as_complex", torch_op="aten.view_as_complex.default")
def view_as_complex(g):
    # Even places: offset 0; odd places: refusals, which an odd offset cannot change.
    yield Case("float32", [g.randn(3, 2)])
    yield err("last dim not 2", [g.randn(3, 4)])
    yield Case("float64 3-d", [g.randn(2, 3, 2, dtype=torch.float64)])
    yield err("last stride not 1", [g.randn(2, 3).t()])
    yield Case("non-contiguous rows", [g.randn(4, 3, 2)[::2]])
    yield err("int32", [g.randint(0, 9, (3, 2), dtype=torch.int32)])
    yield Case("1-d to 0-d", [g.randn(2)])
    yield err("0-d", [g.randn(())])
    yield Case("empty", [torch.empty(0, 2)])
    yield err("stride not divisible by 2", [g.randn(10).as_strided((3, 2), (3, 1))])
    yield Case("float16 to complex32", [g.randn(2, 2, dtype=torch.float16)])


@op("cat", torch_op="aten.cat.default")
def cat(g):
    a, b = g.randn(2, 3), g.randn(4, 3)
    yield Case("dim 0", [[a, b], 0])
    yield Case("negative dim", [[g.randn(2, 3), g.randn(2, 5)], -1])
    yield Case("three, non-contiguous", [[g.randn(3, 2).t(), g.strided(g.randn(2, 4)), g.randn(2, 1)], 1])
    yield Case("float32 and int64 promote to float32", [[a, g.randint(0, 9, (1, 3))], 0])
    yield Case("uint8 and int8 promote to int16", [[g.randint(0, 9, (2,), dtype=torch.uint8),
                                                   g.randint(-9, 9, (3,), dtype=torch.int8)], 0])
    yield Case("float16 and bfloat16 promote to float32", [[g.randn(2, dtype=torch.float16),
                                                           g.randn(2, dtype=torch.bfloat16)], 0])
    yield Case("bool", [[g.randint(0, 2, (3,)).bool(), g.randint(0, 2, (2,)).bool()], 0])
    for dt in (torch.float64, torch.float16, torch.bfloat16, *INTS):
        yield Case(f"{dt}", [[typed(g, (2, 2), dt), typed(g, (2, 3), dt)], 1])
    yield Case("legacy empty 1-d skipped, float64 promotes", [[torch.empty(0), a, torch.empty(0, dtype=torch.float64)],
                                                             1])
    yield Case("only legacy empties", [[torch.empty(0), torch.empty(0, dtype=torch.int32)], 0])
    yield Case("empty along dim", [[a, torch.empty(0, 3)], 0])
    yield Case("channels-last inputs", [[g.randn(1, 2, 3, 3).to(memory_format=torch.channels_last),
                                         g.randn(1, 3, 3, 3).to(memory_format=torch.channels_last)], 1])
    yield Case("mixed layouts: contiguous", [[g.randn(1, 2, 3, 3).to(memory_format=torch.channels_last),
                                              g.randn(1, 3, 3, 3)], 1])
    yield Case("complex64", [[cplx(g, 2, 2), cplx(g, 1, 2)], 0])
    yield Case("float32 and complex64", [[a, cplx(g, 1, 3)], 0])
    yield Case("float64 and complex64 promote to complex128", [[a.double(), cplx(g, 1, 3)], 0])
    yield err("sizes differ off dim", [[a, b], 1])
    yield err("ranks differ", [[a, g.randn(2, 3, 1)], 1])
    yield err("0-d input", [[g.randn(())], 0])
    yield err("dim out of range", [[a], 2])


def pad_cases(g):
    x = g.randn(2, 3)
    yield Case("constant", [x, [1, 2], "constant", None])
    yield Case("constant value, two dims", [x, [1, 0, 2, 1], "constant", 2.5])
    yield Case("constant negative crops", [g.randn(3, 4), [-1, 2, 1, -1], "constant", 1.0])
    yield Case("only negative: a copy", [g.randn(4, 3).t(), [-1, 0], "constant", None])
    yield Case("constant int32 value truncated", [g.randint(0, 9, (3, 4), dtype=torch.int32), [1, 2], "constant", 2.7])
    for dt in (torch.float64, torch.float16, torch.bfloat16, *INTS, torch.bool):
        yield Case(f"constant {dt}", [typed(g, (2, 3), dt), [1, 1, 0, 1], "constant", None])
    yield Case("constant channels-last", [g.randn(1, 3, 4, 5).to(memory_format=torch.channels_last), [1, 1, 1, 1],
                                          "constant", None])
    yield Case("constant non-contiguous", [g.strided(g.randn(3, 4)), [2, 1], "constant", -1.0])
    yield Case("constant empty", [torch.empty(3, 0), [1, 2], "constant", None])
    yield Case("reflect 2-d", [x, [2, 1], "reflect", None])
    yield Case("reflect 3-d batch", [g.randn(2, 2, 5), [3, 4], "reflect", None])
    yield Case("reflect 4-d", [g.randn(1, 2, 4, 5), [1, 2, 3, 1], "reflect", None])
    yield Case("reflect 5-d", [g.randn(1, 1, 3, 3, 4), [1, 1, 2, 0, 1, 2], "reflect", 0.0])
    yield Case("reflect f64 non-contiguous", [g.randn(5, 3, dtype=torch.float64).t(), [2, 2], "reflect", None])
    yield Case("reflect negative", [g.randn(2, 5), [-1, 2], "reflect", None])
    yield Case("replicate 3-d", [g.randn(2, 3, 4), [2, 3], "replicate", None])
    yield Case("replicate 4-d", [g.randn(2, 2, 3, 3), [2, 1, 0, 3], "replicate", None])
    yield Case("replicate 5-d", [g.randn(1, 2, 2, 3, 3), [1, 0, 0, 1, 2, 2], "replicate", None])
    yield Case("replicate negative", [g.randn(2, 5), [-1, 2], "replicate", None])
    yield Case("circular 3-d", [g.randn(2, 2, 4), [2, 3], "circular", None])
    yield Case("circular 4-d", [g.randn(1, 2, 3, 4), [1, 2, 3, 0], "circular", None])
    yield Case("circular 2-d (no batch)", [g.randn(2, 4), [1, 3], "circular", None], min_torch="2.1")
    # torch 2.x: reflect and replicate keep a channels-last layout and take half types, integers and complex.
    yield Case("reflect channels-last", [g.randn(1, 3, 4, 5).to(memory_format=torch.channels_last), [1, 1, 2, 1],
                                         "reflect", None], min_torch="2.1")
    yield Case("replicate channels-last 3d", [g.randn(1, 2, 3, 3, 4).to(memory_format=torch.channels_last_3d),
                                              [1, 1, 1, 0, 0, 2], "replicate", None], min_torch="2.1")
    yield Case("circular channels-last: contiguous", [g.randn(1, 3, 4, 5).to(memory_format=torch.channels_last),
                                                      [1, 1, 2, 1], "circular", None], min_torch="2.1")
    for dt in (torch.float16, torch.bfloat16, torch.int32, torch.complex64):
        for mode in ("reflect", "replicate", "circular"):
            x3 = cplx(g, 2, 2, 4) if dt == torch.complex64 else typed(g, (2, 2, 4), dt)
            yield Case(f"{mode} {dt}", [x3, [2, 1], mode, None], min_torch="2.1")
    yield Case("circular bool", [g.randint(0, 2, (1, 2, 4)).bool(), [1, 2], "circular", None], min_torch="2.1")
    yield err("reflect bool", [g.randint(0, 2, (1, 2, 4)).bool(), [1, 2], "reflect", None], min_torch="2.1")
    yield err("odd pad length", [x, [1, 2, 3], "constant", None])
    yield err("pad longer than the dims", [x, [1, 1, 1, 1, 1, 1], "constant", None])
    yield err("negative output size", [x, [-2, -2], "constant", None])
    yield err("unknown mode", [x, [1, 1], "wrap", None])
    yield err("reflect pad as large as the input", [x, [3, 1], "reflect", None])
    yield err("reflect with a value", [x, [1, 1], "reflect", 1.0])
    yield err("replicate of a 1-d tensor", [g.randn(4), [1, 2], "replicate", None])
    yield err("replicate of an empty dim", [torch.empty(3, 0), [1, 2], "replicate", None])
    yield err("circular wraps twice", [g.randn(1, 2, 3), [4, 1], "circular", None])


@op("pad", torch_op="aten.pad.default")
def pad(g):
    yield from pad_cases(g)


@op("aten_pad", torch_op="aten.pad.default")
def aten_pad(g):
    yield from pad_cases(g)


def resize(self, size, memory_format):
    fmt = None if memory_format is None else FORMATS[memory_format]
    return self.resize_(size, memory_format=fmt) if fmt is not None else self.resize_(size)


@op("resize_", call=resize)
def resize_(g):
    yield Case("smaller, contiguous", [g.randn(3, 4), [2, 5], None], mutated=[0])
    yield Case("same sizes: strides kept", [g.randn(4, 3).t(), [3, 4], None], mutated=[0])
    yield Case("same sizes, contiguous format", [g.randn(4, 3).t(), [3, 4], 0], mutated=[0])
    yield Case("channels-last", [g.randn(2, 3, 4), [1, 2, 3, 2], 2], mutated=[0])
    yield Case("channels-last 3d", [g.randn(40), [1, 2, 2, 2, 2], 3], mutated=[0])
    yield Case("larger: storage grows", [g.randn(2, 3), [4, 5], None], mutated=[0], check="shape")
    yield Case("to empty", [g.randn(2, 3), [0, 3], None], mutated=[0])
    yield Case("int64 to 0-d", [g.randint(0, 9, (3,)), [], None], mutated=[0])
    yield err("negative size", [g.randn(2, 3), [-1], None])
    yield err("preserve format", [g.randn(2, 3), [2], 1])
    yield err("channels-last of 3 dims", [g.randn(2, 3), [2, 3, 1], 2])


def resize_as(self, template, memory_format):
    fmt = None if memory_format is None else FORMATS[memory_format]
    return self.resize_as_(template, memory_format=fmt) if fmt is not None else self.resize_as_(template)


@op("resize_as_", call=resize_as)
def resize_as_(g):
    yield Case("smaller", [g.randn(12), g.randn(2, 3), None], mutated=[0])
    yield Case("preserve: the template's channels-last", [g.randn(12), g.randn(2, 2, 1, 3).to(
        memory_format=torch.channels_last), 1], mutated=[0])
    yield Case("no format: contiguous", [g.randn(12), g.randn(2, 2, 1, 3).to(memory_format=torch.channels_last),
                                         None], mutated=[0])
    yield Case("larger", [g.randn(3), g.randn(4, 4), 0], mutated=[0], check="shape")
    yield err("channels-last of 2 dims", [g.randn(4), g.randn(2, 2), 2])


# torch's zero tensor reads as zeros but its storage holds whatever was there: the cases record a clone of it.
@op("_efficientzerotensor", call=lambda size, dtype, layout, device, pin_memory: aten._efficientzerotensor.default(
    size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory).clone())
def efficientzerotensor(g):
    yield Case("float32 default", [[2, 3], None, None, None, None])
    yield Case("float64", [[4], torch.float64, None, None, None])
    yield Case("int32 0-d", [[], torch.int32, None, None, None])
    yield Case("empty", [[0, 2], torch.float16, None, None, None])
    yield err("negative size", [[-1, 2], None, None, None, None])


@op("aten_full", torch_op="aten.full.default")
def aten_full(g):
    yield Case("float32 default", [[2, 3], 1.5, None, None, None, None])
    yield Case("int32 truncates", [[3], 2.7, torch.int32, None, None, None])
    yield Case("float64 nan", [[2, 2], float("nan"), torch.float64, None, None, None])
    yield Case("bf16 0-d", [[], -3.25, torch.bfloat16, None, None, None])
    yield Case("bool", [[2], 1.0, torch.bool, None, None, None])
    yield Case("empty", [[0, 4], 7.0, None, None, None, None])
    yield err("negative size", [[2, -1], 0.0, None, None, None, None])


@op("aten_new_empty", torch_op="aten.new_empty.default")
def aten_new_empty(g):
    yield Case("self's dtype", [g.randn(3, 4).t(), [2, 3], None, None, None, None], check="shape")
    yield Case("int64", [g.randn(2), [4, 1, 2], torch.int64, None, None, None], check="shape")
    yield Case("empty", [g.randn(2), [0], torch.float16, None, None, None], check="shape")
    yield err("negative size", [g.randn(2), [-3], None, None, None, None])


@op("aten_new_zeros", torch_op="aten.new_zeros.default")
def aten_new_zeros(g):
    yield Case("self's dtype", [g.randn(3, 4).t(), [2, 3], None, None, None, None])
    yield Case("int32", [g.randn(2), [3, 2], torch.int32, None, None, None])
    yield Case("bf16 0-d", [g.randint(0, 4, (2,)), [], torch.bfloat16, None, None, None])
    yield err("negative size", [g.randn(2), [-3], None, None, None, None])


@op("aten_amax", torch_op="aten.amax.default")
def aten_amax(g):
    x = g.distinct(3, 4, 5)
    yield Case("one dim", [x, [1], False])
    yield Case("two dims keepdim", [x, [0, -1], True])
    yield Case("all dims (empty list)", [x, [], False])
    yield Case("non-contiguous", [g.distinct(4, 2, 3).permute(2, 0, 1), [1], False])
    yield Case("NaN wins", [torch.tensor([[1.0, float("nan"), 3.0], [2.0, -1.0, float("inf")]]), [1], False])
    yield Case("0-d", [g.randn(()), [0], True])
    yield Case("empty kept dim", [torch.empty(0, 4), [1], False])
    for dt in (torch.float64, torch.float16, torch.bfloat16, *INTS, torch.bool):
        yield Case(f"{dt}", [typed(g, (3, 5), dt), [0], False])
    yield Case("int64 beyond double", [torch.tensor([2**62 + 1, 2**62, -5]), [0], False])
    yield err("repeated dim", [x, [0, 0], False])
    yield err("empty reduced dim", [torch.empty(0, 4), [0], False])
    yield err("dim out of range", [x, [3], False])
    yield err("complex64", [cplx(g, 2, 2), [0], False])


@op("abs", torch_op="aten.abs.default")
def abs_(g):
    for dt in FLOATS:
        yield Case(f"{dt}", [g.randn(3, 4, dtype=dt)])
    for dt in INTS:
        yield Case(f"{dt}", [typed(g, (2, 5), dt)])
    yield Case("int8 -128 wraps", [torch.tensor([-128, -1, 127], dtype=torch.int8)])
    yield Case("edge values", [torch.tensor([-0.0, float("-inf"), float("nan"), -3.5])])
    yield Case("non-contiguous keeps the layout", [g.randn(3, 4).t()])
    yield Case("non-dense", [g.strided(g.randn(3, 4))])
    yield Case("empty", [torch.empty(0, 3)])
    yield Case("0-d", [g.randn(())])
    yield Case("complex64: magnitude", [cplx(g, 3, 3)])
    yield Case("complex128: magnitude", [cplx(g, 4, dtype=torch.complex128)])
    yield Case("complex32: magnitude", [cplx(g, 4).to(torch.complex32)], min_torch="2.1")
    yield err("bool", [g.randint(0, 2, (3,)).bool()])


@op("angle", torch_op="aten.angle.default")
def angle(g):
    yield Case("float32 edges", [torch.tensor([-0.0, -1.0, float("-inf"), float("nan"), 0.0, 2.0])])
    for dt in (torch.float64, torch.float16, torch.bfloat16):
        yield Case(f"{dt}", [g.randn(2, 3, dtype=dt)])
    yield Case("int64 gives float32", [torch.tensor([-3, 0, 4])])
    yield Case("uint8", [g.randint(0, 9, (4,), dtype=torch.uint8)])
    yield Case("bool", [g.randint(0, 2, (4,)).bool()])
    yield Case("complex64", [cplx(g, 3, 4)])
    yield Case("complex128 edges", [torch.tensor([complex(-1, -0.0), complex(0, 0), complex(-2, 0), complex(0, -1)],
                                                 dtype=torch.complex128)])
    yield Case("non-contiguous", [g.randn(4, 3).t()])
    yield Case("empty", [torch.empty(2, 0)])
    yield err("complex32", [torch.ones(3, dtype=torch.complex32)], min_torch="2.1")


@op("polar", torch_op="aten.polar.default")
def polar(g):
    yield Case("float32", [g.rand(3, 4), g.randn(3, 4)])
    yield Case("float64", [g.rand(2, 3, dtype=torch.float64), g.randn(2, 3, dtype=torch.float64)])
    yield Case("broadcast", [g.rand(3, 1), g.randn(4)])
    yield Case("transposed inputs keep the layout", [g.rand(4, 3).t(), g.randn(4, 3).t()])
    yield Case("empty", [torch.empty(0, 2), torch.empty(0, 2)])
    yield err("dtypes differ", [g.rand(3), g.randn(3, dtype=torch.float64)])
    yield err("int64", [g.randint(0, 4, (3,)), g.randint(0, 4, (3,))])
    yield err("shapes do not broadcast", [g.rand(3), g.randn(4)])


@op("gcd", torch_op="aten.gcd.default")
def gcd(g):
    yield Case("int64 signs and zeros", [torch.tensor([4, -6, 0, 7, -9, 0]), torch.tensor([6, 4, 0, -14, 0, 5])])
    yield Case("int8 -128", [torch.tensor([-128, 0, -128, 12], dtype=torch.int8),
                             torch.tensor([0, -128, -128, -18], dtype=torch.int8)])
    for dt in INTS:
        yield Case(f"{dt}", [typed(g, (3, 4), dt), typed(g, (3, 4), dt)])
    yield Case("int8 with int32 promotes", [g.randint(0, 50, (4,), dtype=torch.int8),
                                            g.randint(0, 500, (4,), dtype=torch.int32)])
    yield Case("uint8 with int8 promotes to int16", [g.randint(0, 200, (4,), dtype=torch.uint8),
                                                     g.randint(-100, 100, (4,), dtype=torch.int8)])
    yield Case("broadcast", [g.randint(0, 90, (3, 1)), g.randint(0, 90, (4,))])
    yield Case("transposed inputs keep the layout", [g.randint(0, 90, (4, 3)).t(), g.randint(0, 90, (4, 3)).t()])
    yield Case("empty", [torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int64)])
    yield err("float32", [g.randn(3), g.randn(3)])
    yield err("bool", [g.randint(0, 2, (3,)).bool(), g.randint(0, 2, (3,)).bool()])
