"""mpspack.build(): `mpspack build` through the C API, in this process (no executable needed)."""

from __future__ import annotations

import ctypes
import os
from typing import Iterable, Sequence, Union

from . import _capi
from .cli import _scratch, _tensors
from .container import Container

PathLike = Union[str, "os.PathLike[str]"]


def build(inputs: PathLike | Sequence[PathLike], output: PathLike | None = None, *,
          weights: Iterable[PathLike] = (), example_inputs: Iterable = (), example_outputs: Iterable = (),
          keep_libtorch: bool = False, fsync: bool = False) -> dict:
    """Packs model libraries (.so) or .pt2 packages into one container at `output` (default: the first input's
    stem with .mpk, beside it, as `mpspack build`), written atomically: nothing is left under `output` when it
    fails. `weights` are the external blobs in input order (default: <stem>_weights.blob beside each library);
    example tensors, recorded as the first library's example, are paths, (path, dtype, shape) tuples or NumPy
    arrays (written to temporary .npy files, removed after). Returns `mpspack build --json`'s report:
    {"schema_version", "output", "libraries", "segments", "segment_bytes"}. Errors: FileNotFoundError (an input
    that is not there), FormatError (an input that is not a model library or .pt2, or a damaged one),
    InvalidArgument (a bad tensor argument), OSError (the output cannot be written)."""
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    inputs = [os.fspath(i) for i in inputs]
    if not inputs:
        raise ValueError("build(): no inputs given")
    if output is None:
        first = os.fsdecode(inputs[0])
        output = os.path.join(os.path.dirname(first), os.path.splitext(os.path.basename(first))[0] + ".mpk")
    output = os.fspath(output)
    lib = _capi.library()
    o = _capi.BuildOptions()
    _capi.check(lib.mpspack_build_options_init(ctypes.byref(o)))
    w, o.n_weights = _capi.strings(weights)
    o.weights = w
    o.keep_libtorch, o.fsync = int(bool(keep_libtorch)), int(bool(fsync))
    with _scratch() as scratch:
        ei, o.n_example_inputs = _capi.strings(_tensors(example_inputs, "build() example_inputs", scratch))
        eo, o.n_example_outputs = _capi.strings(_tensors(example_outputs, "build() example_outputs", scratch))
        o.example_inputs, o.example_outputs = ei, eo
        ins, n = _capi.strings(inputs)
        status = lib.mpspack_build(ins, n, os.fsencode(output), ctypes.byref(o))
    if status != _capi.OK:
        # The message names the file involved; which one (an input, or the output) only it says.
        raise _capi.error(status)
    with Container(output) as c:
        return {"schema_version": 1, "output": os.fsdecode(output), "libraries": len(c.libraries),
                "segments": len(c.segments), "segment_bytes": sum(s["size"] for s in c.segments)}
