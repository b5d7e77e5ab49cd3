# Tensors between torch and mpspack for bench/zoo: raw files and the DTYPE:SHAPE specs `mpspack run` reads
# (docs/CLI.md), the folder of outputs `run --output` writes, and the comparison `run --expect` makes
# (|got - want| <= atol + rtol * |want|, NaN equal to NaN), so that torch's side reports errors the same way.
# torch and numpy are imported inside the functions that need them.
import os

MPSPACK_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int64": "i64",
                  "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "bool"}


def dtype_name(t):
    name = str(t.dtype).replace("torch.", "")
    if name not in MPSPACK_DTYPES:
        raise TypeError(f"mpspack has no tensor file dtype for torch.{name}")
    return MPSPACK_DTYPES[name]


def shape_spec(shape):
    return "x".join(str(int(d)) for d in shape) if len(shape) else "scalar"


def spec(path, dtype, shape):
    return f"{path}:{dtype}:{shape_spec(shape)}"


def run_args(flag, folder, entries):
    """`mpspack run`'s FLAG FILE:DTYPE:SHAPE for each recorded tensor (meta.json's {"file", "dtype", "shape"}) in
    FOLDER: ("--input", ...) or ("--expect", ...)."""
    return [a for e in entries for a in (flag, spec(os.path.join(folder, e["file"]), e["dtype"], e["shape"]))]


def run_command(mpspack, folder, device, inputs, *extra):
    """`mpspack run` on FOLDER's model.mpk on DEVICE with the recorded INPUTS (meta.json's entries), then EXTRA."""
    return [mpspack, "run", os.path.join(folder, "model.mpk"), "--device", device,
            *run_args("--input", folder, inputs), *extra]


def flat_outputs(out):
    """A model's outputs as a list of tensors, in the order torch.export flattens them."""
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat_outputs(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in flat_outputs(o)]
    raise TypeError(f"a model output of type {type(out).__name__} is not a tensor")


def save_raw(t, path):
    """Little-endian, row-major, as mpspack's raw tensor files are."""
    import torch
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    t.reshape(-1).view(torch.uint8).numpy().tofile(path)


def largest_magnitude(t):
    """max |t| over its finite elements (None for an empty or non-floating tensor)."""
    import torch
    if not t.is_floating_point() or t.numel() == 0:
        return None
    a = t.detach().float().abs()
    a = a[torch.isfinite(a)]
    return float(a.max()) if a.numel() else None


def save_all(tensors, folder, stem):
    """Writes FOLDER/STEM<i>.bin for each tensor; returns their descriptions (file, dtype, shape, max |value|)."""
    described = []
    for i, t in enumerate(tensors):
        name = f"{stem}{i}.bin"
        save_raw(t, os.path.join(folder, name))
        described.append({"file": name, "dtype": dtype_name(t), "shape": [int(d) for d in t.shape],
                          "max_abs": largest_magnitude(t)})
    return described


def load_mpspack_output(folder, index, shape):
    """Output INDEX of `mpspack run --output FOLDER`: .npy, or raw .bin for bf16 (which NumPy lacks)."""
    import numpy as np
    import torch
    npy = os.path.join(folder, f"output{index}.npy")
    if os.path.exists(npy):
        return torch.from_numpy(np.load(npy))
    raw = np.fromfile(os.path.join(folder, f"output{index}.bin"), dtype=np.int16)
    return torch.from_numpy(raw).view(torch.bfloat16).reshape(shape)


def compare(got, want, rtol, atol):
    """max abs / rel error of GOT against WANT and whether every element is within atol + rtol * |want|."""
    import torch
    if tuple(got.shape) != tuple(want.shape):
        return {"ok": False, "problem": f"shape {list(got.shape)} against {list(want.shape)}"}
    g = got.detach().cpu().to(torch.float64)
    w = want.detach().cpu().to(torch.float64)
    ok = bool(torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True).all())
    agree = (g.isnan() & w.isnan()) | (torch.isinf(g) & (g == w))
    diff = (g - w).abs().masked_fill(agree, 0.0)
    nonzero = (w != 0) & torch.isfinite(w)
    return {"ok": ok,
            "max_abs": float(diff.max()) if diff.numel() else 0.0,
            "max_rel": float((diff[nonzero] / w[nonzero].abs()).max()) if bool(nonzero.any()) else 0.0}


def compare_all(gots, wants, rtol, atol):
    if len(gots) != len(wants):
        return [{"ok": False, "problem": f"{len(gots)} outputs against {len(wants)}"}]
    return [compare(g, w, rtol, atol) for g, w in zip(gots, wants)]


def load_raw(path, dtype, shape):
    """A raw tensor file as save_raw wrote it (DTYPE in mpspack's names, bool stored as uint8)."""
    import torch
    torch_dtype = {"bool": torch.uint8}.get(dtype) or getattr(torch, next(
        name for name, short in MPSPACK_DTYPES.items() if short == dtype))
    with open(path, "rb") as f:
        data = bytearray(f.read())
    t = torch.frombuffer(data, dtype=torch_dtype) if data else torch.empty(0, dtype=torch_dtype)
    t = t.reshape([int(d) for d in shape])
    return t.to(torch.bool) if dtype == "bool" else t


def load_inputs(case_dir, meta):
    """The case's inputs, from the input<i>.bin files compile_one.py wrote."""
    return [load_raw(os.path.join(case_dir, i["file"]), i["dtype"], i["shape"]) for i in meta["inputs"]]
