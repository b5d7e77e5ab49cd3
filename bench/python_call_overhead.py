#!/usr/bin/python3
# What a call of a loaded model costs from Python (mpspack.load(), one model(x) per call: inputs handed to the C
# API through ctypes, outputs wrapped as NumPy arrays, the GIL released around the run) against what
# `mpspack run --bench` measures for the same container, library, inputs and threads: its p50 over the same number
# of calls, the model alone (default) and with its copies in and out (--include-transfers, which is what a
# Python call does too). The difference of the p50s is the Python side's overhead per call. Also: model(x) with a
# new input array each call (the same values; its address is looked up again, as in a server), and the C API's
# mpspack_model_run_into called straight through ctypes with the structs filled once (the C API's own cost from
# Python, without the package's). Rounds alternate Python and the CLI so that both see the same machine load; the
# table gives each round and the median.
#
#   /usr/bin/python3 bench/python_call_overhead.py BUILD_DIR [CONTAINER INPUT]
#       [--calls 1000] [--warmup 100] [--rounds 3] [--threads N]
#
# BUILD_DIR: the build tree (its bin/mpspack and lib/libmpspack_c.so.0, the package from python/ beside this
# file). CONTAINER and INPUT default to the bundled example (BUILD_DIR/examples/tiny_mlp/tiny_mlp.mpk and its
# input0.bin, f32 [4, 16]); INPUT is FILE.npy, or FILE:DTYPE:SHAPE as `mpspack run --input` takes it (one input).
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
NUMPY = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "i64": "<i8", "i32": "<i4", "u8": "u1", "bool": "?"}


def read_input(spec: str) -> np.ndarray:
    if spec.endswith(".npy"):
        return np.load(spec)
    path, dtype, shape = spec.rsplit(":", 2)
    dims = [] if shape == "scalar" else [int(d) for d in shape.split("x")]
    return np.fromfile(path, NUMPY[dtype]).reshape(dims)


def python_p50(model, x, calls: int, warmup: int) -> float:
    """p50 in microseconds of `calls` timed calls of model(x), after `warmup` untimed ones."""
    for _ in range(warmup):
        model(x)
    times = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        t0 = clock()
        model(x)
        times.append(clock() - t0)
    return statistics.median(times) / 1e3


def raw_p50(model, x, calls: int, warmup: int) -> float:
    """p50 in microseconds of mpspack_model_run_into alone, called as the package's hot path calls it."""
    model(x)  # fills the input and output structs
    f = model._run_into_raw
    args = (model._ptr_arg, model._in_ref, model._n_in_arg, model._out_table_ref, model._n_out_arg)
    for _ in range(warmup):
        f(*args)
    times = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        t0 = clock()
        f(*args)
        times.append(clock() - t0)
    return statistics.median(times) / 1e3


def fresh_p50(model, xs: list, warmup: int) -> float:
    for x in xs[:warmup]:
        model(x)
    times = []
    clock = time.perf_counter_ns
    for x in xs:
        t0 = clock()
        model(x)
        times.append(clock() - t0)
    return statistics.median(times) / 1e3


def cli_p50(tool: str, container: str, spec: str, calls: int, warmup: int, threads: int, transfers: bool) -> float:
    argv = [tool, "run", "--bench", container, "--input", spec, "--iterations", str(calls), "--warmup",
            str(warmup), "--json"]
    if threads:
        argv += ["--threads", str(threads)]
    if transfers:
        argv.append("--include-transfers")
    r = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["latency_ms"]["p50"] * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("build_dir")
    ap.add_argument("container", nargs="?")
    ap.add_argument("input", nargs="?")
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    build = pathlib.Path(a.build_dir).resolve()
    os.environ.setdefault("MPSPACK_LIBRARY", str(build / "lib" / "libmpspack_c.so.0"))
    sys.path.insert(0, str(HERE.parent / "python"))
    import mpspack

    example = build / "examples" / "tiny_mlp"
    container = a.container or str(example / "tiny_mlp.mpk")
    spec = a.input or f"{example / 'input0.bin'}:f32:4x16"
    x = read_input(spec)
    tool = str(build / "bin" / "mpspack")
    print(f"container {container}, input {x.dtype}{list(x.shape)}, {a.calls} calls after {a.warmup} warm-up, "
          f"threads {a.threads or 'as they are'}, library {mpspack.library_path()}")
    print("| round | Python model(x) p50 µs | model(new array) p50 µs | C API through ctypes p50 µs | `run --bench` "
          "p50 µs | `run --bench --include-transfers` p50 µs | model(x) - CLI (model alone) µs | model(x) - CLI "
          "(transfers) µs | model(new array) - CLI (transfers) µs |\n|---|---|---|---|---|---|---|---|---|")
    rows = []
    xs = [x.copy() for _ in range(a.calls)]
    with mpspack.load(container, threads=a.threads) as model:
        for r in range(a.rounds):
            py = python_p50(model, x, a.calls, a.warmup)
            fresh = fresh_p50(model, xs, a.warmup)
            raw = raw_p50(model, x, a.calls, a.warmup)
            alone = cli_p50(tool, container, spec, a.calls, a.warmup, a.threads, False)
            moved = cli_p50(tool, container, spec, a.calls, a.warmup, a.threads, True)
            rows.append((py, fresh, raw, alone, moved))
            print(f"| {r + 1} | {py:.2f} | {fresh:.2f} | {raw:.2f} | {alone:.2f} | {moved:.2f} | {py - alone:+.2f} | "
                  f"{py - moved:+.2f} | {fresh - moved:+.2f} |")
    m = [statistics.median(c) for c in zip(*rows)]
    print(f"| median | {m[0]:.2f} | {m[1]:.2f} | {m[2]:.2f} | {m[3]:.2f} | {m[4]:.2f} | {m[0] - m[3]:+.2f} | "
          f"{m[0] - m[4]:+.2f} | {m[1] - m[4]:+.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
