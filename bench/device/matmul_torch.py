#!/usr/bin/env python3
# The CPU shim's float32 Linear layers (bench/matmul_cpu.cpp's second table: aoti_torch_cpu_addmm_out and mm_out)
# against torch's addmm and mm on the same shapes, in rounds that alternate which side goes first. Each VARIANT is
# a MPSPACK_CPU_GEMM value for matmul_cpu ("default" leaves it unset; "sgemm": oneDNN's sgemm instead of its matmul
# primitive; "openblas"), or "unpacked" (MPSPACK_CPU_PACK_WEIGHTS=off). Both sides use every core unless
# OMP_NUM_THREADS says otherwise. Median ms per round, then the ratio of the medians of the rounds.
#
#   python3 bench/device/matmul_torch.py MATMUL_CPU [REPS=30] [ROUNDS=3] [VARIANT ...]    (default: default sgemm)
import os
import re
import statistics
import subprocess
import sys
import time

import torch


def mpspack_rows(binary, reps, variant):
    env = dict(os.environ)
    env.pop("MPSPACK_CPU_GEMM", None)
    env.pop("MPSPACK_CPU_PACK_WEIGHTS", None)
    if variant == "unpacked":
        env["MPSPACK_CPU_PACK_WEIGHTS"] = "off"
    elif variant != "default":
        env["MPSPACK_CPU_GEMM"] = variant
    out = subprocess.run([binary, str(reps), "linears"], capture_output=True, text=True, check=True, env=env).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\| (\[(\d+),(\d+)\] @ \[\d+,(\d+)\].*?) \| ([\d.]+) \| ([\d.]+) \|", line)
        if m:
            rows.append((m.group(1), (int(m.group(2)), int(m.group(3)), int(m.group(4))), float(m.group(5)),
                         float(m.group(6))))
    if not rows:
        raise SystemExit(f"matmul_torch.py: {binary} printed no Linear rows")
    return rows


def torch_ms(shape, reps, with_bias):
    m, k, n = shape
    g = torch.Generator().manual_seed(1)
    x, w, b = (torch.rand(*s, generator=g) * 2 - 1 for s in ((m, k), (n, k), (n,)))
    out = torch.empty(m, n)
    ms = []
    for r in range(reps + 5):
        t0 = time.perf_counter()
        if with_bias:
            torch.addmm(b, x, w.t(), out=out)
        else:
            torch.mm(x, w.t(), out=out)
        if r >= 5:
            ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def main():
    if len(sys.argv) < 2:
        print("usage: matmul_torch.py MATMUL_CPU [REPS] [ROUNDS] [VARIANT ...]", file=sys.stderr)
        return 2
    binary = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    variants = sys.argv[4:] or ["default", "sgemm"]
    if os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    ours = {v: [] for v in variants}  # variant -> rounds -> [(mm, addmm)] per shape
    theirs, names, shapes = [], [], []
    for r in range(rounds):  # round 0 starts with mpspack, which names the shapes
        sides = variants + ["torch"] if r % 2 == 0 else ["torch"] + variants
        for side in sides:
            if side == "torch":
                theirs.append([(torch_ms(s, reps, False), torch_ms(s, reps, True)) for s in shapes])
            else:
                rows = mpspack_rows(binary, reps, side)
                names, shapes = [n for n, *_ in rows], [s for _, s, *_ in rows]
                ours[side].append([(a, b) for *_, a, b in rows])
    print(f"{os.cpu_count()} cores, torch {torch.__version__} with {torch.get_num_threads()} threads; {rounds} rounds "
          f"of {reps} calls, sides alternating; ms: median of the rounds' medians (mm / addmm)")
    head = " | ".join(f"mpspack {v}" for v in variants)
    print(f"\n| float32 Linear | {head} | torch | " + " | ".join(f"{v} / torch (addmm)" for v in variants) + " |")
    print("|---" * (2 * len(variants) + 2) + "|")
    for i, name in enumerate(names):
        def med(runs, j):
            return statistics.median(run[i][j] for run in runs)
        cells = [f"{med(ours[v], 0):.3f} / {med(ours[v], 1):.3f}" for v in variants]
        t = f"{med(theirs, 0):.3f} / {med(theirs, 1):.3f}"
        ratios = [f"{med(ours[v], 1) / med(theirs, 1):.2f}x" for v in variants]
        print(f"| {name} | {' | '.join(cells)} | {t} | {' | '.join(ratios)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
