#!/usr/bin/env python3
# The CPU shim's attention (bench/attention_cpu.cpp, its shapes in the same order) against torch's own kernel for
# the same op, aten::_scaled_dot_product_flash_attention_for_cpu, on the same shapes and layouts, in rounds that
# alternate which side goes first. Both sides use every core this process may use unless OMP_NUM_THREADS says
# otherwise (torch.set_num_threads follows it). Median ms per round, then the ratio of the medians of the rounds.
#
#   python3 bench/device/attention_torch.py ATTENTION_CPU [REPS=30] [ROUNDS=3]
import os
import statistics
import subprocess
import sys
import time

import torch

# (B, H, L, E, causal, from_rows): attention_cpu.cpp's shapes, in its order.
SHAPES = [(1, 6, 1500, 64, False, False), (1, 6, 1500, 64, False, True), (1, 4, 128, 64, False, False),
          (1, 4, 128, 64, False, True), (1, 4, 128, 64, True, False), (1, 3, 197, 64, False, True)]


def operand(shape, seed):
    b, h, l, e, _, from_rows = shape
    g = torch.Generator().manual_seed(seed)
    if from_rows:  # [B, L, H, E] memory viewed as [B, H, L, E], as a model's projections hand it over
        return (torch.rand(b, l, h, e, generator=g) * 2 - 1).transpose(1, 2)
    return torch.rand(b, h, l, e, generator=g) * 2 - 1


def torch_ms(shape, reps):
    q, k, v = (operand(shape, s) for s in (1, 2, 3))
    op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    ms = []
    for r in range(reps + 3):
        t0 = time.perf_counter()
        op(q, k, v, 0.0, shape[4])
        if r >= 3:
            ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def mpspack_ms(binary, reps):
    out = subprocess.run([binary, str(reps)], capture_output=True, text=True, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("| [")]
    if len(rows) != len(SHAPES):
        raise SystemExit(f"attention_torch.py: {binary} printed {len(rows)} shapes, this script knows {len(SHAPES)}")
    return [(r.split("|")[1].strip(), float(r.split("|")[2])) for r in rows]


def main():
    if len(sys.argv) < 2:
        print("usage: attention_torch.py ATTENTION_CPU [REPS] [ROUNDS]", file=sys.stderr)
        return 2
    binary, reps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    if os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    ours, theirs, names = [], [], []
    for r in range(rounds):
        sides = ["mpspack", "torch"] if r % 2 == 0 else ["torch", "mpspack"]
        for side in sides:
            if side == "mpspack":
                got = mpspack_ms(binary, reps)
                names = [n for n, _ in got]
                ours.append([m for _, m in got])
            else:
                theirs.append([torch_ms(s, reps) for s in SHAPES])
    print(f"{os.cpu_count()} cores, torch {torch.__version__} with {torch.get_num_threads()} threads; "
          f"{rounds} rounds of {reps} calls, sides alternating; ms: median per round")
    print("\n| attention, float32 | mpspack ms | torch ms | mpspack / torch (medians) |\n|---|---|---|---|")
    for i, name in enumerate(names):
        a, b = [o[i] for o in ours], [t[i] for t in theirs]
        print(f"| {name} | {', '.join(f'{x:.3f}' for x in a)} | {', '.join(f'{x:.3f}' for x in b)} | "
              f"{statistics.median(a) / statistics.median(b):.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
