#!/usr/bin/env python3
# Does torch (as installed on the device machine) run float32 convolutions and products in TF32 by default?
# For a spread of convolution and matmul shapes: the max abs error against a float64 reference of torch's result
# with its default settings, with TF32 forced on, and with it forced off. Default == on-error means TF32 is used.
# Prints torch's precision flags too.  python3 bench/device/tf32_probe.py
import torch

def flags():
    b = torch.backends
    out = {"cudnn.allow_tf32": b.cudnn.allow_tf32, "cuda.matmul.allow_tf32": b.cuda.matmul.allow_tf32,
           "cudnn.version": b.cudnn.version(), "float32_matmul_precision": torch.get_float32_matmul_precision()}
    for name in ("fp32_precision",):
        for where, obj in (("backends", b), ("cudnn", b.cudnn), ("cudnn.conv", getattr(b.cudnn, "conv", None)),
                           ("cuda.matmul", b.cuda.matmul)):
            if obj is not None and hasattr(obj, name):
                out[f"{where}.{name}"] = getattr(obj, name)
    return out

def err(a, ref):
    return (a.double() - ref).abs().max().item()

def conv_row(n, c, o, hw, k, groups=1, stride=1):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, c, hw, hw, generator=g).cuda()
    w = torch.randn(o, c // groups, k, k, generator=g).cuda()
    ref = torch.nn.functional.conv2d(x.double(), w.double(), stride=stride, padding=k // 2, groups=groups)
    res = {}
    for mode in ("default", "on", "off"):
        saved = torch.backends.cudnn.allow_tf32
        if mode != "default":
            torch.backends.cudnn.allow_tf32 = mode == "on"
        res[mode] = err(torch.nn.functional.conv2d(x, w, stride=stride, padding=k // 2, groups=groups), ref)
        torch.backends.cudnn.allow_tf32 = saved
    return res

def mm_row(m, k, n):
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(m, k, generator=g).cuda(), torch.randn(k, n, generator=g).cuda()
    ref = a.double() @ b.double()
    res = {}
    for mode in ("default", "on", "off"):
        saved = torch.backends.cuda.matmul.allow_tf32
        if mode != "default":
            torch.backends.cuda.matmul.allow_tf32 = mode == "on"
        res[mode] = err(a @ b, ref)
        torch.backends.cuda.matmul.allow_tf32 = saved
    return res

if __name__ == "__main__":
    print("torch", torch.__version__, torch.cuda.get_device_name(), flags())
    print(f"{'shape':44} {'default':>10} {'tf32 on':>10} {'tf32 off':>10}  default uses TF32?")
    rows = [("conv 1x3x32x32 -> 16 k3", conv_row(1, 3, 16, 32, 3)), ("conv 1x16x32x32 -> 32 k3", conv_row(1, 16, 32, 32, 3)),
            ("conv 1x64x56x56 -> 64 k3", conv_row(1, 64, 64, 56, 3)), ("conv 8x64x56x56 -> 64 k3", conv_row(8, 64, 64, 56, 3)),
            ("conv 1x256x14x14 -> 256 k3", conv_row(1, 256, 256, 14, 3)), ("conv 1x64x56x56 -> 256 k1", conv_row(1, 64, 256, 56, 1)),
            ("conv 1x3x224x224 -> 64 k7 s2", conv_row(1, 3, 64, 224, 7, stride=2)),
            ("depthwise 1x96x56x56 k7", conv_row(1, 96, 96, 56, 7, groups=96)),
            ("mm 8x512x2048", mm_row(8, 512, 2048)), ("mm 1024x1024x1024", mm_row(1024, 1024, 1024))]
    for name, r in rows:
        tf32 = "yes" if abs(r["default"] - r["on"]) < 1e-12 and r["on"] > 10 * r["off"] else (
            "no" if abs(r["default"] - r["off"]) < 1e-12 else "?")
        print(f"{name:44} {r['default']:10.3g} {r['on']:10.3g} {r['off']:10.3g}  {tf32}")
