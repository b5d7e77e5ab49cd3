"""A CPU and a CUDA container of the same model share the layers of their identical constants.

The fixtures' CPU and CUDA packages (pt2/blob.pt2, pt2/cuda.pt2) hold the same module, a Linear l of weight
4x8 f32, but with different random values. The CUDA package is rewritten with the CPU's weight values in its
embedded constants (a copy of its zip, the 128 bytes replaced in its wrapper.so), which makes the two the same
model: the CUDA push must then skip the weight's layer, and only it (no GPU is needed to build or push)."""

from __future__ import annotations

import hashlib
import zipfile



def read_entry(pt2, suffix: str) -> bytes:
    with zipfile.ZipFile(pt2) as z:
        return z.read(next(n for n in z.namelist() if n.endswith(suffix)))


def with_weight(src, dst, old: bytes, new: bytes):
    """`src` with the wrapper library's constants `old` replaced by `new` (found exactly once)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("wrapper.so"):
                assert data.count(old) == 1, "the CUDA library's constants are not where expected"
                data = data.replace(old, new)
            zout.writestr(info, data)


def constant_layers(report) -> dict[str, dict]:
    return {l["name"]: l for l in report["layers"] if l["kind"] == "constant"}


def test_cpu_and_cuda_share_identical_constants(cli, registry, fixtures, tmp_path):
    cpu_pt2, cuda_pt2 = fixtures / "pt2" / "blob.pt2", fixtures / "pt2" / "cuda.pt2"
    cpu = tmp_path / "cpu.mpk"
    cli.ok("build", cpu_pt2, "-o", cpu)
    cuda_original = tmp_path / "cuda_original.mpk"
    cli.ok("build", cuda_pt2, "-o", cuda_original)
    weights = cli.json("inspect", cuda_original)["weights"][0]
    old = cuda_original.read_bytes()[weights["offset"]:weights["offset"] + weights["size"]]
    cpu_weight = read_entry(cpu_pt2, "wrapper_weights.blob")
    assert len(old) == len(cpu_weight) == 128 and old != cpu_weight
    same_model = tmp_path / "cuda.pt2"
    with_weight(cuda_pt2, same_model, old, cpu_weight)
    cuda = tmp_path / "cuda.mpk"
    cli.ok("build", same_model, "-o", cuda)
    assert cli.json("inspect", cuda)["libraries"][0]["device"] == "cuda"

    pushed_cpu = cli.json("push", cpu, f"{registry.host}/shared/mlp:cpu", "--plain-http")
    pushed_cuda = cli.json("push", cuda, f"{registry.host}/shared/mlp:cuda", "--plain-http")
    cpu_layer, cuda_layer = constant_layers(pushed_cpu)["l_weight"], constant_layers(pushed_cuda)["l_weight"]
    # The layer is the weight's bytes exactly, whatever build it comes from.
    assert cpu_layer["digest"] == "sha256:" + hashlib.sha256(cpu_weight).hexdigest()
    assert cuda_layer["digest"] == cpu_layer["digest"] and not cuda_layer["sent"]
    # Everything else of the CUDA container (header, library, cubin) differs and went up.
    assert all(l["sent"] for l in pushed_cuda["layers"] if l is not cuda_layer)
    # A CUDA build with other weights shares nothing.
    other = cli.json("push", cuda_original, f"{registry.host}/shared/mlp:cuda-other", "--plain-http")
    assert constant_layers(other)["l_weight"]["sent"]
