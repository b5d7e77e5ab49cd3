"""Shared fixtures of the Python package's tests (run by CTest as test "python").

Environment (CTest sets it; tests/CMakeLists.txt): MPSPACK_LIBRARY, the built C API library the package
loads; MPSPACK_BIN, the built executable (only the tests that compare with the CLI or test mpspack.run() use
it); MPSPACK_BINARY_DIR, the build tree (for examples/tiny_mlp/model.so); MPSPACK_SHARED_DIR, the
fixtures (../shared beside the checkout). A missing input skips its tests with the reason shown
(pytest -rs), except under CI=true, where it fails, as the C++ fixture tests do."""

from __future__ import annotations

import os
import pathlib
import shutil
import struct
import sys

import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
if os.environ.get("MPSPACK_PYTHON_INSTALLED") != "1":
    sys.path.insert(0, str(SOURCE_DIR / "python"))

import mpspack  # noqa: E402
import xxhash  # noqa: E402
from metadata_reader import decode_metadata  # noqa: E402


def missing(what: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing (CI=true: fixtures must be present)")
    pytest.skip(f"{what} is missing")


@pytest.fixture(scope="session")
def mpspack_bin() -> str:
    b = os.environ.get("MPSPACK_BIN") or shutil.which("mpspack")
    if not b or not os.path.exists(b):
        missing("the mpspack executable (set MPSPACK_BIN)")
    return b


@pytest.fixture(scope="session")
def shared_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("MPSPACK_SHARED_DIR", SOURCE_DIR.parent / "shared"))


@pytest.fixture(scope="session")
def fixtures(shared_dir) -> pathlib.Path:
    d = shared_dir / "fixtures" / "aoti-2.11"
    if not d.is_dir():
        missing(f"the AOTInductor fixtures ({d})")
    return d


@pytest.fixture(scope="session")
def tiny_so() -> pathlib.Path:
    p = pathlib.Path(os.environ.get("MPSPACK_BINARY_DIR", SOURCE_DIR / "build")) / "examples" / "tiny_mlp" / "model.so"
    if not p.exists():
        missing(f"the bundled example {p} (cmake --build build --target tiny_mlp)")
    return p


@pytest.fixture(scope="session")
def built(tmp_path_factory, fixtures, tiny_so) -> dict:
    """Containers built by mpspack.build() (the C API), by name: the bundled example (embedded weights,
    with a recorded example), the rebuilt fixtures (a plain .so and its weights.blob; embedded) and
    the .pt2 fixtures (with a constants table)."""
    out = tmp_path_factory.mktemp("built")
    e = tiny_so.parent
    made = {}
    mpspack.build(tiny_so, out / "tiny.mpk", example_inputs=[(e / "input0.bin", "f32", (4, 16))],
                  example_outputs=[(e / "expected0.bin", "f32", (4, 8))])
    made["tiny"] = out / "tiny.mpk"
    rb = fixtures / "rebuilt-bookworm"
    mpspack.build(rb / "cpu_mlp_blob" / "model.so", out / "cpu_mlp_blob.mpk", weights=[rb / "cpu_mlp_blob" / "weights.blob"])
    made["cpu_mlp_blob"] = out / "cpu_mlp_blob.mpk"
    mpspack.build(rb / "cpu_cnn_embedded" / "model.so", out / "cpu_cnn_embedded.mpk")
    made["cpu_cnn_embedded"] = out / "cpu_cnn_embedded.mpk"
    for name in ("blob", "pkg"):
        mpspack.build(fixtures / "pt2" / f"{name}.pt2", out / f"pt2_{name}.mpk")
        made[f"pt2_{name}"] = out / f"pt2_{name}.mpk"
    return made


def rewrite(src, dst, edits: dict, grow_last_segment: int = 0) -> None:
    """Copies container `src` to `dst` with metadata scalars changed (path -> value, paths as
    decode_metadata's `positions` names them) and, optionally, its last segment grown by
    `grow_last_segment` zero bytes (a sparse file); the header checksum is recomputed, so the
    result passes the header checks and reaches the reader's later rules."""
    data = bytearray(pathlib.Path(src).read_bytes())
    md_off, md_size = struct.unpack_from("<QQ", data, 24)
    positions: dict = {}
    meta = decode_metadata(bytes(data[md_off:md_off + md_size]), str(src), positions)
    if grow_last_segment:
        last = len(meta["segments"]) - 1
        edits = {f".segments[{last}].size": meta["segments"][last]["size"] + grow_last_segment, **edits}
        data_size, file_size = struct.unpack_from("<QQ", data, 48)
        struct.pack_into("<QQ", data, 48, data_size + grow_last_segment, file_size + grow_last_segment)
    for path, value in edits.items():
        pos, s = positions[path]
        s.pack_into(data, md_off + pos, value)
    rechecksum(data)
    with open(dst, "wb") as f:
        f.write(data)
        if grow_last_segment:
            f.truncate(len(data) + grow_last_segment)


def rechecksum(data: bytearray) -> None:
    """Recomputes the header checksum of a container held in memory (after editing its metadata)."""
    hs, = struct.unpack_from("<I", data, 12)
    md_off, md_size = struct.unpack_from("<QQ", data, 24)
    h = xxhash.xxh3_64()
    h.update(bytes(data[:64]))
    h.update(bytes(8))
    h.update(bytes(data[72:hs]))
    h.update(bytes(data[md_off:md_off + md_size]))
    struct.pack_into("<Q", data, 64, h.intdigest())
