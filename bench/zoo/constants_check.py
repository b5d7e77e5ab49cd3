#!/usr/bin/env python3
# Are a zoo model's weights in its container the model's own? For one model and device (on the device machine):
# compiles it (compile_one.py, seeded as the zoo does), packs the .pt2 with `mpspack build`, then compares every
# constant the container holds with the model's state_dict entry of the same original name (dtype, shape, bytes),
# and prints the ones that differ, those without a state_dict entry (folded by AOTInductor), and a summary line.
#   python3 bench/zoo/constants_check.py MODEL cpu|cuda MPSPACK [--work DIR]
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import numpy as np  # noqa: E402


def state_dict_of(model_name):
    import torch
    import models
    torch.manual_seed(models.SEED)  # as compile_one.py builds it
    entry = models.get(model_name)
    model, _ = entry.build()
    return {k.replace(".", "_"): v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, entry


def main():
    p = argparse.ArgumentParser(description="container constants against the model's state_dict")
    p.add_argument("model")
    p.add_argument("device")
    p.add_argument("mpspack")
    p.add_argument("--work", default="/tmp/constants_check")
    a = p.parse_args()
    case = os.path.join(a.work, f"{a.device}_{a.model}")
    os.makedirs(case, exist_ok=True)
    if os.path.exists(os.path.join(case, "model.mpk")):
        os.remove(os.path.join(case, "model.mpk"))
    r = subprocess.run([sys.executable, os.path.join(HERE, "compile_one.py"), a.model, a.device, case],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"constants_check.py: {a.model} {a.device}: compile failed: {r.stdout[-300:]} {r.stderr[-500:]}")
        return 1
    mpk = os.path.join(case, "model.mpk")
    subprocess.run([a.mpspack, "-q", "build", os.path.join(case, "model.pt2"), "-o", mpk], check=False)
    import mpspack
    import torch
    sd, _ = state_dict_of(a.model)
    differ, unmatched, same = [], [], 0
    with mpspack.open(mpk) as c:
        for name, arr in c.constants().items():
            key = name.removeprefix("L__self___").replace(".", "_")
            ref = sd.get(key)
            if ref is None:
                ref = next((v for k, v in sd.items() if k.endswith(key) or key.endswith(k)), None)
            if ref is None:
                unmatched.append(f"{name} {arr.dtype} {list(arr.shape)} mean {float(np.asarray(arr, np.float64).mean()) if arr.size else 0:.4g}")
                continue
            want = ref.numpy() if ref.dtype != torch.bfloat16 else ref.view(torch.uint16).numpy()
            got = np.asarray(arr)
            if got.shape != want.shape or got.tobytes() != np.ascontiguousarray(want).tobytes():
                d = (np.abs(got.astype(np.float64) - want.astype(np.float64)).max()
                     if got.shape == want.shape and got.size else float("nan"))
                differ.append(f"{name}: shape {list(got.shape)} vs {list(want.shape)}, max abs diff {d:.4g}, "
                              f"strides {arr.strides}")
            else:
                same += 1
    for line in differ:
        print("DIFFERS", line)
    for line in unmatched[:40]:
        print("NO STATE_DICT ENTRY", line)
    print(f"{a.model} {a.device}: {same} constants equal the state_dict's, {len(differ)} differ, "
          f"{len(unmatched)} without an entry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
