# Makes the large external-blob CUDA case of bench/gpu_compare.sh with the installed torch (device machine):
# a stack of Linear(D, D) + ReLU layers whose weights come from a fixed seed (so the same torch regenerates
# the same blob anywhere), compiled by aoti_compile_and_package as an external blob (package_constants_in_so=
# False, binary_blob: the flavour ExecuTorch's CUDA backend uses). Writes OUT/big.pt2, OUT/input0.bin and
# OUT/expected0.bin (torch eager's output on the GPU).
#   GIB=4 OUT=/tmp/big python3 make_big_case.py
import os, sys, time
import torch

gib = float(os.environ.get("GIB", "4"))
out = os.environ.get("OUT", "/tmp/big")
D = int(os.environ.get("DIM", "16384"))
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
m = BigLinear().cuda().eval()
x = torch.randn(8, D, device="cuda")
with torch.no_grad():
    ref = m(x)
ep = torch.export.export(m, (x,))
opts = {"aot_inductor.package_constants_in_so": False,
        "aot_inductor.package_constants_on_disk_format": "binary_blob",
        "aot_inductor.link_libtorch": False,
        "aot_inductor.embed_kernel_binary": True}
path = torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/big.pt2", inductor_configs=opts)
x.cpu().contiguous().numpy().tofile(f"{out}/input0.bin")
ref.cpu().contiguous().numpy().tofile(f"{out}/expected0.bin")
print(f"big.pt2: {layers} x Linear({D},{D}), {os.path.getsize(path) / 2**30:.2f} GiB, made in {time.time() - t0:.0f} s",
      flush=True)
