#!/usr/bin/env python3
"""The Python package on the device machine (torch 2.x with CUDA): each torch-built CUDA fixture built, loaded on
cuda:0 and run on torch CUDA tensors (DLPack in and out, the outputs left on the GPU), with torch imported before
the package's library is loaded and after it, each order in a fresh interpreter; torch's own ops keep working in
both. Prints one line per fixture and order; exits 1 on any mismatch.

  MPSPACK_LIBRARY=.device/lib/libmpspack_c.so.0 python3 tests/device/python_cuda.py FIXTURES [python/]
"""
import json
import os
import subprocess
import sys

CHILD = r"""
import json, os, sys, tempfile
fixtures, package, order = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, package)
if order == "torch-first":
    import torch
import mpspack
import numpy as np
if order == "mpspack-first":
    mpspack.open  # the library loads on first use: make it load before torch
    import torch
cases = json.load(open(os.path.join(fixtures, "manifest.json")))["cases"]
ran = bad = 0
for case in cases:
    if case.get("device") != "cuda":
        continue
    src = os.path.join(fixtures, case["dir"])
    out = os.path.join(tempfile.mkdtemp(), case["dir"] + ".mpk")
    blob = os.path.join(src, "weights.blob")
    mpspack.build(os.path.join(src, "model.so"), out, weights=[blob] if os.path.exists(blob) else [])
    i0, o0 = case["inputs"][0], case["outputs"][0]
    x = torch.from_numpy(np.fromfile(os.path.join(src, "input0.bin"), "<f4").reshape(i0["shape"])).cuda()
    want = torch.from_numpy(np.fromfile(os.path.join(src, "expected0.bin"), "<f4").reshape(o0["shape"]))
    with mpspack.load(out, device="cuda:0") as model:
        y, = model(x)
        ok = isinstance(y, torch.Tensor) and y.is_cuda and torch.allclose(y.cpu(), want, rtol=1e-2, atol=1e-3)
    z = (x @ x.T).sum().item()  # torch's own CUDA ops after mpspack's ran
    print(("ok  " if ok else "FAIL") + f" {order} {case['dir']}: output on {y.device}, max abs "
          f"{(y.cpu() - want).abs().max().item():.3g}; torch's own matmul still runs ({z:.3g})")
    ran += 1
    bad += not ok
sys.exit(1 if bad or not ran else 0)
"""


def main() -> int:
    fixtures = sys.argv[1]
    package = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "..", "python")
    status = 0
    for order in ("torch-first", "mpspack-first"):
        r = subprocess.run([sys.executable, "-c", CHILD, fixtures, package, order], capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        if r.returncode != 0:
            sys.stdout.write(r.stderr[-1500:])
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
