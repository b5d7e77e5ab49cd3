"""The C API's library opened RTLD_LOCAL by the package, as ctypes opens libraries: its shim stays out of the
process's global scope, every rebuilt-bookworm fixture still loads and runs on mpspack's shim (AOTInductor's static
initializers call it when the model library is loaded), and another provider of aoti_torch_* in the process (as
torch's libtorch is) keeps its own binding on both sides, whichever was loaded first.

The other provider is a fake built here with `cc`: libfake_shim.so defines each aoti_torch_* the fixtures import;
aoti_torch_dtype_float32 returns 12345 (mpspack's shim says 6, c10's code) and counts its calls, the others abort.
It is opened RTLD_GLOBAL, as a provider torch put in the global scope. libfake_model.so stands for a model library
torch's runtime loads: it imports aoti_torch_dtype_float32 and must get the fake's, never mpspack's."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR, missing

MPSPACK_FLOAT32 = 6  # c10::ScalarType::Float, what mpspack's aoti_torch_dtype_float32 returns
FAKE_FLOAT32 = 12345


@pytest.fixture(scope="module")
def fakes(tmp_path_factory, fixtures) -> pathlib.Path:
    """libfake_shim.so and libfake_model.so (see the module's docstring), built with cc."""
    cc = shutil.which("cc")
    if cc is None:
        missing("a C compiler (cc) to build the fake aoti_torch_* provider")
    out = tmp_path_factory.mktemp("fake_shim")
    imports = {"aoti_torch_dtype_float32"}
    for so in sorted((fixtures / "rebuilt-bookworm").glob("*/model.so")):
        r = subprocess.run(["nm", "-D", "--undefined-only", str(so)], capture_output=True, text=True, check=True)
        imports.update(re.findall(r"\b(aoti_torch_\w+)", r.stdout))
    lines = ["#include <stdint.h>", "#include <stdlib.h>", "int fake_float32_calls = 0;",
             f"int32_t aoti_torch_dtype_float32(void) {{ ++fake_float32_calls; return {FAKE_FLOAT32}; }}"]
    lines += [f"void {name}(void) {{ abort(); }}" for name in sorted(imports - {"aoti_torch_dtype_float32"})]
    (out / "fake_shim.c").write_text("\n".join(lines) + "\n")
    (out / "fake_model.c").write_text("#include <stdint.h>\nint32_t aoti_torch_dtype_float32(void);\n"
                                      "int32_t float32_code(void) { return aoti_torch_dtype_float32(); }\n")
    for name in ("fake_shim", "fake_model"):
        subprocess.run([cc, "-shared", "-fPIC", "-O1", str(out / f"{name}.c"), "-o", str(out / f"lib{name}.so")],
                       check=True)
    return out


# Run in a fresh interpreter: argv = package folder (or ""), fixtures folder, folder of the fakes, order.
_CHILD = """
import ctypes, json, os, pathlib, sys, tempfile
import numpy as np
package, rebuilt, fakes, order = sys.argv[1:5]
if package:
    sys.path.insert(0, package)
import mpspack
from mpspack import _capi

def fake_shim():
    return ctypes.CDLL(os.path.join(fakes, "libfake_shim.so"), mode=os.RTLD_NOW | os.RTLD_GLOBAL)

shim = fake_shim() if order == "fake-first" else None
_capi.library()
assert _capi._MODE & os.RTLD_GLOBAL == 0, "the package opens its library RTLD_GLOBAL"
process = ctypes.CDLL(None)
if shim is None:
    # Nothing of mpspack's is global: a lookup in the global scope finds no shim function.
    assert not hasattr(process, "aoti_torch_empty_strided"), "mpspack's shim is in the global scope"
    shim = fake_shim()
dtypes = {"torch.float32": "<f4", "torch.int64": "<i8"}
ran = []
with tempfile.TemporaryDirectory() as tmp:
    for case in json.loads(pathlib.Path(rebuilt, "manifest.json").read_text())["cases"]:
        d = pathlib.Path(rebuilt, case["dir"])
        blob = d / "weights.blob"
        out = pathlib.Path(tmp, case["dir"] + ".mpk")
        mpspack.build(d / "model.so", out, weights=[blob] if blob.exists() else [])
        i, o = case["inputs"][0], case["outputs"][0]
        x = np.fromfile(d / "input0.bin", dtypes[i["dtype"]]).reshape(i["shape"])
        want = np.fromfile(d / "expected0.bin", dtypes[o["dtype"]]).reshape(o["shape"])
        with mpspack.load(out) as model:
            y, = model(x)
        assert np.allclose(y, want, rtol=1e-4, atol=1e-5), case["dir"]
        ran.append(case["dir"])
# mpspack's models never called the fake; the fake is still what the global scope gives, and a library bound
# through it (as torch's runtime loads its models) gets the fake's function, not mpspack's.
calls = ctypes.c_int.in_dll(shim, "fake_float32_calls").value
assert calls == 0, f"mpspack's models called the other provider's aoti_torch_dtype_float32 {calls} times"
assert process.aoti_torch_dtype_float32() == %(fake)d
foreign = ctypes.CDLL(os.path.join(fakes, "libfake_model.so"))
got = foreign.float32_code()
assert got == %(fake)d, f"a library bound through the global scope got {got}, not the other provider's"
mine = _capi.library().aoti_torch_dtype_float32()
assert mine == %(mpspack)d, mine
print("ok", order, len(ran), "fixtures")
""" % {"fake": FAKE_FLOAT32, "mpspack": MPSPACK_FLOAT32}


@pytest.mark.parametrize("order", ["fake-first", "mpspack-first"])
def test_rtld_local_beside_another_provider_of_the_shim(fixtures, fakes, order):
    """Every rebuilt-bookworm fixture from the library opened RTLD_LOCAL, with the fake provider opened
    RTLD_GLOBAL before it (fake-first) or after it (mpspack-first): outputs match, mpspack's models never call the
    fake, a library bound through the global scope gets the fake, and mpspack's own shim says its own codes."""
    rebuilt = fixtures / "rebuilt-bookworm"
    if not (rebuilt / "manifest.json").exists():
        missing(f"the rebuilt-bookworm fixtures ({rebuilt})")
    package = "" if os.environ.get("MPSPACK_PYTHON_INSTALLED") == "1" else str(SOURCE_DIR / "python")
    r = subprocess.run([sys.executable, "-c", _CHILD, package, str(rebuilt), str(fakes), order],
                       capture_output=True, text=True, timeout=300)
    last = r.stdout.strip().splitlines()[-1:] or [""]
    assert r.returncode == 0 and last[0].startswith("ok"), f"exit {r.returncode}\n{r.stdout}{r.stderr}"
    assert last[0].split()[2] == str(len(json.loads((rebuilt / "manifest.json").read_text())["cases"]))
