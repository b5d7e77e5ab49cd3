"""torch's side of bench/cuda_conv_host.cpp: host microseconds per conv2d call (no sync between calls, median of
rounds) and the GPU's microseconds per call, on the same shapes, f32, batch 1, torch's defaults (cuDNN, TF32 on).

    python3 bench/device/torch_conv_host.py [calls] [rounds]
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

SHAPES = [  # name, N, C, H, W, O, k, stride, pad, groups: as in bench/cuda_conv_host.cpp
    ("resnet18 3x3 64->64 56x56", 1, 64, 56, 56, 64, 3, 1, 1, 1),
    ("resnet18 1x1 64->128 s2", 1, 64, 56, 56, 128, 1, 2, 0, 1),
    ("resnet18 7x7 3->64 s2 224x224", 1, 3, 224, 224, 64, 7, 2, 3, 1),
    ("effnet dw 3x3 96 s2 112x112", 1, 96, 112, 112, 96, 3, 2, 1, 96),
    ("effnet 1x1 96->24 56x56", 1, 96, 56, 56, 24, 1, 1, 0, 1),
    ("convnext dw 7x7 96 56x56", 1, 96, 56, 56, 96, 7, 1, 3, 96),
]


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}; host us per call, median of "
          f"{rounds} rounds of {calls} calls; gpu us per call\n")
    print("| shape (f32, batch 1) | layout | torch conv2d host | gpu |\n|---|---|---|---|")
    with torch.inference_mode():
        for layout, fmt in (("contiguous", torch.contiguous_format), ("channels-last", torch.channels_last)):
            for shape in SHAPES:
                run(shape, layout, fmt, calls, rounds)


def run(shape, layout, fmt, calls, rounds):
    name, n, c, h, w, o, k, s, p, g = shape
    x = torch.zeros(n, c, h, w, device="cuda").to(memory_format=fmt)
    wt = torch.zeros(o, c // g, k, k, device="cuda").to(memory_format=fmt)
    F.conv2d(x, wt, None, s, p, 1, g)
    torch.cuda.synchronize()
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            F.conv2d(x, wt, None, s, p, 1, g)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        per.append((t1 - t0) * 1e6 / calls)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(calls):
        F.conv2d(x, wt, None, s, p, 1, g)
    b.record()
    b.synchronize()
    print(f"| {name} | {layout} | {statistics.median(per):.1f} | {a.elapsed_time(b) * 1000 / calls:.1f} |")


if __name__ == "__main__":
    main()
