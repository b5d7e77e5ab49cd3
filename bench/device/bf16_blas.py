# Which cuBLAS path decides the last bit of a bfloat16 product: torch eager's outputs of the zoo's mlp_bf16 with
# torch's default BLAS library, with cuBLAS and with cuBLASLt (torch.backends.cuda.preferred_blas_library), each
# compared with the others and with mpspack's outputs of the same model (the zoo's --output folder); with MPSPACK,
# also how many of mpspack's outputs differ from torch's under each of the cuBLAS measurement knobs
# (MPSPACK_CUBLAS_CALL, MPSPACK_CUBLAS_WORKSPACE_MIB, MPSPACK_CUBLAS_NO_REDUCED; shim_cuda/cuda_blas.cpp).
#   python3 bench/device/bf16_blas.py CASE_DIR [MPSPACK]   (CASE_DIR: /tmp/zoo_work/cuda_mlp_bf16 after a zoo run:
#   MODELS=mlp_bf16 DEVICES=cuda python3 bench/zoo/zoo.py .device/bin/mpspack)
import json, os, subprocess, sys
import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))
import models  # noqa: E402

case = sys.argv[1]
torch.manual_seed(models.SEED)
module, inputs = models.get("mlp_bf16").build()
module = module.cuda().eval()
x = inputs[0].cuda()
print("torch", torch.__version__, "default BLAS library:", torch.backends.cuda.preferred_blas_library())
outs = {}
for lib in ("default", "cublas", "cublaslt"):
    if lib != "default":
        torch.backends.cuda.preferred_blas_library(lib)
    with torch.no_grad():
        outs[lib] = module(x).float().cpu().numpy().ravel()
raw = np.fromfile(os.path.join(case, "mpspack_out", "output0.bin"), dtype=np.uint16)
outs["mpspack"] = (raw.astype(np.uint32) << 16).view(np.float32)
expected = np.fromfile(os.path.join(case, "expected0.bin"), dtype=np.uint16)
outs["zoo reference"] = (expected.astype(np.uint32) << 16).view(np.float32)
names = list(outs)
for i, a in enumerate(names):
    for b in names[i + 1:]:
        d = np.abs(outs[a] - outs[b])
        print(f"{a} vs {b}: {int((d > 0).sum())} of {d.size} differ, max {d.max():.4g}")

if len(sys.argv) > 2:
    io = ["--device", "cuda", "--input", f"{case}/input0.bin:bf16:8x512", "--expect", f"{case}/expected0.bin:bf16:8x512",
          "--rtol", "0", "--atol", "0", "--json"]
    for knobs in ({}, {"MPSPACK_CUBLAS_CALL": "ex"}, {"MPSPACK_CUBLAS_WORKSPACE_MIB": "32"},
                  {"MPSPACK_CUBLAS_CALL": "ex", "MPSPACK_CUBLAS_WORKSPACE_MIB": "32"}, {"MPSPACK_CUBLAS_NO_REDUCED": "1"},
                  {"MPSPACK_CUBLAS_CALL": "ex", "MPSPACK_CUBLAS_NO_REDUCED": "1"},
                  {"MPSPACK_CUBLAS_CALL": "ex", "MPSPACK_CUBLAS_WORKSPACE_MIB": "4"}):
        r = subprocess.run([sys.argv[2], "run", f"{case}/model.mpk"] + io, capture_output=True, text=True,
                           env=dict(os.environ, **knobs))
        o = json.loads(r.stdout)["outputs"][0]
        print(f"mpspack {knobs or 'default'}: {o['mismatches']} of 4096 differ from torch, max {o['max_abs_error']}")
