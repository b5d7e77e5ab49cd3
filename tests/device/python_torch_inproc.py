#!/usr/bin/env python3
"""torch's own AOTInductor runtime and mpspack in one process (the device machine: torch 2.11 with CUDA), in both
import orders, each order in a fresh interpreter. For each torch-built fixture that torch's runtime can load (it
links libtorch: the "default" and "mmap" flavours), the same model.so is loaded by torch's runtime
(torch._C._aoti.AOTIModelContainerRunnerCpu/Cuda, what torch._export.aot_load wraps) and, built into a container,
by mpspack.load; both run on the fixture's input, several times and interleaved, and each output must match the
fixture's expected one. Both runtimes provide aoti_torch_*: each model must stay bound to its own runtime's (the
model torch loaded to libtorch's, mpspack's to mpspack's), whichever was loaded first; the package opens its C
library RTLD_LOCAL, so the global scope must not offer mpspack's shim to torch's model.

  torch-first:    import torch, load and run torch's model; then mpspack's library loads, its model runs
  mpspack-first:  mpspack's library loads and its model runs before torch is imported; then torch's model

A fixture that torch's runtime cannot load alone, in a fresh process without mpspack, is left out of the
torch-first order with a "skipped" line saying so. Prints one line per fixture and order, "skipped: ..." (exit 0)
where torch, its AOTInductor runtime or a GPU is missing (the CUDA cases alone are skipped without a GPU); exits 1
on any mismatch or failure.

  MPSPACK_LIBRARY=.device/lib/libmpspack_c.so.0 python3 tests/device/python_torch_inproc.py \\
      ../shared/fixtures/aoti-2.11/torch-built [python/]
"""
import json
import os
import subprocess
import sys

CHILD = r"""
import ctypes, json, os, sys, tempfile
fixtures, package, order, cuda = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
sys.path.insert(0, package)
import numpy as np

only = sys.argv[5].split(",") if len(sys.argv) > 5 else None
cases = [c for c in json.load(open(os.path.join(fixtures, "manifest.json")))["cases"]
         if "libtorch.so" in c.get("needed", []) and (c["device"] == "cpu" or cuda)
         and (only is None or c["dir"] in only)]
tmp = tempfile.mkdtemp()

def arrays(case):
    src = os.path.join(fixtures, case["dir"])
    i0, o0 = case["inputs"][0], case["outputs"][0]
    x = np.fromfile(os.path.join(src, "input0.bin"), "<f4").reshape(i0["shape"])
    want = np.fromfile(os.path.join(src, "expected0.bin"), "<f4").reshape(o0["shape"])
    return x, want

def mpspack_model(case):
    import mpspack
    src = os.path.join(fixtures, case["dir"])
    out = os.path.join(tmp, case["dir"] + ".mpk")
    mpspack.build(os.path.join(src, "model.so"), out)
    return mpspack.load(out, device="cuda:0" if case["device"] == "cuda" else "cpu")

def torch_model(case):
    import torch
    so = os.path.join(fixtures, case["dir"], "model.so")
    aoti = torch._C._aoti
    if case["device"] == "cuda":
        # The kernels' files sit beside model.so; the library names them by the folder it was compiled in.
        runner = aoti.AOTIModelContainerRunnerCuda(so, 1, "cuda:0", os.path.dirname(so))
    else:
        runner = aoti.AOTIModelContainerRunnerCpu(so, 1)
    return runner

def run_torch(runner, case, x):
    import torch
    t = torch.from_numpy(x)
    if case["device"] == "cuda":
        t = t.cuda()
    try:
        out = runner.run([t])
    except TypeError:  # a binding without the stream handle's default
        out = runner.run([t], None)
    return out[0].cpu().numpy()

def run_mpspack(model, x):
    y, = model(x)
    return np.asarray(y)

def close(got, want, case):
    # TF32 products on the GPU: torch's own tests' tolerance; `mpspack run`'s float32 one on the CPU.
    rtol, atol = (1e-2, 1e-3) if case["device"] == "cuda" else (1e-4, 1e-5)
    return got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=atol)

def shim_provider():
    # Which file the global scope's aoti_torch_empty_strided comes from ("" when none): never mpspack's library.
    class DlInfo(ctypes.Structure):
        _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p),
                    ("saddr", ctypes.c_void_p)]
    process = ctypes.CDLL(None)
    try:
        f = process.aoti_torch_empty_strided
    except AttributeError:
        return ""
    info = DlInfo()
    process.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    if not process.dladdr(ctypes.cast(f, ctypes.c_void_p), ctypes.byref(info)):
        return "?"
    return (info.fname or b"?").decode()

bad = 0
def step(what):
    print("step " + what, flush=True)

for case in cases:
    x, want = arrays(case)
    step(f"{case['dir']}: {order}")
    if order == "torch-alone":  # torch's runner alone, without mpspack: whether it loads the case at all
        torch_model(case)
        continue
    if order == "torch-first":
        import torch
        step("torch's runner loads"); theirs = torch_model(case)
        step("torch's runner runs"); t0 = run_torch(theirs, case, x)
        step("mpspack loads"); mine = mpspack_model(case)
        step("mpspack runs"); m0 = run_mpspack(mine, x)
    else:
        step("mpspack loads"); mine = mpspack_model(case)
        step("mpspack runs"); m0 = run_mpspack(mine, x)
        import torch
        step("torch's runner loads"); theirs = torch_model(case)
        step("torch's runner runs"); t0 = run_torch(theirs, case, x)
    results = [("torch", t0), ("mpspack", m0)]
    for _ in range(3):  # interleaved: neither side's later calls reach the other's shim
        results.append(("mpspack", run_mpspack(mine, x)))
        results.append(("torch", run_torch(theirs, case, x)))
    mine.close()
    wrong = [who for who, got in results if not close(got, want, case)]
    provider = shim_provider()
    leaked = "libmpspack_c" in provider
    ok = not wrong and not leaked
    diff = max(float(np.abs(got - want).max()) for _, got in results)
    print(("ok  " if ok else "FAIL") + f" {order} {case['dir']}: torch {torch.__version__}'s runtime and mpspack "
          f"each ran 4 times, max abs diff {diff:.3g}" + (f"; wrong: {', '.join(sorted(set(wrong)))}" if wrong else "")
          + f"; global aoti_torch_empty_strided from {provider or 'nowhere'}")
    bad += not ok
if not cases and only is None:
    print("FAIL no torch-built fixture that torch's runtime loads in " + fixtures)
    sys.exit(1)
sys.exit(1 if bad else 0)
"""


# torch's runner alone, in a fresh interpreter without mpspack (CHILD's "torch-alone"): the fixtures whose model it
# loads. On the device machine it crashed (SIGSEGV) on the torch-built fixtures in a process without mpspack, and
# loaded them after mpspack had loaded them: a torch-first order for those would test torch's runtime alone, so they
# are skipped there, visibly, with its exit status.
def torch_loads_alone(fixtures, package, cuda):
    loads = []
    for c in json.load(open(os.path.join(fixtures, "manifest.json")))["cases"]:
        if "libtorch.so" not in c.get("needed", []) or (c["device"] == "cuda" and not cuda):
            continue
        r = subprocess.run([sys.executable, "-c", CHILD, fixtures, package, "torch-alone", "1" if cuda else "0",
                            c["dir"]], capture_output=True)
        if r.returncode == 0:
            loads.append(c["dir"])
        else:
            print(f"skipped torch-first {c['dir']}: torch's runtime alone, without mpspack in the process, exits "
                  f"{r.returncode} loading it")
    return loads


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    fixtures = sys.argv[1]
    package = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                  "..", "python")
    try:
        import torch
    except ImportError as e:
        print(f"skipped: torch does not import here ({e}); this test runs on the device machine")
        return 0
    if not hasattr(getattr(torch, "_C", None), "_aoti"):
        print(f"skipped: torch {torch.__version__} has no AOTInductor runtime (torch._C._aoti; 2.2 and later)")
        return 0
    cuda = torch.cuda.is_available()
    if not cuda:
        print(f"skipped the CUDA cases: torch {torch.__version__} sees no CUDA device")
    if not os.path.exists(os.path.join(fixtures, "manifest.json")):
        print(f"FAIL no manifest.json in {fixtures}")
        return 1
    status = 0
    alone = torch_loads_alone(fixtures, package, cuda)
    for order in ("torch-first", "mpspack-first"):
        # faulthandler: a crash in either runtime prints the Python stack it happened under.
        only = [",".join(alone)] if order == "torch-first" else []
        if order == "torch-first" and not alone:
            continue
        r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", CHILD, fixtures, package, order,
                            "1" if cuda else "0", *only], capture_output=True, text=True)
        sys.stdout.write("".join(line + "\n" for line in r.stdout.splitlines() if line.startswith(("ok", "FAIL"))))
        if r.returncode != 0:
            steps = [line for line in r.stdout.splitlines() if line.startswith("step ")]
            sys.stdout.write(f"{order}: exit {r.returncode} after {steps[-1] if steps else 'no step'}\n"
                             f"{r.stderr[-3000:]}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
