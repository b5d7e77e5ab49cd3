"""Thin wrappers over the mpspack executable: each runs one command with --json and returns the
parsed report (docs/CLI.md). The executable is the `mpspack_bin` argument, else $MPSPACK_BIN, else
`mpspack` on PATH."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Iterable, Sequence, Union

from .errors import CommandError

PathLike = Union[str, "os.PathLike[str]"]


def find_executable(mpspack_bin: PathLike | None = None) -> str:
    """The mpspack executable to run: the argument, $MPSPACK_BIN, or `mpspack` on PATH."""
    if mpspack_bin is not None:
        return os.fspath(mpspack_bin)
    env = os.environ.get("MPSPACK_BIN")
    if env:
        return env
    found = shutil.which("mpspack")
    if found is None:
        raise FileNotFoundError("the mpspack executable was not found: pass mpspack_bin=, set MPSPACK_BIN, "
                                "or put mpspack on PATH")
    return found


def _tensor(spec) -> str:
    """A tensor argument: a path, or (path, dtype, shape) with shape a tuple of ints."""
    if isinstance(spec, (tuple, list)):
        path, dtype, shape = spec
        dims = "x".join(str(int(d)) for d in shape) if len(shape) else "scalar"
        return f"{os.fspath(path)}:{dtype}:{dims}"
    return os.fspath(spec)


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


def build(inputs: PathLike | Sequence[PathLike], output: PathLike | None = None, *,
          weights: Iterable[PathLike] = (), example_inputs: Iterable = (), example_outputs: Iterable = (),
          keep_libtorch: bool = False, fsync: bool = False, mpspack_bin: PathLike | None = None,
          timeout: float | None = None) -> dict:
    """`mpspack build INPUT... [-o OUTPUT] --json`: packs model libraries (.so) or .pt2 packages into
    one container. `weights` are the external blobs in input order; example tensors are paths or
    (path, dtype, shape). Returns {"output", "libraries", "segments", "segment_bytes"}."""
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    argv = [find_executable(mpspack_bin), "build", *(os.fspath(i) for i in inputs)]
    if output is not None:
        argv += ["-o", os.fspath(output)]
    for w in weights:
        argv += ["--weights", os.fspath(w)]
    for t in example_inputs:
        argv += ["--example-input", _tensor(t)]
    for t in example_outputs:
        argv += ["--example-output", _tensor(t)]
    if keep_libtorch:
        argv.append("--keep-libtorch")
    if fsync:
        argv.append("--fsync")
    argv.append("--json")
    return _call(argv, timeout)


def run(container: PathLike, *, library: str | int | None = None, inputs: Iterable = (), expect: Iterable = (),
        seed: int | None = None, rtol: float | None = None, atol: float | None = None, output_dir: PathLike | None = None,
        copy_weights: bool = False, device: str | None = None, no_tf32: bool = False,
        mpspack_bin: PathLike | None = None, timeout: float | None = None) -> dict:
    """`mpspack run FILE --json`: runs one library of the container once and compares its outputs
    (with the recorded example when no inputs are given). `seed` generates the inputs instead (the
    recorded example's dtypes and shapes; compared only with `expect`). Returns {container, library,
    weights, inputs, seed, checked, ok, outputs[], timings}. Outputs that do not match raise CommandError (exit 1) whose
    `report` holds the same report."""
    argv = [find_executable(mpspack_bin), "run", os.fspath(container)]
    if library is not None:
        argv += ["--library", str(library)]
    for t in inputs:
        argv += ["--input", _tensor(t)]
    for t in expect:
        argv += ["--expect", _tensor(t)]
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
    return _call(argv, timeout)
