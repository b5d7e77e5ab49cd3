#!/usr/bin/env python3
# Where a zoo model's outputs part: for one model and device (on the device machine), compiles it (compile_one.py),
# then puts three results side by side, each output of each call: torch eager's (the references compile_one wrote),
# torch's runtime on the same .pt2 (capi_runner.py, in this process) and mpspack's (`mpspack run --output`), and
# prints the max abs / max rel difference of each pair as one table. A difference that torch's runtime shares
# with mpspack against eager is AOTInductor's; one only mpspack has is ours.
# An entry with several input sets (models.Entry.calls) gets a line per call: torch's runtime runs them in order on
# one loaded model; mpspack runs each in a process of its own (run takes one input set per process), so for a
# "sequence" entry its later calls are compared with eager's fresh model (marked *), not with the sequence.
#   python3 bench/zoo/diverge.py MODEL --device cpu|cuda [--mpspack build/bin/mpspack] [--work DIR] [--reuse]
import argparse
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tensors  # noqa: E402
import zoo  # noqa: E402


def fail(msg):
    print(f"diverge.py: {msg}", file=sys.stderr)
    sys.exit(1)


def compile_case(model, device, case, reuse):
    meta = zoo.read_meta(case)
    if reuse and meta and meta.get("ok"):
        return meta
    r = subprocess.run([sys.executable, os.path.join(HERE, "compile_one.py"), model, device, case],
                       capture_output=True, text=True)
    meta = zoo.read_meta(case)
    if not meta or not meta.get("ok"):
        fail(f"{model} {device}: torch could not compile it: {(meta or {}).get('error') or r.stderr[-500:]}")
    return meta


def mpspack_outputs(mpspack, case, device, k, inputs, outputs, env):
    """One `mpspack run` process on input set K: its outputs, or the reason it gave none."""
    out_dir = os.path.join(case, f"diverge_mpspack_call{k}")
    cmd = tensors.run_command(mpspack, case, device, inputs, "--output", out_dir)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None, f"mpspack run exit {r.returncode}: {r.stderr.strip()[-200:]} ({shlex.join(cmd)})"
    return [tensors.load_mpspack_output(out_dir, j, o["shape"]) for j, o in enumerate(outputs)], None


def cell(got, want):
    if got is None or want is None:
        return "–"
    c = tensors.compare(got, want, 0.0, 0.0)
    return c.get("problem") or f"{c['max_abs']:.2g} / {c['max_rel']:.2g}"


def main():
    p = argparse.ArgumentParser(description="max abs / rel differences: torch eager, torch's runtime, mpspack")
    p.add_argument("model")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--mpspack", default="build/bin/mpspack")
    p.add_argument("--work", default="/tmp/zoo_diverge")
    p.add_argument("--reuse", action="store_true", help="use a case compiled earlier in WORK")
    a = p.parse_args()
    mpspack = os.path.abspath(a.mpspack)
    if not os.access(mpspack, os.X_OK):
        fail(f"{a.mpspack}: no mpspack executable there")
    case = os.path.join(a.work, f"{a.device}_{a.model}")
    os.makedirs(case, exist_ok=True)
    meta = compile_case(a.model, a.device, case, a.reuse)
    env = zoo.mpspack_env()
    r = subprocess.run([mpspack, "-q", "build", os.path.join(case, "model.pt2"), "-o", os.path.join(case, "model.mpk")],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        fail(f"mpspack build: {r.stderr.strip()[-300:]}")

    import torch
    import capi_runner
    kind = meta.get("calls_kind", "")
    calls = [{"inputs": meta["inputs"], "outputs": meta["outputs"]}] + meta.get("calls", [])
    if kind:
        saved = torch.load(os.path.join(case, "calls.pt"))
        eager, fresh = saved["outputs"], saved["fresh_outputs"]
    else:
        eager = fresh = [torch.load(os.path.join(case, "expected.pt"))]
    try:
        model = capi_runner.CApiModel(torch, case, a.device)
        runtime_error = None
    except Exception as e:  # the table still has eager against mpspack
        model, runtime_error = None, f"{type(e).__name__}: {e}"[:300]

    lines = ["| call | output | dtype shape | eager vs torch runtime | eager vs mpspack | torch runtime vs mpspack |",
             "|---|---|---|---|---|---|"]
    notes = []
    for k, call in enumerate(calls):
        inputs = [x.to(a.device) for x in
                  (tensors.load_raw(os.path.join(case, i["file"]), i["dtype"], i["shape"]) for i in call["inputs"])]
        runtime = None
        if model is not None:
            try:
                with torch.inference_mode():
                    runtime = [t.detach().cpu() for t in tensors.flat_outputs(model.run(inputs))]
            except Exception as e:
                notes.append(f"call {k + 1}: torch runtime: {type(e).__name__}: {e}"[:300])
        ours, why = mpspack_outputs(mpspack, case, a.device, k, call["inputs"], call["outputs"], env)
        if why:
            notes.append(f"call {k + 1}: {why}")
        stateful = kind == "sequence" and k > 0
        for j, o in enumerate(call["outputs"]):
            got_rt = runtime[j] if runtime and j < len(runtime) else None
            got_ours = ours[j] if ours else None
            lines.append(f"| {k + 1} | {j} | {o['dtype']} {'x'.join(map(str, o['shape'])) or 'scalar'} | "
                         f"{cell(got_rt, eager[k][j])} | {cell(got_ours, fresh[k][j])}{' *' if stateful else ''} | "
                         f"{'– (state differs)' if stateful else cell(got_ours, got_rt)} |")
    print(f"{a.model} on {a.device}: max abs / max rel difference of each pair")
    print("\n".join(lines))
    if kind == "sequence":
        print("* mpspack runs each call in a fresh process: against eager's fresh model for that call alone")
    if runtime_error:
        notes.append(f"torch runtime could not load the package: {runtime_error}")
    for n in notes:
        print("note: " + n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
