"""mpspack.load() and Model: every rebuilt-bookworm fixture built, opened, verified, loaded and run from Python
on the CPU with no mpspack executable reachable, its outputs matching the recorded ones; inputs and outputs by
name; torch tensors in and out by DLPack; the bench report; and bad input raising one clear error naming the file
or argument. The CUDA test runs where a GPU is (the device machine) and says why it skipped elsewhere."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import mpspack
from conftest import SOURCE_DIR, missing

TORCH_DTYPES = {"torch.float32": np.dtype("<f4"), "torch.int64": np.dtype("<i8")}
# `mpspack run`'s default tolerances for float32 (docs/CLI.md).
RTOL, ATOL = 1e-4, 1e-5


def cases(directory: pathlib.Path) -> list[dict]:
    return json.loads((directory / "manifest.json").read_text())["cases"]


@pytest.fixture(scope="module")
def rebuilt(fixtures) -> pathlib.Path:
    return fixtures / "rebuilt-bookworm"


def tensor(path: pathlib.Path, spec: dict) -> np.ndarray:
    return np.fromfile(path, TORCH_DTYPES[spec["dtype"]]).reshape(spec["shape"])


@pytest.fixture
def no_executable(monkeypatch, tmp_path):
    """No mpspack executable can be found or started: PATH holds none, MPSPACK_BIN is unset, and the package's
    own lookup of one fails."""
    monkeypatch.delenv("MPSPACK_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    def refuse(*args, **kwargs):
        raise AssertionError("the mpspack executable was looked for")
    monkeypatch.setattr(mpspack.cli, "find_executable", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)


def test_every_rebuilt_fixture_from_python_alone(rebuilt, tmp_path, no_executable):
    names = [c["dir"] for c in cases(rebuilt)]
    assert len(names) == 6, names
    for case in cases(rebuilt):
        d = rebuilt / case["dir"]
        out = tmp_path / f"{case['dir']}.mpk"
        blob = d / "weights.blob"
        report = mpspack.build(d / "model.so", out, weights=[blob] if blob.exists() else [])
        assert report["output"] == str(out) and report["libraries"] == 1
        x = tensor(d / "input0.bin", case["inputs"][0])
        want = tensor(d / "expected0.bin", case["outputs"][0])
        with mpspack.open(out) as c:
            assert c.verify()["ok"]
            lib = c.libraries[0]
            assert lib["flavour"] == ("external-blob" if blob.exists() else "embedded"), case["dir"]
            weights = c.weights_bytes()
            if blob.exists():
                assert bytes(weights) == blob.read_bytes()
            with pytest.raises(mpspack.NoConstantsTable):
                c.constants()  # a plain model.so carries no table
            with mpspack.load(c, device="cpu") as model:  # from the open container
                assert model.device == "cpu" and model.library == lib["name"]
                assert [s.name for s in model.inputs] == ["input0"] and len(model.outputs) == 1
                y, = model(x)
                assert y.dtype == want.dtype and y.shape == want.shape, case["dir"]
                assert np.allclose(y, want, rtol=RTOL, atol=ATOL), case["dir"]
                again, = model(x)  # the loaded model is reused
                assert np.array_equal(again, y)
        with mpspack.load(out) as model:  # from the path; device: the library's own
            assert np.allclose(model.run({"input0": x})["output0"], want, rtol=RTOL, atol=ATOL), case["dir"]


def test_signature_of_a_recorded_example_and_run_by_name(built, tiny_so):
    e = tiny_so.parent
    x = np.fromfile(e / "input0.bin", "<f4").reshape(4, 16)
    want = np.fromfile(e / "expected0.bin", "<f4").reshape(4, 8)
    with mpspack.load(built["tiny"]) as model:
        assert model.inputs == [mpspack.TensorSpec("input0", "f32", (4, 16))]
        assert model.outputs == [mpspack.TensorSpec("output0", "f32", (4, 8))]
        outputs = model.run({"input0": x})
        assert list(outputs) == ["output0"] and np.allclose(outputs["output0"], want, rtol=RTOL, atol=ATOL)
        assert np.allclose(model.run([x])[0], want, rtol=RTOL, atol=ATOL)
        # Inputs that are not dense, little-endian arrays hold the same values: converted first.
        y, = model(np.asfortranarray(x).astype(">f4"))
        assert np.allclose(y, want, rtol=RTOL, atol=ATOL)
        y, = model(x.tolist())
        assert np.allclose(y, want, rtol=RTOL, atol=ATOL)
        assert y.flags.writeable  # the caller's to keep
    assert np.allclose(y, want, rtol=RTOL, atol=ATOL)  # outputs outlive the model
    assert "closed" in repr(model)


def test_bench_returns_the_report(built, tiny_so):
    """Model.bench() is `run --bench --json`'s report (docs/schema/bench.schema.json), for the options given."""
    from test_json_outputs import errors
    x = np.fromfile(tiny_so.parent / "input0.bin", "<f4").reshape(4, 16)
    with mpspack.load(built["tiny"]) as model:
        report = model.bench(iterations=5, warmup=1, percentiles=[99.9])
        assert errors(report, "bench") == []
        assert report["iterations"] == 5 and report["warmup_runs"] == 1 and report["checked"] and report["ok"]
        assert report["container"] == str(built["tiny"]) and report["percentiles_ms"]
        report = model.bench(iterations=2, inputs=[x], expect=[model(x)[0]])  # arrays: temporary .npy files
        assert errors(report, "bench") == [] and report["checked"] and report["ok"]
        with pytest.raises(mpspack.CheckFailed) as e:
            model.bench(iterations=2, inputs=[x], expect=[model(x)[0] + 1])
        assert isinstance(e.value, ValueError) and e.value.report["ok"] is False


def test_bad_input_is_one_clear_error(built, tmp_path, tiny_so):
    absent = tmp_path / "absent.mpk"
    with pytest.raises(FileNotFoundError) as e:
        mpspack.load(absent)
    assert isinstance(e.value, mpspack.NotFoundError) and str(e.value).startswith(f"{absent}: ")
    damaged = tmp_path / "damaged.mpk"
    damaged.write_bytes(built["tiny"].read_bytes()[:-1])
    with pytest.raises(mpspack.FormatError, match=rf"^{damaged}: rule H6: "):
        mpspack.load(damaged)
    with pytest.raises(mpspack.FormatError, match=rf"^{tiny_so}: "):
        mpspack.load(tiny_so)  # a model library, not a container
    with pytest.raises(ValueError, match="nope"):
        mpspack.load(built["tiny"], library="nope")
    with pytest.raises(mpspack.InvalidArgument, match="--device tpu: expected cpu, cuda or cuda:N"):
        mpspack.load(built["tiny"], device="tpu")
    with pytest.raises(mpspack.UnsupportedError, match="compiled for cpu; it cannot run on --device cuda"):
        mpspack.load(built["tiny"], device="cuda")

    x = np.fromfile(tiny_so.parent / "input0.bin", "<f4").reshape(4, 16)
    model = mpspack.load(built["tiny"])
    with pytest.raises(ValueError, match=rf"^{built['tiny']}: library 'model': takes 1 input, 2 given$"):
        model(x, x)
    with pytest.raises(ValueError, match="takes 1 input, 0 given"):
        model()
    for wrong, what in ((x.astype(np.float64), "dtype"), (x[:2], "shape"), (x.reshape(8, 8), "shape")):
        with pytest.raises(mpspack.InvalidArgument) as err:
            model(wrong)
        assert isinstance(err.value, ValueError) and "input" in str(err.value), str(err.value)
    with pytest.raises(ValueError, match="numpy array of dtype <U1|has no dtype|dtype"):
        model(np.array(["a"]))
    with pytest.raises(ValueError, match="no input named 'x'"):
        model.run({"x": x})
    with pytest.raises(ValueError, match="a dict of inputs"):
        model.run(x)
    model.close()
    model.close()  # twice is fine
    with pytest.raises(ValueError, match="closed"):
        model(x)
    with pytest.raises(ValueError, match="closed"):
        model.bench(iterations=1)


def test_torch_tensors_in_and_out_by_dlpack(built, tiny_so):
    torch = pytest.importorskip("torch", reason="torch does not import here: the DLPack path is not tested")
    e = tiny_so.parent
    x = np.fromfile(e / "input0.bin", "<f4").reshape(4, 16)
    want = np.fromfile(e / "expected0.bin", "<f4").reshape(4, 8)
    with mpspack.load(built["tiny"]) as model:
        y, = model(torch.from_numpy(x))
        assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and tuple(y.shape) == (4, 8)
        assert np.allclose(y.numpy(), want, rtol=RTOL, atol=ATOL)
        # Not contiguous: made contiguous first; requires_grad: read without the graph.
        t = torch.from_numpy(np.asfortranarray(x)).requires_grad_(True)
        y2, = model(t)
        assert torch.equal(y, y2)
        y3 = model.run({"input0": torch.from_numpy(x)})["output0"]
        assert isinstance(y3, torch.Tensor) and torch.equal(y, y3)
        with pytest.raises(ValueError, match="input"):
            model(torch.zeros(4, 16, dtype=torch.float64))
    del model
    assert torch.equal(y, y2)  # the tensors keep the outputs' memory alive


# Run in a fresh interpreter: argv = container, example folder, package folder, pt2 fixture, order.
_BOTH_SHIMS = """
import sys, numpy as np
container, example, package, pt2, order = sys.argv[1:6]
sys.path.insert(0, package)
if order == "torch-first":
    import torch
import mpspack
x = np.fromfile(example + "/input0.bin", "<f4").reshape(4, 16)
want = np.fromfile(example + "/expected0.bin", "<f4").reshape(4, 8)
model = mpspack.load(container)
model(x)  # mpspack's shim is in use from here on
if order == "mpspack-first":
    import torch
y, = model(torch.from_numpy(x))
assert torch.allclose(y, torch.from_numpy(want), rtol=1e-4, atol=1e-5), (y, want)
assert torch.equal(torch.ones(2, 2) @ torch.ones(2, 2), torch.full((2, 2), 2.0))
# torch's own AOTInductor runtime (torch 2.6 and later) runs a .pt2 on its own aoti_torch_*: a model library it
# loads must not bind to mpspack's shim, nor mpspack's to torch's.
aoti = getattr(getattr(torch, "_inductor", None), "aoti_load_package", None)
if aoti is None:
    print("ok, no torch AOTInductor runtime in torch", torch.__version__)
    sys.exit(0)
runner = aoti(pt2)
with mpspack.open(container.replace("tiny.mpk", "pt2_pkg.mpk")) as c:
    w = torch.from_numpy(c.constant("l_weight").copy())
xin = torch.randn(2, w.shape[1])
out = runner(xin)
out = out[0] if isinstance(out, (list, tuple)) else out
mine = mpspack.load(container.replace("tiny.mpk", "pt2_pkg.mpk"))(xin)[0]
assert torch.allclose(out, mine, rtol=1e-4, atol=1e-5), (out, mine)
y2, = model(torch.from_numpy(x))
assert torch.equal(y, y2)
print("ok, torch", torch.__version__, "ran its AOTInductor package beside mpspack")
"""


@pytest.mark.parametrize("order", ["torch-first", "mpspack-first"])
def test_torch_and_mpspack_keep_their_own_shims(built, tiny_so, fixtures, order):
    """torch 2.x's libtorch exports aoti_torch_* too. With torch imported before or after mpspack's library is
    loaded, a model run by mpspack binds to mpspack's shim, and torch's own ops (and its AOTInductor runtime, where
    torch has one: torch 2.6 and later, the device machine's) keep working on torch's. In a fresh interpreter, so
    the import order is the test's."""
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip("torch does not import here: torch and mpspack in one process is not tested")
    r = subprocess.run([sys.executable, "-c", _BOTH_SHIMS, str(built["tiny"]), str(tiny_so.parent),
                        str(SOURCE_DIR / "python"), str(fixtures / "pt2" / "pkg.pt2"), order],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("ok"), r.stdout + r.stderr
    print(r.stdout.strip())


def gpu_reason() -> str | None:
    """Why the CUDA test cannot run here, or None where it can."""
    try:
        import torch
    except ImportError:
        return "torch does not import here (the CUDA test hands torch CUDA tensors in and out)"
    if not torch.cuda.is_available():
        return f"no GPU here: torch {torch.__version__} sees no CUDA device (this test runs on the device machine)"
    return None


def test_cuda_fixtures_with_torch_tensors_on_the_gpu(fixtures, tmp_path):
    """On the device machine: each torch-built CUDA fixture built, loaded on cuda:0 and run on torch CUDA tensors
    (read in place by DLPack), its outputs torch tensors matching the recorded ones."""
    reason = gpu_reason()
    if reason is not None:
        pytest.skip(reason)
    import torch
    d = fixtures / "torch-built"
    ran = 0
    for case in cases(d):
        if case.get("device") != "cuda":
            continue
        src = d / case["dir"]
        out = tmp_path / f"{case['dir']}.mpk"
        blob = src / "weights.blob"
        mpspack.build(src / "model.so", out, weights=[blob] if blob.exists() else [])
        x = torch.from_numpy(tensor(src / "input0.bin", case["inputs"][0])).cuda()
        want = torch.from_numpy(tensor(src / "expected0.bin", case["outputs"][0]))
        with mpspack.load(out, device="cuda:0") as model:
            assert model.device == "cuda:0"
            y, = model(x)
            # Left on the GPU by the C API (mpspack_model_run_device) and handed out by DLPack: no copy back.
            assert isinstance(y, torch.Tensor) and y.is_cuda and y.device.index == 0, (type(y), y.device)
            # TF32 matmuls on the GPU: the CLI's f32 tolerance does not hold; 1e-2 as torch's own tests use.
            assert torch.allclose(y.cpu(), want, rtol=1e-2, atol=1e-3), case["dir"]
            host, = model(x.cpu().numpy())  # NumPy in: NumPy out, copied to the device and back
            assert isinstance(host, np.ndarray) and np.allclose(host, want.numpy(), rtol=1e-2, atol=1e-3)
        ran += 1
    if ran == 0:
        missing(f"the CUDA fixtures in {d}")


def test_one_model_from_several_threads(built, tiny_so):
    """Calls on one model from several Python threads are serialised by the model, each with its own inputs and
    outputs: every result is the one its own input gives (the C structs are filled and used under the lock)."""
    import threading
    x = np.fromfile(tiny_so.parent / "input0.bin", "<f4").reshape(4, 16)
    inputs = [x * (k + 1) for k in range(4)]
    with mpspack.load(built["tiny"]) as model:
        want = [model(i)[0] for i in inputs]
        bad = []

        def work(k: int) -> None:
            for n in range(200):
                j = (k + n) % len(inputs)
                y, = model(inputs[j] if n % 2 else inputs[j].copy())
                if not np.array_equal(y, want[j]):
                    bad.append((k, n))
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert bad == []


@pytest.mark.parametrize("name", ["tiny", "cpu_mlp_blob"])
def test_repeated_calls_each_get_outputs_of_their_own(built, name):
    """Calls with new arrays laid out as the last ones go the short way (only their addresses change; outputs are
    rows of a shared block): every output is its own call's, stays as it was through later calls (more than a
    block's rows), and a call laid out otherwise (Fortran order, big-endian) in between still gets its own, as does
    an input changed in place. With a recorded example (tiny) and without one (cpu_mlp_blob: the outputs' shapes learnt
    from the first call). The reference for each input: a call on a big-endian copy, converted every time."""
    with mpspack.load(built[name]) as model:
        shape = model.inputs[0].shape or (8, 64)
        rng = np.random.default_rng(7)
        xs = [rng.standard_normal(shape).astype("<f4") for _ in range(5)]
        want = [model(x.astype(">f4"))[0] for x in xs]
        assert not np.allclose(want[0], want[1])
        got = []
        for k in range(150):  # over two blocks of rows
            j = k % len(xs)
            x = xs[j].copy() if k % 3 else xs[j]
            if k % 37 == 5:
                x = np.asfortranarray(x)
            got.append((j, model(x)[0]))
            if k % 41 == 7:
                got.append((j, model(xs[j].astype(">f4"))[0]))
        for j, y in got:
            assert y.shape == want[j].shape and y.flags.writeable
            assert np.array_equal(y, want[j]), j
        x = xs[0].copy()
        model(x)
        x[...] = xs[1]  # the same array, changed in place: read again
        assert np.array_equal(model(x)[0], want[1])
