# How a bfloat16 zoo model's outputs on CUDA compare with torch's, bit for bit, and why: torch eager's outputs of
# the case's model (mlp_bf16, or its steps mlp_bf16_linear and mlp_bf16_linear_gelu) with torch's default BLAS
# library, with cuBLAS and with cuBLASLt (torch.backends.cuda.preferred_blas_library), each compared with the
# others and with mpspack's outputs of the same package (the zoo's --output folder); then the model's first Linear
# computed in torch along the paths an addmm can take (a 1-d bias: cuBLASLt's bias epilogue, one rounding; the
# bias as a 2-d matrix through C; the product rounded, then the bias added), which shows which one mpspack's
# outputs follow. With MPSPACK, also the shim functions the library imports, an exact comparison and
# MPSPACK_PROFILE_SHIM's table of one run.
#   python3 bench/device/bf16_blas.py CASE_DIR [MPSPACK]   (CASE_DIR: /tmp/zoo_work/cuda_mlp_bf16 after a zoo run:
#   MODELS=mlp_bf16,mlp_bf16_linear,mlp_bf16_linear_gelu DEVICES=cuda python3 bench/zoo/zoo.py .device/bin/mpspack)
import json, os, subprocess, sys
import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))
import models  # noqa: E402


def bf16_file(path):
    raw = np.fromfile(path, dtype=np.uint16)
    return (raw.astype(np.uint32) << 16).view(np.float32)


def differ(a, b):
    return f"{int((a != b).sum())} of {a.numel()} differ"


case = sys.argv[1]
with open(os.path.join(case, "meta.json")) as f:
    meta = json.load(f)
shape = meta["outputs"][0]["shape"]
torch.manual_seed(models.SEED)
module, inputs = models.get(meta["model"]).build()
module = module.cuda().eval()
x = inputs[0].cuda()
print(meta["model"], "torch", torch.__version__, "default BLAS library:", torch.backends.cuda.preferred_blas_library())
outs = {}
for lib in ("default", "cublas", "cublaslt"):
    if lib != "default":
        torch.backends.cuda.preferred_blas_library(lib)
    with torch.no_grad():
        outs[lib] = module(x).float().cpu().numpy().ravel()
outs["mpspack"] = bf16_file(os.path.join(case, "mpspack_out", "output0.bin"))
outs["zoo reference"] = bf16_file(os.path.join(case, "expected0.bin"))
names = list(outs)
for i, a in enumerate(names):
    for b in names[i + 1:]:
        d = np.abs(outs[a] - outs[b])
        print(f"{a} vs {b}: {int((d > 0).sum())} of {d.size} differ, max {d.max():.4g}")

linear = module[0] if isinstance(module, torch.nn.Sequential) else None
if isinstance(linear, torch.nn.Linear):
    w, bias = linear.weight, linear.bias
    with torch.no_grad():
        ref = torch.nn.functional.linear(x, w, bias)
        rows = x.shape[0]
        print("the first Linear, against F.linear:")
        print("  addmm, 1-d bias (cuBLASLt's bias epilogue):", differ(torch.addmm(bias, x, w.t()), ref))
        print("  addmm, the bias expanded to 2-d (through C, beta 1):",
              differ(torch.addmm(bias.expand(rows, -1), x, w.t()), ref))
        print("  the product rounded to bf16, then the bias added:", differ(x @ w.t() + bias, ref))
        print("  the product in float32, the bias added, rounded once:",
              differ((torch.mm(x, w.t(), out_dtype=torch.float32) + bias.float()).bfloat16(), ref))

if len(sys.argv) > 2:
    mpk = f"{case}/model.mpk"
    lib = json.loads(subprocess.run([sys.argv[2], "inspect", mpk, "--json"], capture_output=True, text=True,
                                    check=True).stdout)["libraries"][0]
    print("imports:", " ".join(n for n in lib["imports"] if "_cuda_" in n or "_cpu_" in n))
    dims = "x".join(str(n) for n in shape)
    r = subprocess.run([sys.argv[2], "run", mpk, "--device", "cuda", "--input", f"{case}/input0.bin:bf16:8x512",
                        "--expect", f"{case}/expected0.bin:bf16:{dims}", "--rtol", "0", "--atol", "0", "--json"],
                       capture_output=True, text=True, env=dict(os.environ, MPSPACK_PROFILE_SHIM="1"))
    o = json.loads(r.stdout)["outputs"][0]
    print(f"mpspack, exact: {o['mismatches']} of {outs['mpspack'].size} differ from torch eager, "
          f"max {o['max_abs_error']}")
    print(r.stderr[-1500:])
