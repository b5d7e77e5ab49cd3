"""torch's side of bench/cuda_conv_host.cpp: host microseconds per convolution call (no sync between calls, median of
rounds) and the GPU's microseconds per call, on the same shapes, f32, batch 1, torch's defaults (cuDNN, TF32 on).

    python3 bench/device/torch_conv_host.py [calls] [rounds]
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

SHAPES = [  # name, N, C, O, groups, in, kernel, stride, pad, dilation: as in bench/cuda_conv_host.cpp
    ("resnet18 3x3 64->64 56x56", 1, 64, 64, 1, (56, 56), (3, 3), (1, 1), (1, 1), (1, 1)),
    ("resnet18 1x1 64->128 s2", 1, 64, 128, 1, (56, 56), (1, 1), (2, 2), (0, 0), (1, 1)),
    ("resnet18 7x7 3->64 s2 224x224", 1, 3, 64, 1, (224, 224), (7, 7), (2, 2), (3, 3), (1, 1)),
    ("effnet dw 3x3 96 s2 112x112", 1, 96, 96, 96, (112, 112), (3, 3), (2, 2), (1, 1), (1, 1)),
    ("effnet 1x1 96->24 56x56", 1, 96, 24, 1, (56, 56), (1, 1), (1, 1), (0, 0), (1, 1)),
    ("convnext dw 7x7 96 56x56", 1, 96, 96, 96, (56, 56), (7, 7), (1, 1), (3, 3), (1, 1)),
    ("3-D 3x3x3 3->16 8x56x56", 1, 3, 16, 1, (8, 56, 56), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1)),
    ("3-D 3x3x3 16->32 s2", 1, 16, 32, 1, (8, 56, 56), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1)),
    ("3-D dw 3x3x3 32 4x28x28", 1, 32, 32, 32, (4, 28, 28), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1)),
    ("3-D 1x1x1 32->64", 1, 32, 64, 1, (4, 28, 28), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1)),
    ("3-D 1x3x3 s(1,2,2) dil 2", 1, 64, 64, 1, (4, 28, 28), (1, 3, 3), (1, 2, 2), (0, 2, 2), (1, 2, 2)),
]


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}; host us per call, median of "
          f"{rounds} rounds of {calls} calls; gpu us per call\n")
    print("| shape (f32, batch 1) | layout | torch conv2d host | gpu |\n|---|---|---|---|")
    with torch.inference_mode():
        for channels_last in (False, True):
            for shape in SHAPES:
                run(shape, channels_last, calls, rounds)


def run(shape, channels_last, calls, rounds):
    name, n, c, o, g, size, k, s, p, d = shape
    fmt = torch.contiguous_format
    if channels_last:
        fmt = torch.channels_last if len(size) == 2 else torch.channels_last_3d
    layout = "channels-last" if channels_last else "contiguous"
    x = torch.zeros(n, c, *size, device="cuda").to(memory_format=fmt)
    wt = torch.zeros(o, c // g, *k, device="cuda").to(memory_format=fmt)
    conv = F.conv2d if len(size) == 2 else F.conv3d
    conv(x, wt, None, s, p, d, g)
    torch.cuda.synchronize()
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            conv(x, wt, None, s, p, d, g)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        per.append((t1 - t0) * 1e6 / calls)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(calls):
        conv(x, wt, None, s, p, d, g)
    b.record()
    b.synchronize()
    print(f"| {name} | {layout} | {statistics.median(per):.1f} | {a.elapsed_time(b) * 1000 / calls:.1f} |")


if __name__ == "__main__":
    main()
