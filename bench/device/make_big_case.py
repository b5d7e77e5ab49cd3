# Makes the large external-blob cases of bench/gpu_compare.sh and bench/cpu_scaling.sh with the installed torch
# (device machine): a stack of Linear(D, D) + ReLU layers whose weights come from a fixed seed (so the same torch
# regenerates the same blob anywhere), compiled by aoti_compile_and_package as an external blob
# (package_constants_in_so=False, binary_blob: the flavour ExecuTorch's CUDA backend uses). Writes OUT/big.pt2,
# OUT/input0.bin and OUT/expected0.bin (torch eager's output on DEVICE).
#   GIB=4 OUT=/tmp/big python3 make_big_case.py                    (CUDA, batch 8, D=16384)
#   MIB=64 DEVICE=cpu BATCH=1 OUT=/tmp/s64 python3 make_big_case.py  (D = the largest power of two <= 16384
#                                                                   that one layer of MIB MiB can hold)
#   EMBEDDED=1 ...: the weights embedded in the library instead (AOTInductor's default flavour; its Create
#                   mallocs one block for them all and copies them in)
import os, sys, time
import torch

device = os.environ.get("DEVICE", "cuda")
gib = float(os.environ["MIB"]) / 1024 if "MIB" in os.environ else float(os.environ.get("GIB", "4"))
out = os.environ.get("OUT", "/tmp/big")
batch = int(os.environ.get("BATCH", "8"))
D = int(os.environ.get("DIM", "0"))
if D == 0:
    D = 16384
    while D > 64 and D * D * 4 > gib * (1 << 30):
        D //= 2
layers = max(1, round(gib * (1 << 30) / (D * D * 4)))
os.makedirs(out, exist_ok=True)
torch.manual_seed(20261129)

class BigLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(D, D) for _ in range(layers))
    def forward(self, x):
        for l in self.layers:
            x = torch.relu(l(x))
        return x

t0 = time.time()
m = BigLinear().to(device).eval()
x = torch.randn(batch, D, device=device)
with torch.no_grad():
    ref = m(x)
ep = torch.export.export(m, (x,))
opts = {"aot_inductor.link_libtorch": False}
if os.environ.get("EMBEDDED") != "1":
    opts.update({"aot_inductor.package_constants_in_so": False,
                 "aot_inductor.package_constants_on_disk_format": "binary_blob"})
if device == "cuda":
    opts["aot_inductor.embed_kernel_binary"] = True
path = torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/big.pt2", inductor_configs=opts)
x.cpu().contiguous().numpy().tofile(f"{out}/input0.bin")
ref.cpu().contiguous().numpy().tofile(f"{out}/expected0.bin")
print(f"big.pt2: {layers} x Linear({D},{D}) on {device}, batch {batch}, "
      f"{'embedded' if os.environ.get('EMBEDDED') == '1' else 'external blob'}, {os.path.getsize(path) / 2**30:.2f} GiB, "
      f"made in {time.time() - t0:.0f} s", flush=True)
with open(f"{out}/shape.txt", "w") as f:
    f.write(f"{batch}x{D}\n")
