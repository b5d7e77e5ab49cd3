#!/usr/bin/env python3
# Where inside a model mpspack's result leaves torch's: one block of a transformers model, rebuilt as a module that
# returns every intermediate tensor, compiled with AOTInductor (on the device machine) and run by torch eager and
# by `mpspack run`; prints each intermediate's max abs difference, first to last. The first one that differs
# holds the op to look at.
#   python3 bench/zoo/layer_probe.py convnextv2|segformer cpu|cuda MPSPACK [--work DIR]
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import tensors  # noqa: E402


class ConvNextV2Steps(torch.nn.Module):
    """The stem and the first layer of ConvNextV2Model's first stage, step by step."""

    def __init__(self):
        super().__init__()
        import transformers
        m = transformers.ConvNextV2Model(transformers.ConvNextV2Config()).eval()
        self.emb = m.embeddings
        self.layer = m.encoder.stages[0].layers[0]

    def forward(self, x):
        out = [self.emb(x)]
        L = self.layer
        h = L.dwconv(out[-1]); out.append(h)
        h = h.permute(0, 2, 3, 1); out.append(h.contiguous())
        h = L.layernorm(h); out.append(h)
        h = L.pwconv1(h); out.append(h)
        h = L.act(h); out.append(h)
        h = L.grn(h); out.append(h)
        h = L.pwconv2(h); out.append(h)
        h = h.permute(0, 3, 1, 2); out.append(h.contiguous())
        out.append(L(out[0]))
        return tuple(out)


class SegformerSteps(torch.nn.Module):
    """SegformerModel's first patch embedding and first block, step by step."""

    def __init__(self):
        super().__init__()
        import transformers
        m = transformers.SegformerModel(transformers.SegformerConfig()).eval()
        enc = m.encoder
        self.patch, self.block, self.norm = enc.patch_embeddings[0], enc.block[0][0], enc.layer_norm[0]

    def forward(self, x):
        emb, h, w = self.patch(x)
        out = [emb]
        B = self.block
        ln1 = B.layer_norm_1(emb); out.append(ln1)
        att = B.attention(ln1, h, w)[0]; out.append(att)
        h1 = att + emb; out.append(h1)
        ln2 = B.layer_norm_2(h1); out.append(ln2)
        ff = B.mlp(ln2, h, w); out.append(ff)
        out.append(B(emb, h, w)[0])
        return tuple(out)


def main():
    p = argparse.ArgumentParser(description="per-intermediate differences between torch eager and mpspack")
    p.add_argument("model", choices=("convnextv2", "segformer"))
    p.add_argument("device")
    p.add_argument("mpspack")
    p.add_argument("--work", default="/tmp/layer_probe")
    a = p.parse_args()
    torch.manual_seed(0)
    module = (ConvNextV2Steps() if a.model == "convnextv2" else SegformerSteps()).eval().to(a.device)
    x = torch.randn(1, 3, 256, 256, device=a.device)
    with torch.no_grad():
        want = [t.detach().cpu() for t in module(x)]
    case = os.path.join(a.work, f"{a.device}_{a.model}")
    os.makedirs(case, exist_ok=True)
    pt2 = os.path.join(case, "model.pt2")
    ep = torch.export.export(module, (x,))
    torch._inductor.aoti_compile_and_package(ep, package_path=pt2)
    runner = torch._inductor.aoti_load_package(pt2) if os.environ.get("PROBE_TORCH_RUNTIME") == "1" else None
    mpk = os.path.join(case, "model.mpk")
    if os.path.exists(mpk):
        os.remove(mpk)
    subprocess.run([a.mpspack, "-q", "build", pt2, "-o", mpk], check=True)
    tensors.save_raw(x.cpu(), os.path.join(case, "input0.bin"))
    out_dir = os.path.join(case, "out")
    r = subprocess.run([a.mpspack, "run", mpk, "--device", a.device, "--output", out_dir, "--input",
                        tensors.spec(os.path.join(case, "input0.bin"), "f32", list(x.shape))],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"layer_probe.py: mpspack run failed: {r.stderr.strip()[-400:]}")
        return 1
    ran = runner(x) if runner else None
    for j, w in enumerate(want):
        got = tensors.load_mpspack_output(out_dir, j, list(w.shape))
        d = (got.double() - w.double()).abs().max().item() if w.numel() else 0.0
        extra = ""
        if ran is not None:
            extra = f"   torch runtime vs eager {(ran[j].cpu().double() - w.double()).abs().max().item():.3g}"
        print(f"intermediate {j}: shape {list(w.shape)} max |w| {w.abs().max().item():.3g}  mpspack vs eager {d:.3g}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
