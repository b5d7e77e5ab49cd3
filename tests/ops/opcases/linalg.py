"""Linear algebra: products (addmv, addbmm, _addmm_activation, _int_mm, _trilinear), distances (_cdist_forward,
_pdist_forward), the LAPACK-backed ops (cholesky_solve, cholesky_inverse, triangular_solve, geqrf, ormqr,
lu_unpack), _fused_rms_norm, _scaled_mm on float8, and the 4-bit dynamic-quantization pair."""

import torch

from ..spec import Case, err, op

aten = torch.ops.aten
HALF = (torch.float16, torch.bfloat16)
REAL = (torch.float32, torch.float64)
# LAPACK results: torch's LAPACK (MKL in torch's wheels) and OpenBLAS's round differently in float32.
LAPACK_F32 = {"rtol": 1e-4, "atol": 1e-5}


def lapack_tol(dt):
    return LAPACK_F32 if dt == torch.float32 else {}


def spd(g, *batch, n, dt):
    """A well-conditioned symmetric positive definite batch."""
    m = g.randn(*batch, n, n, dtype=torch.float64)
    return (m @ m.mT + n * torch.eye(n, dtype=torch.float64)).to(dt)


@op("addmv", call=lambda s, m, v, beta, alpha: aten.addmv(s, m, v, beta=beta, alpha=alpha))
def addmv(g):
    for dt in REAL:
        yield Case(f"{dt} beta 0.5 alpha 2", [g.randn(3, dtype=dt), g.randn(3, 4, dtype=dt), g.randn(4, dtype=dt), 0.5, 2.0])
    for dt in HALF:
        yield Case(f"{dt}", [g.randn(3, dtype=dt), g.randn(3, 5, dtype=dt), g.randn(5, dtype=dt), 1.0, 1.0],
                   rtol=2e-2, atol=2e-2, min_torch="2.1")
    yield Case("int64", [g.randint(-5, 5, (3,)), g.randint(-5, 5, (3, 4)), g.randint(-5, 5, (4,)), 2, 3])
    yield Case("self broadcast from one element", [g.randn(1), g.randn(4, 3), g.randn(3), 1.0, 1.0])
    yield Case("transposed matrix, strided vector", [g.randn(3), g.randn(4, 3).t(), g.strided(g.randn(4)), 1.0, -1.0])
    yield Case("beta 0 ignores NaN in self", [torch.full((3,), float("nan")), g.randn(3, 2), g.randn(2), 0.0, 1.0])
    yield Case("no rows", [torch.empty(0), torch.empty(0, 3), g.randn(3), 1.0, 1.0])
    yield err("vector size differs", [g.randn(3), g.randn(3, 4), g.randn(5), 1.0, 1.0])
    yield err("matrix is 3-D", [g.randn(3), g.randn(2, 3, 4), g.randn(4), 1.0, 1.0])


@op("addbmm", call=lambda s, b1, b2, beta, alpha: aten.addbmm(s, b1, b2, beta=beta, alpha=alpha))
def addbmm(g):
    for dt in REAL:
        yield Case(f"{dt} bias row", [g.randn(5, dtype=dt), g.randn(3, 2, 4, dtype=dt), g.randn(3, 4, 5, dtype=dt),
                                     0.5, 1.5])
    yield Case("bf16", [g.randn(2, 3, dtype=torch.bfloat16), g.randn(2, 2, 4, dtype=torch.bfloat16),
                        g.randn(2, 4, 3, dtype=torch.bfloat16), 1.0, 1.0], rtol=2e-2, atol=5e-2, min_torch="2.1")
    yield Case("int32", [g.randint(-3, 3, (2, 2), dtype=torch.int32), g.randint(-3, 3, (3, 2, 4), dtype=torch.int32),
                         g.randint(-3, 3, (3, 4, 2), dtype=torch.int32), 1, 2])
    yield Case("transposed operands and self", [g.randn(5, 3).t(), g.randn(2, 4, 3).mT, g.randn(2, 5, 4).mT, 1.0, -1.0])
    yield Case("no batches: beta * self", [g.randn(3, 5), torch.empty(0, 3, 4), torch.empty(0, 4, 5), 0.5, 1.0])
    yield Case("beta 0 ignores NaN", [torch.full((2, 2), float("nan")), g.randn(2, 2, 3), g.randn(2, 3, 2), 0.0, 1.0])
    yield err("batch counts differ", [g.randn(3, 5), g.randn(2, 3, 4), g.randn(3, 4, 5), 1.0, 1.0])
    yield err("inner sizes differ", [g.randn(3, 5), g.randn(2, 3, 4), g.randn(2, 3, 5), 1.0, 1.0])


@op("_addmm_activation",
    call=lambda s, a, b, beta, alpha, gelu: aten._addmm_activation(s, a, b, beta=beta, alpha=alpha, use_gelu=gelu))
def addmm_activation(g):
    for gelu in (False, True):
        for dt in REAL:
            yield Case(f"{dt} gelu={gelu}", [g.randn(5, dtype=dt), g.randn(3, 4, dtype=dt), g.randn(4, 5, dtype=dt),
                                            0.5, 2.0, gelu])
        yield Case(f"bf16 gelu={gelu}", [g.randn(3, dtype=torch.bfloat16), g.randn(2, 4, dtype=torch.bfloat16),
                                        g.randn(4, 3, dtype=torch.bfloat16), 1.0, 1.0, gelu],
                   rtol=2e-2, atol=2e-2, min_torch="2.1")
    yield Case("full self, transposed mat1", [g.randn(3, 2), g.randn(4, 3).t(), g.randn(4, 2), 1.0, 1.0, False])
    yield Case("empty K", [g.randn(2, 3), torch.empty(2, 0), torch.empty(0, 3), 1.0, 1.0, True])
    yield err("shapes cannot be multiplied", [g.randn(3), g.randn(2, 4), g.randn(5, 3), 1.0, 1.0, False])


@op("_int_mm_out", call=lambda out, a, b: aten._int_mm.out(a, b, out=out), min_torch="2.3")
def int_mm_out(g):
    i8 = torch.int8
    yield Case("int8 extremes", [torch.empty(5, 6, dtype=torch.int32), g.randint(-128, 128, (5, 17), dtype=i8),
                                 g.randint(-128, 128, (17, 6), dtype=i8)], mutated=[0])
    yield Case("transposed mat2", [torch.empty(4, 3, dtype=torch.int32), g.randint(-128, 128, (4, 8), dtype=i8),
                                   g.randint(-128, 128, (3, 8), dtype=i8).t()], mutated=[0])
    yield Case("K = 0", [torch.empty(2, 3, dtype=torch.int32), torch.empty(2, 0, dtype=i8), torch.empty(0, 3, dtype=i8)],
               mutated=[0])
    if g.device == "cuda":  # torch's CUDA kernel: more than 16 rows, sizes multiples of 8
        yield Case("32x32 by 32x16", [torch.empty(32, 16, dtype=torch.int32), g.randint(-128, 128, (32, 32), dtype=i8),
                                      g.randint(-128, 128, (32, 16), dtype=i8)], mutated=[0])
        yield Case("column-major mat2", [torch.empty(24, 8, dtype=torch.int32), g.randint(-128, 128, (24, 64), dtype=i8),
                                         g.randint(-128, 128, (8, 64), dtype=i8).t()], mutated=[0])
    yield err("self not int8", [torch.empty(2, 2, dtype=torch.int32), g.randint(-5, 5, (2, 3), dtype=torch.int32),
                                g.randint(-5, 5, (3, 2), dtype=i8)])
    yield err("inner sizes differ", [torch.empty(2, 2, dtype=torch.int32), g.randint(-5, 5, (2, 3), dtype=i8),
                                     g.randint(-5, 5, (4, 2), dtype=i8)])


@op("_trilinear", torch_op="aten._trilinear.default")
def trilinear(g):
    for dt in REAL:
        # nn.functional.bilinear's lowering: x1 [B, I], weight [O, I, J], x2 [B, J] -> [B, O]
        yield Case(f"{dt} bilinear", [g.randn(4, 3, dtype=dt), g.randn(2, 3, 5, dtype=dt), g.randn(4, 5, dtype=dt),
                                     [1, 3], [0], [1, 2], [2, 3], 1])
    yield Case("triple product summed over the last dim", [g.randn(3, 4), g.randn(3, 4), g.randn(3, 4), [], [], [], [1], 0])
    yield Case("nothing summed", [g.randn(2, 3), g.randn(2, 3), g.strided(g.randn(2, 3)), [], [], [], [], 0])
    yield Case("empty batch", [torch.empty(0, 3), g.randn(2, 3, 5), torch.empty(0, 5), [1, 3], [0], [1, 2], [2, 3], 1])
    yield err("dims do not add up", [g.randn(4, 3), g.randn(2, 3, 5), g.randn(4, 5), [1], [0], [1, 2], [2, 3], 1])


@op("_cdist_forward", torch_op="aten._cdist_forward.default")
def cdist_forward(g):
    for dt in REAL:
        for p in (0.0, 1.0, 2.0, 3.5, float("inf")):
            x1, x2 = g.randn(2, 4, 3, dtype=dt), g.randn(5, 3, dtype=dt)
            if p == 0.0:  # integers, so some coordinates are equal
                x1, x2 = x1.round(), x2.round()
            yield Case(f"{dt} p={p}", [x1, x2, p, None], rtol=1e-5)
    # p = 2 through the product (mode 1, or more than 25 rows with mode 0): less exact, as in torch.
    yield Case("p=2 mode 1", [g.randn(3, 4), g.randn(6, 4), 2.0, 1], rtol=1e-4, atol=1e-4)
    yield Case("p=2 mode 0, 30 rows", [g.randn(30, 3), g.randn(4, 3), 2.0, 0], rtol=1e-4, atol=1e-4)
    yield Case("p=2 mode 2, 30 rows", [g.randn(30, 3), g.randn(4, 3), 2.0, 2])
    yield Case("f64 mode 1 broadcast batch", [g.randn(2, 1, 5, 3, dtype=torch.float64),
                                             g.randn(3, 4, 3, dtype=torch.float64), 2.0, 1], rtol=1e-9, atol=1e-9)
    yield Case("non-contiguous", [g.randn(3, 5).t(), g.strided(g.randn(2, 3)), 1.0, None])
    yield Case("no columns", [torch.empty(3, 0), torch.empty(2, 0), 2.0, None])
    yield Case("no rows", [torch.empty(0, 4), g.randn(2, 4), 1.0, None])
    yield err("columns differ", [g.randn(3, 4), g.randn(2, 5), 2.0, None])
    yield err("negative p", [g.randn(3, 4), g.randn(2, 4), -1.0, None])
    yield err("1-D input", [g.randn(4), g.randn(2, 4), 2.0, None])
    yield err("integer input", [g.randint(0, 5, (3, 4)), g.randint(0, 5, (2, 4)), 2.0, None])


@op("_pdist_forward", torch_op="aten._pdist_forward.default")
def pdist_forward(g):
    for dt in REAL:
        for p in (0.0, 1.0, 2.0, 1.5, float("inf")):
            x = g.randn(6, 4, dtype=dt)
            yield Case(f"{dt} p={p}", [x.round() if p == 0.0 else x, p], rtol=1e-5)
    yield Case("one row", [g.randn(1, 3), 2.0])
    yield Case("no columns", [torch.empty(4, 0), 2.0])
    yield err("non-contiguous", [g.randn(4, 5).t(), 2.0])


@op("cholesky_solve", torch_op="aten.cholesky_solve.default")
def cholesky_solve(g):
    for dt in REAL:
        for upper in (False, True):
            a = torch.linalg.cholesky(spd(g, n=4, dt=torch.float64))
            a = (a.mT if upper else a).to(dt)
            yield Case(f"{dt} upper={upper}", [g.randn(4, 3, dtype=dt), a, upper], **lapack_tol(dt))
    a = torch.linalg.cholesky(spd(g, 2, 1, n=3, dt=torch.float64))
    yield Case("broadcast batches", [g.randn(3, 3, 2, dtype=torch.float64), a, False])
    yield Case("transposed b", [g.randn(2, 4).t(), torch.linalg.cholesky(spd(g, n=4, dt=torch.float32)), False],
               **LAPACK_F32)
    yield Case("no right-hand sides", [torch.empty(3, 0), torch.linalg.cholesky(spd(g, n=3, dt=torch.float32)), False])
    yield err("sizes differ", [g.randn(3, 2), torch.linalg.cholesky(spd(g, n=4, dt=torch.float32)), False])
    yield err("dtypes differ", [g.randn(3, 2), torch.linalg.cholesky(spd(g, n=3, dt=torch.float64)), False])


@op("cholesky_inverse", torch_op="aten.cholesky_inverse.default")
def cholesky_inverse(g):
    for dt in REAL:
        for upper in (False, True):
            a = torch.linalg.cholesky(spd(g, n=4, dt=torch.float64))
            yield Case(f"{dt} upper={upper}", [(a.mT if upper else a).to(dt), upper], **lapack_tol(dt))
    yield Case("batch", [torch.linalg.cholesky(spd(g, 2, n=3, dt=torch.float64)), False])
    yield Case("non-contiguous", [torch.linalg.cholesky(spd(g, n=3, dt=torch.float32)).t(), True], **LAPACK_F32)
    yield Case("empty", [torch.empty(0, 0), False])
    yield err("singular", [torch.tensor([[2.0, 0.0], [1.0, 0.0]]), False])
    yield err("not square", [g.randn(3, 4), False])


@op("triangular_solve", torch_op="aten.triangular_solve.default")
def triangular_solve(g):
    for dt in REAL:
        for upper in (False, True):
            for transpose in (False, True):
                for unit in (False, True):
                    a = g.randn(3, 3, dtype=dt) + 3 * torch.eye(3, dtype=dt)
                    yield Case(f"{dt} upper={upper} transpose={transpose} unit={unit}",
                               [g.randn(3, 2, dtype=dt), a, upper, transpose, unit], **lapack_tol(dt))
    yield Case("broadcast batches", [g.randn(2, 1, 3, 4, dtype=torch.float64),
                                     g.randn(3, 3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64),
                                     True, False, False])
    yield Case("transposed inputs", [g.randn(4, 3).t(), (g.randn(3, 3) + 3 * torch.eye(3)).t(), False, False, False],
               **LAPACK_F32)
    yield Case("no right-hand sides", [torch.empty(3, 0), g.randn(3, 3), True, False, False])
    yield err("sizes differ", [g.randn(3, 2), g.randn(4, 4), True, False, False])


@op("geqrf", torch_op="aten.geqrf.default")
def geqrf(g):
    for dt in REAL:
        yield Case(f"{dt} tall", [g.randn(5, 3, dtype=dt)], **lapack_tol(dt))
        yield Case(f"{dt} wide", [g.randn(3, 5, dtype=dt)], **lapack_tol(dt))
    yield Case("batch, non-contiguous", [g.randn(2, 3, 4).mT], **LAPACK_F32)
    yield Case("empty", [torch.empty(0, 3)])
    yield err("1-D", [g.randn(4)])


@op("ormqr", torch_op="aten.ormqr.default")
def ormqr(g):
    for dt in REAL:
        a, tau = torch.geqrf(g.randn(5, 3, dtype=dt))
        for left in (True, False):
            for transpose in (False, True):
                c = g.randn(5, 2, dtype=dt) if left else g.randn(2, 5, dtype=dt)
                yield Case(f"{dt} left={left} transpose={transpose}", [a, tau, c, left, transpose], **lapack_tol(dt))
    a, tau = torch.geqrf(g.randn(2, 4, 3))
    yield Case("batch", [a, tau, g.randn(2, 4, 5), True, False], **LAPACK_F32)
    yield err("fewer reflectors than min(rows, columns)", [a, tau[..., :2].contiguous(), g.randn(2, 4, 5), True, False],
              min_torch="2.1")  # torch 1.13 applied the reflectors given
    a, tau = torch.geqrf(g.randn(4, 3))
    yield Case("non-contiguous other", [a, tau, g.randn(3, 4).t(), True, True], **LAPACK_F32)
    yield err("other rows differ", [a, tau, g.randn(5, 2), True, False])
    yield err("tau longer than input's columns", [a, g.randn(4), g.randn(4, 2), True, False])


@op("lu_unpack", torch_op="aten.lu_unpack.default")
def lu_unpack(g):
    for dt in REAL:
        for shape in ((4, 4), (2, 5, 3), (3, 5)):
            lu, piv = torch.linalg.lu_factor(g.randn(*shape, dtype=dt))
            yield Case(f"{dt} {list(shape)}", [lu, piv, True, True])
    lu, piv = torch.linalg.lu_factor(g.randn(3, 3))
    yield Case("only the pivots", [lu, piv, False, True])
    yield Case("only the data", [lu, piv, True, False])
    yield Case("non-contiguous LU", [lu.t().contiguous().t(), piv, True, True])
    yield err("int64 pivots", [lu, piv.long(), True, True])
    yield err("pivot out of range", [lu, torch.tensor([1, 2, 4], dtype=torch.int32), True, True])


@op("_fused_rms_norm", torch_op="aten._fused_rms_norm.default", min_torch="2.8")
def fused_rms_norm(g):
    for dt in (*REAL, *HALF):
        tol = {"rtol": 2e-2, "atol": 2e-2} if dt in HALF else {}
        yield Case(f"{dt} weight, eps", [g.randn(2, 3, 8, dtype=dt), [8], g.randn(8, dtype=dt), 1e-5], **tol)
        yield Case(f"{dt} no weight, default eps", [g.randn(4, 6, dtype=dt), [6], None, None], **tol)
    yield Case("two normalized dims, non-contiguous", [g.randn(5, 4, 3).transpose(0, 2), [4, 5], g.randn(4, 5), 1e-6])
    yield Case("bf16 input, float32 weight", [g.randn(3, 8, dtype=torch.bfloat16), [8], g.randn(8), 1e-5],
               rtol=2e-2, atol=2e-2)
    yield Case("zeros", [torch.zeros(2, 4), [4], None, 1e-6])
    yield Case("empty rows", [torch.empty(0, 4), [4], None, None])
    yield err("weight shape differs", [g.randn(2, 4), [4], g.randn(5), None])
    # torch 2.11 reduces over the last len(normalized_shape) dims without comparing their sizes
    yield Case("normalized_shape sizes are not compared", [g.randn(2, 4), [2], None, None])


def _fp8(g, rows, cols, dt, lo=-4.0, hi=4.0):
    return (g.rand(rows, cols) * (hi - lo) + lo).to(dt)


def _f8(name):
    """torch's float8 dtype; uint8 in a torch without float8 (1.13), where the cases are only counted
    (make_cases.py --count), never run."""
    return getattr(torch, name, torch.uint8)


@op("_scaled_mm", torch_op="aten._scaled_mm.default", min_torch="2.5")
def scaled_mm(g):
    e4m3, e5m2 = _f8("float8_e4m3fn"), _f8("float8_e5m2")
    f8 = (e4m3, e5m2)
    one = torch.tensor(1.0)
    for dt in f8:
        a, b = _fp8(g, 3, 16, dt), _fp8(g, 16, 4, dt)
        yield Case(f"{dt} tensor-wise to float32", [a, b, torch.tensor(0.5), torch.tensor(2.0), None, None,
                                                    torch.float32, False], rtol=1e-6)
        yield err(f"{dt} row-wise scales (torch 2.11's CPU kernel takes one scale each)",
                  [a, b, g.rand(3, 1) + 0.5, g.rand(1, 4) + 0.5, None, None, torch.float32, False])
        yield Case(f"{dt} bias, to bfloat16", [a, b, torch.tensor(0.5), torch.tensor(1.5),
                                               g.randn(4, dtype=torch.bfloat16), None, torch.bfloat16, False],
                   rtol=1.6e-2, atol=1e-2)
    a, b = _fp8(g, 4, 16, e4m3), _fp8(g, 8, 16, e4m3).t()
    yield Case("e4m3fn out with scale_result, transposed mat2", [a, b, one, one, None, torch.tensor(4.0),
                                                                 e4m3, False])
    yield Case("mixed e4m3fn x e5m2 to float16", [a, _fp8(g, 16, 2, e5m2), one, one, None, None,
                                                  torch.float16, False], rtol=1e-3, atol=1e-3)
    if g.device == "cuda":  # cuBLASLt's fp8 products: sizes multiples of 16, mat2 column-major, no e5m2 x e5m2
        # Hopper's fp8 tensor cores sum in less than float32's precision: 2e-4 relative off an exact sum.
        a, b = _fp8(g, 32, 32, e4m3), _fp8(g, 16, 32, e4m3).t()
        yield Case("cuda: e4m3fn to float32", [a, b, torch.tensor(0.5), torch.tensor(2.0), None, None, torch.float32,
                                               False], rtol=1e-3, atol=1e-2)
        yield Case("cuda: e4m3fn bias, to bfloat16", [a, b, one, one, g.randn(16, dtype=torch.bfloat16), None,
                                                      torch.bfloat16, False], rtol=1.6e-2, atol=1e-2)
        yield Case("cuda: e4m3fn x e5m2 to float16", [a, _fp8(g, 16, 32, e5m2).t(), one, one, None, None,
                                                      torch.float16, False], rtol=1e-3, atol=1e-3)
    yield err("float32 operands", [g.randn(2, 3), g.randn(3, 2), one, one, None, None, torch.float32, False])
    yield err("shapes cannot be multiplied", [a, _fp8(g, 15, 2, e4m3), one, one, None, None,
                                              torch.float32, False])


@op("_scaled_mm_out",
    call=lambda out, a, b, sa, sb, bias, sr, od, fast: aten._scaled_mm.out(a, b, sa, sb, bias, sr, od, fast, out=out),
    min_torch="2.5")
def scaled_mm_out(g):
    e4m3 = _f8("float8_e4m3fn")
    a, b = _fp8(g, 3, 16, e4m3), _fp8(g, 16, 5, e4m3)
    yield Case("tensor-wise into float32", [torch.empty(3, 5), a, b, torch.tensor(0.25), torch.tensor(3.0), g.randn(5),
                                            None, torch.float32, False], mutated=[0])
    # A contiguous out: torch 2.11's oneDNN kernel (CPUs with AMX) writes a transposed out as if it were contiguous.
    yield Case("into a bfloat16 out", [torch.empty(3, 5, dtype=torch.bfloat16), a, b, torch.tensor(2.0),
                                       torch.tensor(0.5), None, None, torch.bfloat16, False],
               mutated=[0], rtol=1.6e-2, atol=1e-2)
    if g.device == "cuda":  # cuBLASLt's sizes: multiples of 16, mat2 column-major
        a, b = _fp8(g, 16, 32, e4m3), _fp8(g, 16, 32, e4m3).t()
        yield Case("cuda: into a float32 out", [torch.empty(16, 16), a, b, torch.tensor(0.25), torch.tensor(3.0), None,
                                                None, torch.float32, False], mutated=[0], rtol=1e-3, atol=1e-2)
    yield err("out_dtype differs from out's", [torch.empty(3, 5), a, b, torch.tensor(1.0), torch.tensor(1.0), None,
                                               None, torch.bfloat16, False])


def _packed(g, n, k, bs, bias=False):
    w = g.randint(0, 256, (n, k // 2), dtype=torch.uint8)
    s = g.rand(n, k // bs) * 0.1 + 0.01
    b = g.randn(n) if bias else None
    return w, s, b


def _pack(w, s, b):
    """What _dyn_quant_pack_4bit_weight gives on every CPU but Arm ones with KleidiAI: the weights, scales and
    bias as one float32 vector (built here so the cases can be counted with a torch that lacks the op)."""
    return torch.cat([w.reshape(-1).float(), s.reshape(-1).float()] + ([b.reshape(-1).float()] if b is not None else []))


@op("_dyn_quant_pack_4bit_weight", torch_op="aten._dyn_quant_pack_4bit_weight.default", min_torch="2.6",
    devices=("cpu",))
def dyn_quant_pack(g):
    w, s, _ = _packed(g, 4, 64, 32)
    yield Case("group-wise", [w, s, None, 32, 64, 4])
    w, s, b = _packed(g, 3, 16, 16, bias=True)
    yield Case("channel-wise with bias", [w, s, b, 16, 16, 3])
    yield err("weights not uint8", [w.to(torch.int32), s, None, 16, 16, 3])
    yield err("block size 8 below in_features, not a multiple of 32", [w, s, None, 8, 16, 3])


@op("_dyn_quant_matmul_4bit", torch_op="aten._dyn_quant_matmul_4bit.default", min_torch="2.6", devices=("cpu",))
def dyn_quant_matmul(g):
    w, s, _ = _packed(g, 5, 64, 32)
    yield Case("float32 group-wise", [g.randn(3, 64), _pack(w, s, None), 32, 64, 5], rtol=1e-5, atol=1e-5)
    w, s, b = _packed(g, 3, 64, 32, bias=True)
    yield Case("float32 group-wise with bias", [g.randn(2, 64), _pack(w, s, b), 32, 64, 3], rtol=1e-5, atol=1e-5)
    w, s, b = _packed(g, 4, 32, 32, bias=True)
    packed = _pack(w, s, b)
    yield Case("float32 channel-wise with bias", [g.randn(2, 32), packed, 32, 32, 4],
               rtol=1e-5, atol=1e-5)
    yield Case("bfloat16 channel-wise with bias", [g.randn(2, 32, dtype=torch.bfloat16), packed, 32, 32, 4])
    yield Case("all-positive rows", [g.rand(2, 32) + 0.1, packed, 32, 32, 4], rtol=1e-5, atol=1e-5)
    yield err("float16 input", [g.randn(2, 32, dtype=torch.float16), packed, 32, 32, 4])
    yield err("block size not a multiple of 32", [g.randn(2, 32), packed, 16, 32, 4])
