#!/usr/bin/env python3
# The CPU shim's int4 weight-only product (bench/int4_matmul_cpu.cpp: aoti_torch_cpu__weight_int4pack_mm_cpu_tensor)
# against torch's quantized.int4mm_packed_weight_cpu (what AOTInductor calls it for) on the same shapes and group
# sizes, float32 and bfloat16 activations, in rounds that alternate which side goes first. Both sides use every core
# unless OMP_NUM_THREADS says otherwise. Median ms per round, then the ratio of the medians of the rounds. torch's
# times include Python's call into the op (a few microseconds), which shows only on the small int4_mlp rows; the
# zoo's int4_mlp row times torch's C++ runtime instead.
#
#   python3 bench/device/int4_torch.py INT4_MATMUL_CPU [REPS=20] [ROUNDS=3]
import os
import re
import statistics
import subprocess
import sys
import time

import torch

ROW = re.compile(r"\| (\d+) x (\d+) -> (\d+), (\d+) \| ([\d.]+) \| ([\d.]+) \|")


def mpspack_rows(binary, reps):
    out = subprocess.run([binary, str(reps)], capture_output=True, text=True, check=True).stdout
    rows = [((int(m[1]), int(m[2]), int(m[3]), int(m[4])), float(m[5]), float(m[6])) for m in ROW.finditer(out)]
    if not rows:
        raise SystemExit(f"int4_torch.py: {binary} printed no rows")
    return out.splitlines()[0], rows


def torch_ms(shape, reps, dtype):
    m, k, n, group = shape
    g = torch.Generator().manual_seed(1)
    x = (torch.rand(m, k, generator=g) * 2 - 1).to(dtype)
    w = torch.ops.aten._convert_weight_to_int4pack_for_cpu(
        torch.randint(0, 16, (n, k), generator=g, dtype=torch.int32), 1)
    sz = (torch.rand(k // group, n, 2, generator=g) * 0.019 + 0.001).to(dtype)
    group_t = torch.tensor(group, dtype=torch.int64)
    op = torch.ops.quantized.int4mm_packed_weight_cpu
    # as the binary does
    reps = max(3, reps // 4) if m >= 64 else reps * 10 if m * k * n < 1 << 22 else reps
    ms = []
    for r in range(reps + 2):
        t0 = time.perf_counter()
        op(x, w, group_t, sz)
        if r >= 2:
            ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def main():
    if len(sys.argv) < 2:
        print("usage: int4_torch.py INT4_MATMUL_CPU [REPS] [ROUNDS]", file=sys.stderr)
        return 2
    binary = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    if os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    ours, theirs, shapes, header = [], [], [], ""
    for r in range(rounds):  # round 0 starts with mpspack, which names the shapes
        for side in (["mpspack", "torch"] if r % 2 == 0 else ["torch", "mpspack"]):
            if side == "mpspack":
                header, rows = mpspack_rows(binary, reps)
                shapes = [s for s, *_ in rows]
                ours.append([(f32, bf16) for _, f32, bf16 in rows])
            else:
                theirs.append([(torch_ms(s, reps, torch.float32), torch_ms(s, reps, torch.bfloat16)) for s in shapes])
    print(f"{os.cpu_count()} cores, torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()}) with "
          f"{torch.get_num_threads()} threads; {rounds} rounds of {reps} calls, sides alternating; ms: median of the "
          f"rounds' medians\nmpspack: {header}")
    print("\n| M x K -> N, group | mpspack f32 act. | torch f32 act. | mpspack / torch | mpspack bf16 act. | "
          "torch bf16 act. | mpspack / torch |\n|---|---|---|---|---|---|---|")
    for i, (m, k, n, group) in enumerate(shapes):
        o = [statistics.median(run[i][j] for run in ours) for j in range(2)]
        t = [statistics.median(run[i][j] for run in theirs) for j in range(2)]
        print(f"| {m} x {k} -> {n}, {group} | {o[0]:.3f} | {t[0]:.3f} | {o[0] / t[0]:.2f}x | {o[1]:.3f} | "
              f"{t[1]:.3f} | {o[1] / t[1]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
