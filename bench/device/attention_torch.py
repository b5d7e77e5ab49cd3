#!/usr/bin/env python3
# The CPU shim's attention (bench/attention_cpu.cpp, its shapes in the same order) against torch's own kernel for
# the same op, aten::_scaled_dot_product_flash_attention_for_cpu, on the same shapes, layouts and masks, in rounds
# that alternate which side goes first. Both sides use every core this process may use unless OMP_NUM_THREADS says
# otherwise (torch.set_num_threads follows it). Median ms per round, then the ratio of the medians of the rounds.
#
#   python3 bench/device/attention_torch.py ATTENTION_CPU [REPS=30] [ROUNDS=3]
#
# A torch without the op (before 2.1: Debian 12's 1.13 on the development VM) is timed on a stand-in instead, said
# so in the table's header: baddbmm (scale, and the mask or the causal mask added in the same call) + softmax + bmm
# over [B*H, L, E] operands made contiguous, and the mask expanded to [B*H, L, S], before the timed calls.
import os
import statistics
import subprocess
import sys
import time

import torch

# (B, H, L, S, E, causal, from_rows, mask, bf16): attention_cpu.cpp's shapes, in its order. mask: None,
# "expanded" ([B,1,1,S] viewed as [B,1,L,S] with stride 0 on L) or "dense" ([B,1,L,S]).
SHAPES = [
    (1, 6, 1500, 1500, 64, False, False, None, False),
    (1, 6, 1500, 1500, 64, False, True, None, False),
    (1, 4, 128, 128, 64, False, False, None, False),
    (1, 4, 128, 128, 64, False, True, None, False),
    (1, 4, 128, 128, 64, True, False, None, False),
    (1, 3, 197, 197, 64, False, True, None, False),
    (1, 12, 128, 128, 64, False, True, None, False),
    (1, 12, 128, 128, 64, False, True, "expanded", False),
    (8, 12, 128, 128, 64, False, True, None, False),
    (8, 12, 128, 128, 64, False, True, "dense", False),
    (1, 12, 128, 128, 64, True, True, None, False),
    (1, 12, 1, 512, 64, False, False, "expanded", False),
    (1, 12, 197, 197, 64, False, True, None, False),
    (1, 14, 128, 128, 64, True, True, None, False),
    (1, 14, 128, 128, 64, True, True, None, True),
    (1, 8, 1500, 1500, 64, False, True, None, False),
]


def operand(shape, rows, seed):
    b, h, _, _, e, _, from_rows, _, bf16 = shape
    g = torch.Generator().manual_seed(seed)
    dtype = torch.bfloat16 if bf16 else torch.float32
    if from_rows:  # [B, L, H, E] memory viewed as [B, H, L, E], as a model's projections hand it over
        return (torch.rand(b, rows, h, e, generator=g) * 2 - 1).to(dtype).transpose(1, 2)
    return (torch.rand(b, h, rows, e, generator=g) * 2 - 1).to(dtype)


def mask_of(shape):
    b, _, l, s, _, _, _, kind, bf16 = shape
    if kind is None:
        return None
    pad = torch.zeros(b, 1, 1, s)
    pad[..., s - s // 8:] = torch.finfo(torch.float32).min  # as attention_cpu.cpp's padding mask
    pad = pad.to(torch.bfloat16 if bf16 else torch.float32)
    return pad.expand(b, 1, l, s) if kind == "expanded" else pad.expand(b, 1, l, s).contiguous()


def has_op():
    return hasattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu")


def torch_call(shape):
    """The timed call, with its operands made outside it."""
    b, h, l, s, e, causal, _, _, _ = shape
    q, k, v = operand(shape, l, 1), operand(shape, s, 2), operand(shape, s, 3)
    mask = mask_of(shape)
    if has_op():
        op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
        return lambda: op(q, k, v, 0.0, causal, attn_mask=mask)
    q3, k3, v3 = (t.reshape(b * h, -1, e).contiguous() for t in (q, k, v))
    bias = torch.zeros(b, h, l, s, dtype=q.dtype) if mask is None else mask.expand(b, h, l, s).clone()
    if causal:
        bias = bias.masked_fill(torch.ones(l, s, dtype=torch.bool).triu(1), float("-inf"))
    bias = bias.reshape(b * h, l, s).contiguous()
    scale = e ** -0.5
    return lambda: torch.bmm(torch.softmax(torch.baddbmm(bias, q3, k3.transpose(1, 2), alpha=scale), -1), v3)


def torch_ms(shape, reps):
    call = torch_call(shape)
    ms = []
    for r in range(reps + 3):
        t0 = time.perf_counter()
        call()
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
    what = "_scaled_dot_product_flash_attention_for_cpu" if has_op() else "stand-in baddbmm + softmax + bmm"
    print(f"{os.cpu_count()} cores, torch {torch.__version__} ({what}) with {torch.get_num_threads()} threads; "
          f"{rounds} rounds of {reps} calls, sides alternating; ms: median per round")
    print("\n| attention | mpspack ms | torch ms | mpspack / torch (medians) |\n|---|---|---|---|")
    for i, name in enumerate(names):
        a, b = [o[i] for o in ours], [t[i] for t in theirs]
        print(f"| {name} | {', '.join(f'{x:.3f}' for x in a)} | {', '.join(f'{x:.3f}' for x in b)} | "
              f"{statistics.median(a) / statistics.median(b):.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
