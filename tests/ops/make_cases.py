#!/usr/bin/python3
"""Writes the op conformance cases: each registered function's cases (opcases/*.py) run through torch, with
torch's results or errors, as <out>/<name>.json, plus <out>/index.json (torch's version, what was skipped and
why). The C++ runner (op_conformance) reads them. Run with any torch: Debian's 1.13.1 here and in CI, torch 2.11
on the device machine for tests/ops/cases/torch-2.11 (README.md).

  make_cases.py --out DIR [--only NAME ...] [--seed N]
  make_cases.py --count        # cases per function, as JSON (docs/tools/shim_table.py reads it); an op this
                               # torch is too old for counts its recorded cases (cases/*/)
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import pathlib
import re
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from ops import opcases  # noqa: E402,F401  (registers every module's cases)
from ops.spec import OPS, Case, Gen, OpSpec  # noqa: E402

FORMAT = 1


def version_tuple(v: str) -> tuple:
    m = re.match(r"(\d+)\.(\d+)", v)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def dtype_name(dt: torch.dtype) -> str:
    return str(dt).removeprefix("torch.")


def extent(x: torch.Tensor) -> int:
    if x.numel() == 0:
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(x.shape, x.stride()))


def encode_tensor(x: torch.Tensor, with_data: bool = True) -> dict:
    x = x.detach()
    out = {"dtype": dtype_name(x.dtype), "sizes": list(x.shape), "strides": list(x.stride())}
    if with_data:
        n = extent(x)
        flat = torch.as_strided(x, (n,), (1,), x.storage_offset()).contiguous().cpu() if n else x.new_empty(0).cpu()
        out["data"] = base64.b64encode(flat.view(torch.uint8).numpy().tobytes()).decode()
    return out


def encode_float(v: float):
    if math.isnan(v):
        return {"float": "nan"}
    if math.isinf(v):
        return {"float": "inf" if v > 0 else "-inf"}
    return float(v)


def encode_arg(a):
    if a is None or isinstance(a, (bool, int, str)):
        return a
    if isinstance(a, float):
        return encode_float(a)
    if isinstance(a, torch.Tensor):
        return {"tensor": encode_tensor(a)}
    if isinstance(a, torch.dtype):
        return {"dtype": dtype_name(a)}
    if isinstance(a, (list, tuple)):
        return [encode_arg(x) for x in a]
    raise TypeError(f"cannot encode an argument of type {type(a).__name__}")


def moments(x: torch.Tensor) -> dict:
    d = x.detach().cpu().to(torch.float64).flatten()
    return {"n": d.numel(), "mean": d.mean().item() if d.numel() else 0.0,
            "std": d.std().item() if d.numel() > 1 else 0.0}


def encode_result(r, check: str):
    if r is None:
        return None
    if isinstance(r, torch.Tensor):
        t = encode_tensor(r, with_data=check == "values")
        if check == "moments":
            t["moments"] = moments(r)
        return {"tensor": t}
    if isinstance(r, bool) or isinstance(r, int):
        return {"int": int(r)}
    if isinstance(r, float):
        return {"float": encode_float(r)}
    raise TypeError(f"cannot encode a result of type {type(r).__name__}")


DEVICE = "cpu"


def clone_args(args: list, device: str) -> list:
    """Fresh copies (strides kept) on the device torch runs the op on, so in-place calls leave the recorded
    inputs as they were."""
    def one(a):
        if isinstance(a, torch.Tensor):
            return torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=device).copy_(a)
        if isinstance(a, (list, tuple)):
            return type(a)(one(x) for x in a)
        return a
    return [one(a) for a in args]


def run_torch(spec: OpSpec, args: list):
    if spec.call is not None:
        return spec.call(*args)
    fn = torch.ops
    for part in spec.torch_op.split("."):
        fn = getattr(fn, part)
    # The C signature is positional; the schema's keyword-only arguments are passed to torch by name.
    params = fn._schema.arguments
    positional = [a for p, a in zip(params, args) if not p.kwarg_only]
    named = {p.name: a for p, a in zip(params, args) if p.kwarg_only}
    return fn(*positional, **named)


def make_case(spec: OpSpec, case: Case, position: int) -> dict:
    # The runner puts every other case of the generator's list (position) at a storage offset of 3 elements.
    entry = {"name": case.name, "args": encode_arg(case.args), "offset": position % 2 == 1}
    args = clone_args(case.args, spec.reference or DEVICE)
    try:
        result = run_torch(spec, args)
    except Exception as e:  # noqa: BLE001 - torch's own refusals are what an error case records
        if not case.error:
            raise RuntimeError(f"{spec.name}: case '{case.name}': torch raised {type(e).__name__}: {e}") from e
        entry["error"] = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        return entry
    if case.error:
        raise RuntimeError(f"{spec.name}: case '{case.name}' is marked as an error but torch returned a result")
    # Out and in-place functions return nothing in C: their result is the mutated arguments.
    results = [] if case.mutated else list(result) if isinstance(result, (tuple, list)) else [result]
    entry["results"] = [None if i in case.ignore else encode_result(r, case.check) for i, r in enumerate(results)]
    entry["mutated"] = {str(i): encode_result(args[i], case.check) for i in case.mutated}
    entry["check"] = case.check
    entry["strides"] = case.strides
    if case.rtol is not None:
        entry["rtol"] = case.rtol
    if case.atol is not None:
        entry["atol"] = case.atol
    return entry


def cases_of(spec: OpSpec, seed: int, have: tuple = (99, 0)) -> list:
    """The op's cases this torch can make, each with its position in the generator's list. On a GPU, not the refusals: torch's GPU kernels find a bad index in a
    device-side assert, which leaves the CUDA context unusable for every case after it (the CPU cases check the
    refusals; the CUDA functions without kernels of their own refuse through the same CPU functions)."""
    cases = list(enumerate(spec.cases(Gen(seed, DEVICE))))
    return [(i, c) for i, c in cases if (not c.min_torch or have >= version_tuple(c.min_torch)) and
            not (c.error and DEVICE != "cpu")]


def make_device_cases(spec: OpSpec, cases: list, skipped_cases: dict) -> list:
    """The op's entries. On a GPU, a case torch's kernel refuses there (a dtype the CPU kernel takes) is left out
    and said in index.json; the op's other cases stay. A spoiled CUDA context is raised: no case after it runs."""
    if DEVICE == "cpu":
        return [make_case(spec, c, i) for i, c in cases]
    out = []
    for i, c in cases:
        try:
            out.append(make_case(spec, c, i))
        except Exception as e:  # noqa: BLE001 - torch's GPU refusals; a CUDA error may surface in a later copy
            if "CUDA error" in str(e) or "marked as an error" in str(e):
                raise RuntimeError(f"{spec.name}: case '{c.name}': {e}") from e
            skipped_cases.setdefault(spec.name, []).append(str(e).splitlines()[0][:300])
    if not out:
        raise RuntimeError(f"{spec.name}: torch refused every case on {DEVICE}")
    return out


def write_index(ns, written: list, skipped: dict, skipped_cases: dict) -> None:
    index = {"format": FORMAT, "torch": torch.__version__, "device": ns.device, "written": written,
             "skipped": skipped, "skipped_cases": skipped_cases}
    (ns.out / "index.json").write_text(json.dumps(index, indent=1) + "\n")


def resumed(ns) -> tuple:
    """What an earlier process of this recording wrote (--resume), else nothing yet."""
    if not ns.resume:
        return [], {}, {}
    index = json.loads((ns.out / "index.json").read_text())
    return index["written"], index["skipped"], index.get("skipped_cases", {})


def restart(ns, rest: list, written: list, skipped: dict, skipped_cases: dict) -> None:
    """A device-side assert leaves this process's CUDA context unusable: record what is done and go on with the
    remaining functions in a fresh process."""
    write_index(ns, written, skipped, skipped_cases)
    if not rest:
        return
    sys.stdout.flush()
    argv = [sys.executable, __file__, "--out", str(ns.out), "--device", ns.device, "--seed", str(ns.seed),
            "--resume", "--only", *rest]
    os.execv(sys.executable, argv)


def cpu_capability():
    """The vector kernels ATen runs on this CPU ("avx512", "avx2", "default"), lower case as ATEN_CPU_CAPABILITY
    names them; None where this torch cannot say. Some of torch's packed formats depend on it (the int4 weights of
    _convert_weight_to_int4pack_for_cpu), so the runner reads such cases as this CPU packed them."""
    get = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
    return get().lower() if get else None


RECORDED = pathlib.Path(__file__).resolve().parent / "cases"


def case_count(spec: OpSpec, seed: int, have: tuple) -> int:
    """The op's cases: its generator's, or, for an op this torch is too old to run, the recorded ones'."""
    if spec.min_torch and have < version_tuple(spec.min_torch):
        counts = [len(json.loads(f.read_text())["cases"]) for f in RECORDED.glob(f"*/{spec.name}.json")]
        return max(counts, default=0)
    return len(cases_of(spec, seed))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=pathlib.Path)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--resume", action="store_true", help=argparse.SUPPRESS)  # restart() after a CUDA error
    ap.add_argument("--count", action="store_true", help="print the number of cases per function as JSON")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="where torch runs each op (cuda: the cases the CUDA functions are checked on)")
    ns = ap.parse_args()
    global DEVICE
    DEVICE = ns.device
    unknown = [n for n in ns.only if n not in OPS]
    if unknown:
        print(f"make_cases.py: no cases are defined for {' '.join(unknown)}", file=sys.stderr)
        return 2
    names = ns.only or sorted(OPS)
    if ns.count:
        have = version_tuple(torch.__version__)
        print(json.dumps({OPS[n].function: case_count(OPS[n], ns.seed, have) for n in names}, indent=1,
                         sort_keys=True))
        return 0
    if ns.out is None:
        ap.error("--out is required")
    ns.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(ns.seed)  # the random ops' torch results (compared by distribution only)
    have = version_tuple(torch.__version__)
    written, skipped, skipped_cases = resumed(ns)
    for name in names:
        spec = OPS[name]
        if ns.device not in spec.devices:
            continue
        if spec.min_torch and have < version_tuple(spec.min_torch):
            skipped[name] = f"needs torch >= {spec.min_torch} (this is {torch.__version__})"
            continue
        try:
            cases = make_device_cases(spec, cases_of(spec, ns.seed, have), skipped_cases)
        except RuntimeError as e:
            if ns.device == "cpu":
                raise
            skipped[name] = str(e).splitlines()[0][:300]
            print(f"make_cases.py: {name} skipped on {ns.device}: {skipped[name]}", file=sys.stderr)
            if "CUDA error" in str(e):
                restart(ns, names[names.index(name) + 1:], written, skipped, skipped_cases)
            continue
        doc = {"format": FORMAT, "torch": torch.__version__, "op": name, "function": spec.function,
               "devices": list(spec.devices), "cases": cases}
        if cpu_capability():
            doc["cpu_capability"] = cpu_capability()
        (ns.out / f"{name}.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
        written.append(name)
    write_index(ns, written, skipped, skipped_cases)
    print(f"make_cases.py: {len(written)} functions' cases written to {ns.out}, {len(skipped)} skipped "
          f"(torch {torch.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
