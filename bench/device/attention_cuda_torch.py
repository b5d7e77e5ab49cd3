#!/usr/bin/env python3
# The CUDA shim's attention each way (bench/attention_cuda.cpp: fused, blocked, and the shim's own choice) beside
# torch's kernel for the same op, aten::_scaled_dot_product_efficient_attention, on the same shapes and layouts
# (float32; q, k, v from [B, L, H, E] rows), in rounds that alternate which side goes first. Host and GPU
# microseconds per call, back to back without a sync: medians of each side's rounds.
#
#   python3 bench/device/attention_cuda_torch.py ATTENTION_CUDA [CALLS=50] [ROUNDS=3]
import statistics
import subprocess
import sys
import time

import torch

# (B, H, L, S, E, causal): attention_cuda.cpp's shapes, in its order.
SHAPES = [(1, 6, 1500, 1500, 64, False), (1, 3, 197, 197, 64, False), (1, 4, 64, 64, 64, False),
          (1, 4, 32, 32, 64, True), (1, 8, 32, 32, 32, True), (1, 6, 256, 256, 64, False),
          (1, 6, 384, 384, 64, False), (1, 6, 512, 512, 64, False), (1, 6, 768, 768, 64, False),
          (1, 6, 1024, 1024, 64, False), (1, 12, 1024, 1024, 64, False), (8, 6, 512, 512, 64, False),
          (8, 12, 128, 128, 64, False)]
WAYS = ["fused", "blocked", "auto"]


def operand(b, h, t, e, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(b, t, h, e, generator=g) * 2 - 1).cuda().transpose(1, 2)


def torch_us(shape, calls, rounds):
    b, h, l, s, e, causal = shape
    q, k, v = operand(b, h, l, e, 1), operand(b, h, s, e, 2), operand(b, h, s, e, 3)
    op = torch.ops.aten._scaled_dot_product_efficient_attention
    op(q, k, v, None, False, is_causal=causal)
    host, gpu = [], []
    for _ in range(rounds):
        torch.cuda.synchronize()
        a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        t0 = time.perf_counter()
        for _ in range(calls):
            op(q, k, v, None, False, is_causal=causal)
        t1 = time.perf_counter()
        z.record()
        z.synchronize()
        host.append((t1 - t0) * 1e6 / calls)
        gpu.append(a.elapsed_time(z) * 1e3 / calls)
    return statistics.median(host), statistics.median(gpu)


def mpspack_us(binary, calls, rounds):
    out = subprocess.run([binary, str(calls), str(rounds)], capture_output=True, text=True, check=True).stdout
    rows = [[c.strip() for c in line.split("|")[1:5]] for line in out.splitlines() if line.startswith("| ")]
    rows = [r for r in rows if r[1] in WAYS]
    if len(rows) != len(SHAPES) * len(WAYS):
        raise SystemExit(f"attention_cuda_torch.py: {binary} printed {len(rows)} rows, expected "
                         f"{len(SHAPES) * len(WAYS)}")
    return [(r[0], r[1], float(r[2]), float(r[3])) for r in rows]


def main():
    if len(sys.argv) < 2:
        print("usage: attention_cuda_torch.py ATTENTION_CUDA [CALLS] [ROUNDS]", file=sys.stderr)
        return 2
    binary = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    ours, theirs = [], []
    for r in range(rounds):
        for side in (["mpspack", "torch"] if r % 2 == 0 else ["torch", "mpspack"]):
            if side == "mpspack":
                ours.append(mpspack_us(binary, calls, 3))
            else:
                theirs.append([torch_us(s, calls, 3) for s in SHAPES])
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; {rounds} rounds of {calls} calls, sides "
          "alternating; us per call, median of the rounds; 'max' is max(host, gpu), what a run waits on")
    print("\n| shape | torch host / gpu (max) | fused host / gpu (max) | blocked host / gpu (max) | "
          "auto host / gpu (max) | auto / torch (max) |\n|---|---|---|---|---|---|")
    for i, shape in enumerate(SHAPES):
        th = statistics.median(t[i][0] for t in theirs)
        tg = statistics.median(t[i][1] for t in theirs)
        cells, mx = {}, {}
        for w, way in enumerate(WAYS):
            row = [o[i * len(WAYS) + w] for o in ours]
            h, g = statistics.median(x[2] for x in row), statistics.median(x[3] for x in row)
            cells[way], mx[way] = f"{h:.1f} / {g:.1f} ({max(h, g):.1f})", max(h, g)
        print(f"| {ours[0][i * len(WAYS)][0]} | {th:.1f} / {tg:.1f} ({max(th, tg):.1f}) | {cells['fused']} | "
              f"{cells['blocked']} | {cells['auto']} | {mx['auto'] / max(th, tg):.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
