"""mpspack.run(): a thin wrapper over the mpspack executable's `run --json`, for its checking report (outputs
compared with references, written to files). Running a model in this process is mpspack.load() (model.py), which
needs no executable. The executable is the `mpspack_bin` argument, else $MPSPACK_BIN, else the one installed with
this package (installed_executables()), else `mpspack` on PATH. Also the tensor arguments shared with build() and
Model.bench(): paths, (path, dtype, shape) tuples or NumPy arrays written to temporary .npy files."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from typing import Iterable, Iterator, Union

import numpy as np

from .errors import CommandError

PathLike = Union[str, "os.PathLike[str]"]

# The dtypes the tool reads from a .npy file (libpack/src/tensor/tensor_io.cpp), as numpy names them.
_NPY_DTYPES = ("float32", "float16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")


def _is_executable(path: pathlib.Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def installed_executables() -> list[str]:
    """Where an mpspack executable installed together with this package would be, in the order
    find_executable() tries them: inside the package (<package>/bin/mpspack, for a copy that carries
    the tool); bin/ of the prefix the package sits in (P/bin/mpspack for the package under
    P/lib/python3.X/site-packages or P/lib/python, as in a venv or an install tree the tool was
    installed into with `cmake --install build --prefix P`); and the running Python's own bin/
    (sys.prefix: a venv the tool was installed into, with the package imported from elsewhere). Each
    is taken before PATH, so a package next to its tool runs that tool, not another one on PATH."""
    package = pathlib.Path(__file__).resolve().parent
    candidates = [package / "bin" / "mpspack"]
    # P/lib/python/mpspack or P/lib/python3.X/site-packages/mpspack: lib/ one or two folders up, no
    # further (a checkout somewhere under a folder named lib is no install prefix).
    for folder in list(package.parents)[1:3]:
        if folder.name in ("lib", "lib64"):
            candidates.append(folder.parent / "bin" / "mpspack")
            break
    candidates.append(pathlib.Path(sys.prefix) / "bin" / "mpspack")
    seen: list[str] = []
    for c in candidates:
        if str(c) not in seen:
            seen.append(str(c))
    return seen


def find_executable(mpspack_bin: PathLike | None = None) -> str:
    """The mpspack executable to run: the argument, $MPSPACK_BIN, the first of
    installed_executables() that exists, or `mpspack` on PATH."""
    if mpspack_bin is not None:
        return os.fspath(mpspack_bin)
    env = os.environ.get("MPSPACK_BIN")
    if env:
        return env
    for c in installed_executables():
        if _is_executable(pathlib.Path(c)):
            return c
    found = shutil.which("mpspack")
    if found is None:
        raise FileNotFoundError("the mpspack executable was not found: pass mpspack_bin=, set MPSPACK_BIN, "
                                f"install it beside this package ({', '.join(installed_executables())}), "
                                "or put mpspack on PATH")
    return found


def _tensor(spec, what: str, scratch: _Scratch) -> str:
    """A tensor argument: a path, a (path, dtype, shape) tuple with shape a tuple of ints, or a
    numpy array (written to a temporary .npy file). `what` names the argument in errors."""
    if isinstance(spec, (str, bytes, os.PathLike)):
        return os.fsdecode(spec)
    if isinstance(spec, (tuple, list)):
        if len(spec) != 3:
            raise ValueError(f"{what}: a tuple must be (path, dtype, shape), got {len(spec)} items")
        path, dtype, shape = spec
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"{what}: the path of (path, dtype, shape) is {type(path).__name__}, not a path")
        try:
            dims = "x".join(str(int(d)) for d in shape) if len(shape) else "scalar"
        except (TypeError, ValueError):
            raise TypeError(f"{what}: the shape of (path, dtype, shape) must be a sequence of ints, "
                            f"got {shape!r}") from None
        return f"{os.fsdecode(path)}:{dtype}:{dims}"
    if isinstance(spec, np.ndarray):
        return scratch.npy(spec, what)
    raise TypeError(f"{what}: is {type(spec).__name__}; expected a path, a (path, dtype, shape) tuple "
                    "or a numpy.ndarray")


class _Scratch:
    """A temporary folder for arrays given to a command, made on first use and removed with the
    files in it when the command has run (closed by _scratch())."""

    def __init__(self) -> None:
        self._dir: tempfile.TemporaryDirectory | None = None
        self._count = 0

    def npy(self, array: np.ndarray, what: str) -> str:
        if array.dtype.name not in _NPY_DTYPES:
            raise TypeError(f"{what}: a numpy array of dtype {array.dtype}, which mpspack cannot read "
                            f"(it reads {' '.join(_NPY_DTYPES)})")
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="mpspack-")
        # The tool reads little-endian, C-ordered .npy files.
        array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        path = os.path.join(self._dir.name, f"tensor{self._count}.npy")
        self._count += 1
        np.save(path, array, allow_pickle=False)
        return path

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None


@contextlib.contextmanager
def _scratch() -> Iterator[_Scratch]:
    s = _Scratch()
    try:
        yield s
    finally:
        s.close()


def _tensors(specs: Iterable, name: str, scratch: _Scratch) -> list[str]:
    """The tensor arguments `name` (e.g. "run() inputs"), each checked as _tensor() says."""
    if isinstance(specs, (str, bytes, os.PathLike, np.ndarray)):
        raise TypeError(f"{name}: must be a list of tensors, not a single {type(specs).__name__}")
    return [_tensor(t, f"{name}[{i}]", scratch) for i, t in enumerate(specs)]


def _call(argv: list[str], timeout: float | None) -> dict:
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    stdout = proc.stdout.decode("utf-8", errors="replace")
    stderr = proc.stderr.decode("utf-8", errors="replace")
    report = None
    if stdout.strip():
        try:
            report = json.loads(stdout)
        except json.JSONDecodeError:
            if proc.returncode == 0:
                raise CommandError(argv, proc.returncode, f"{stderr}\nmpspack printed no JSON report: {stdout[:200]}")
    if proc.returncode != 0:
        raise CommandError(argv, proc.returncode, stderr, report)
    if report is None:
        raise CommandError(argv, proc.returncode, f"{stderr}\nmpspack printed no JSON report")
    return report


def run(container: PathLike, *, library: str | int | None = None, inputs: Iterable = (), expect: Iterable = (),
        seed: int | None = None, rtol: float | None = None, atol: float | None = None, output_dir: PathLike | None = None,
        copy_weights: bool = False, device: str | None = None, no_tf32: bool = False,
        mpspack_bin: PathLike | None = None, timeout: float | None = None) -> dict:
    """`mpspack run FILE --json`: runs one library of the container once and compares its outputs
    (with the recorded example when no inputs are given). `seed` generates the inputs instead (the
    recorded example's dtypes and shapes; compared only with `expect`). Returns {container, library,
    weights, inputs, seed, checked, ok, outputs[], timings}. Outputs that do not match raise CommandError (exit 1) whose
    `report` holds the same report. `inputs` and `expect` are lists of paths (.npy, or raw with
    (path, dtype, shape)) or numpy arrays, which are written to temporary .npy files for the tool and
    removed when it has run; anything else raises TypeError naming the argument and index."""
    with _scratch() as scratch:
        argv = ["run", os.fspath(container)]
        if library is not None:
            argv += ["--library", str(library)]
        for t in _tensors(inputs, "run() inputs", scratch):
            argv += ["--input", t]
        for t in _tensors(expect, "run() expect", scratch):
            argv += ["--expect", t]
        argv.insert(0, find_executable(mpspack_bin))
        return _call(argv + _run_options(seed, rtol, atol, output_dir, copy_weights, device, no_tf32), timeout)


def _run_options(seed, rtol, atol, output_dir, copy_weights, device, no_tf32) -> list[str]:
    argv: list[str] = []
    if seed is not None:
        argv += ["--seed", str(int(seed))]
    if rtol is not None:
        argv += ["--rtol", repr(float(rtol))]
    if atol is not None:
        argv += ["--atol", repr(float(atol))]
    if output_dir is not None:
        argv += ["--output", os.fspath(output_dir)]
    if copy_weights:
        argv.append("--copy-weights")
    if device is not None:
        argv += ["--device", device]
    if no_tf32:
        argv.append("--no-tf32")
    argv.append("--json")
    return argv
