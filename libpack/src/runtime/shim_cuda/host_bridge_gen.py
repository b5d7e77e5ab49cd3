#!/usr/bin/python3
"""Writes the CUDA shim's host-bridged fallbacks: for every CPU fallback the shim declares
(libpack/src/runtime/shim/aoti_shim.h, aoti_torch_cpu_X) whose aoti_torch_cuda_X torch 2.11 declares
(all but CPU_ONLY; docs/tools/shim_table.py fails if one is not) and the CUDA shim does not implement itself (cuda_provided.cpp), an aoti_torch_cuda_X that
runs aoti_torch_cpu_X on host copies of its CUDA tensors (host_bridge.hpp) and puts the results on the device.

  host_bridge_gen.py --out-cpp FILE --out-names FILE    (CMake runs it at build time)
  host_bridge_gen.py --list                             (the bridged names, one per line)

The CPU and CUDA functions of one op have the same parameters (both come from the op's schema); parameters are
told apart by their types and torch's names: `AtenTensorHandle out` (and an in-place op's first tensor) is
written back, `AtenTensorHandle* retN` is a result, any other `AtenTensorHandle*` an optional input,
`int32_t* device` with `device_index_` a factory op's device.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM_HEADER = HERE.parent / "shim" / "aoti_shim.h"
NATIVE = HERE / "cuda_provided.cpp"

# Views share their input's storage; the CPU shim makes them for a tensor on any device, so the CUDA function is
# the same function (a host copy would break the aliasing a model may rely on).
VIEWS = {"reshape", "permute", "narrow", "squeeze_dim", "view_dtype", "view_as_real", "view_as_complex",
         "slice_Tensor"}
# The resizes change the handle and grow its own storage in place, on any device, and set_ points the handle at
# another tensor's storage, so they are forwarded too.
FORWARDED = VIEWS | {"resize_", "resize_as_", "set__source_Tensor"}
# The CPU fallbacks torch 2.11's c_shim_cuda.h has no CUDA twin of.
CPU_ONLY = {"_dyn_quant_matmul_4bit", "_dyn_quant_pack_4bit_weight", "_histogramdd_from_bin_cts",
            "_scaled_dot_product_flash_attention_for_cpu", "_weight_int4pack_mm_cpu_tensor", "histogram_bin_ct"}


# Where torch's CUDA kernel lays its results out otherwise than its CPU kernel (whose layout the CPU function
# gives): op -> (HostBridge::Layout, the C++ condition on the op's arguments under which it does).
CUDA_LAYOUT = {
    "max_unpool2d": ("contiguous", "true"),  # a channels-last input gives a contiguous output
    "pad": ("contiguous", 'mode != nullptr && std::string_view(mode) != "constant"'),  # reflect and replicate: contiguous
    "nonzero_static": ("column_major", "true"),  # [n, dims] with strides [1, n], as torch's CUDA nonzero
}

# Ops that also write tensors other than `out` and an in-place op's first one, by parameter name.
WRITTEN = {"_fused_moving_avg_obs_fq_helper": {"running_min", "running_max", "scale", "zero_point"}}


def declarations(text: str) -> dict[str, list[tuple[str, str]]]:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    out = {}
    for name, params in re.findall(r"AOTITorchError\s+aoti_torch_cpu_(\w+)\s*\(([^)]*)\)\s*;", text):
        parsed = []
        for p in " ".join(params.split()).split(","):
            p = p.strip()
            m = re.match(r"(.*?)(\w+)$", p)
            parsed.append((m.group(1).strip(), m.group(2)))
        out[name] = parsed
    return out


def bridged() -> dict[str, list[tuple[str, str]]]:
    native = set(re.findall(r'"aoti_torch_cuda_(\w+)"', NATIVE.read_text()))
    decls = declarations(SHIM_HEADER.read_text())
    return {op: params for op, params in sorted(decls.items()) if op not in CPU_ONLY and op not in native}


def argument(op: str, index: int, ctype: str, name: str, params, first_tensor: int) -> str:
    in_place = op.endswith("_") or "__" in op
    if ctype == "AtenTensorHandle":
        if name == "out" or (in_place and index == first_tensor) or name in WRITTEN.get(op, ()):
            return f"b.in_out({name})"
        return f"b.in({name})"
    if ctype == "AtenTensorHandle*":
        return f"b.result({name})" if re.fullmatch(r"ret\d+", name) else f"b.optional_in({name})"
    if ctype == "const AtenTensorHandle*":
        return f"b.in_list({name}, {name}_len_)"
    if ctype == "const AtenTensorHandle**":
        return f"b.optional_in_list({name}, {name}_len_)"
    if ctype == "int32_t*" and name == "device":
        return f"b.host_device({name})"
    if name == "device_index_":
        return f"b.host_device_index({name})"
    return name


def function(op: str, params) -> str:
    sig = ", ".join(f"{t} {n}" for t, n in params)
    first_tensor = next((i for i, (t, _) in enumerate(params) if t == "AtenTensorHandle"), -1)
    if op in FORWARDED:
        body = f"  return aoti_torch_cpu_{op}({', '.join(n for _, n in params)});\n"
    else:
        args = ", ".join(argument(op, i, t, n, params, first_tensor) for i, (t, n) in enumerate(params))
        layout = ""
        if op in CUDA_LAYOUT:
            kind, condition = CUDA_LAYOUT[op]
            layout = f"    if ({condition}) b.lay_results_out(HostBridge::Layout::{kind});\n"
        body = (f"  return run_on_host(\"aoti_torch_cuda_{op}\", [&](HostBridge& b) {{\n{layout}"
                f"    return aoti_torch_cpu_{op}({args});\n  }});\n")
    return f"AOTITorchError aoti_torch_cuda_{op}({sig}) {{\n{body}}}\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-cpp", type=Path)
    ap.add_argument("--out-names", type=Path)
    ap.add_argument("--list", action="store_true")
    ns = ap.parse_args()
    ops = bridged()
    if ns.list:
        print("\n".join(f"aoti_torch_cuda_{op}" for op in ops))
        return 0
    cpp = ["// Generated by host_bridge_gen.py from aoti_shim.h; do not edit.",
           '#include "runtime/shim_cuda/host_bridge.hpp"', "", "#include <string_view>", "", "using mpspack::shim::cuda::HostBridge;",
           "using mpspack::shim::cuda::run_on_host;", "", 'extern "C" {', ""]
    cpp += [function(op, params) for op, params in ops.items()]
    cpp += ['}  // extern "C"', ""]
    ns.out_cpp.parent.mkdir(parents=True, exist_ok=True)
    ns.out_cpp.write_text("\n".join(cpp))
    ns.out_names.write_text("".join(f'"aoti_torch_cuda_{op}",\n' for op in ops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
