"""mpspack.open() on the C API: the metadata as inspect --json describes it, constants as zero-copy views of the
C library's mapping, verify() with the CLI's report."""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import mpspack
from conftest import rewrite

NAMES = ["tiny", "cpu_mlp_blob", "cpu_cnn_embedded", "pt2_blob", "pt2_pkg"]


@pytest.mark.parametrize("name", NAMES)
def test_metadata_equals_inspect_json(built, mpspack_bin, name):
    path = str(built[name])
    want = json.loads(subprocess.run([mpspack_bin, "inspect", path, "--json"], check=True,
                                     capture_output=True).stdout)
    with mpspack.open(path) as c:
        assert c.to_dict() == want
        assert c.libraries == want["libraries"] and c.segments == want["segments"] and c.weights == want["weights"]


@pytest.mark.parametrize("name", NAMES)
def test_verify_passes_and_matches_cli(built, mpspack_bin, name):
    path = str(built[name])
    want = json.loads(subprocess.run([mpspack_bin, "verify", path, "--json"], check=True,
                                     capture_output=True).stdout)
    with mpspack.open(path) as c:
        assert c.verify() == want
        assert want["ok"]


def test_constants_equal_the_blob_in_the_pt2(built, fixtures):
    """A .pt2 with an external blob: each constant is the blob's bytes at the table's offset,
    read with numpy from the original file."""
    z = zipfile.ZipFile(fixtures / "pt2" / "blob.pt2")
    blob = z.read(next(n for n in z.namelist() if n.endswith("_weights.blob")))
    with mpspack.open(built["pt2_blob"]) as c:
        table = c.weights[0]["constants"]
        consts = c.constants()
        assert sorted(consts) == sorted(t["name"] for t in table) and consts
        for t in table:
            a = consts[t["name"]]
            want = np.frombuffer(blob, np.dtype("<f4"), count=int(np.prod(t["shape"])),
                                 offset=t["offset"]).reshape(t["shape"])
            assert t["dtype"] == "f32" and a.dtype == np.float32 and list(a.shape) == t["shape"]
            assert np.array_equal(a, want)
        assert bytes(c.weights_bytes()) == blob
        with pytest.raises(KeyError, match="no constant named 'nope'"):
            c.constant("nope")


def test_constants_equal_the_library_bytes_when_embedded(built, fixtures):
    """An embedded .pt2 library: the constants are the original library's bytes at the constants region."""
    z = zipfile.ZipFile(fixtures / "pt2" / "pkg.pt2")
    so = z.read(next(n for n in z.namelist() if n.endswith(".so")))
    with mpspack.open(built["pt2_pkg"]) as c:
        lib = c.libraries[0]
        assert lib["flavour"] == "embedded"
        base = lib["constants_region"]["file_offset"]
        for t in c.weights[0]["constants"]:
            a = c.constant(t["name"])
            want = np.frombuffer(so, np.dtype("<f4"), count=a.size, offset=base + t["offset"]).reshape(a.shape)
            assert np.array_equal(a, want)


def test_constants_are_read_only_views_of_one_mapping(built):
    from mpspack import _capi
    with mpspack.open(built["pt2_blob"]) as c:
        a = next(iter(c.constants().values()))
        assert not a.flags.writeable and not a.flags.owndata
        with pytest.raises(ValueError):
            a[(0,) * a.ndim] = 1
        with pytest.raises(ValueError):
            a.flags.writeable = True  # the mapping is read-only: no way to make a view writable
        whole = a.base
        assert whole is c.weights_bytes().base  # one mapping for everything: the whole file, as the C API maps it
        assert whole.dtype == np.uint8 and whole.size == c.header["file_size"] and not whole.flags.owndata
        # The constant's first element is where the C API's descriptor points: a view, not a copy.
        info = _capi.ConstantInfo()
        assert _capi.library().mpspack_container_constant(c._handle.ptr, 0, 0, ctypes.byref(info)) == 0
        assert _capi.text(info.name) == "l_weight"
        assert a.__array_interface__["data"][0] == info.data + info.storage_offset * a.itemsize
        data, size = ctypes.c_void_p(), ctypes.c_uint64()
        _capi.library().mpspack_container_bytes(c._handle.ptr, ctypes.byref(data), ctypes.byref(size))
        assert whole.__array_interface__["data"][0] == data.value
    with pytest.raises(ValueError, match="closed"):
        c.constants()
    assert np.array_equal(a, a.copy())  # still readable after close(): the view keeps the C handle open


def test_bf16_is_its_raw_16_bit_view(built, tmp_path):
    """A bf16 constant (the table edited to say bf16 [4,16]) comes as uint16 holding its bit patterns."""
    dst = tmp_path / "bf16.mpk"
    p = ".weights[0].constants[0]"
    rewrite(built["pt2_blob"], dst, {f"{p}.dtype": 15, f"{p}.shape[1]": 16, f"{p}.stride[0]": 16})
    with mpspack.open(dst) as c:
        assert c.weights[0]["constants"][0]["dtype"] == "bf16"
        a = c.constant("l_weight")
        raw = np.frombuffer(bytes(c.weights_bytes()), np.dtype("<u2"))[:64].reshape(4, 16)
        assert a.dtype == np.uint16 and a.shape == (4, 16) and np.array_equal(a, raw)


def test_strided_view_follows_the_table(built, tmp_path):
    """Strides and storage offset come from the table: a [4,8] view with strides [8,1] and storage
    offset 0, edited to [2,8] with strides [16,1] and offset 8, reads rows 1 and 3."""
    dst = tmp_path / "strided.mpk"
    p = ".weights[0].constants[0]"
    rewrite(built["pt2_blob"], dst, {f"{p}.shape[0]": 2, f"{p}.stride[0]": 16, f"{p}.storage_offset": 8})
    with mpspack.open(built["pt2_blob"]) as full, mpspack.open(dst) as c:
        assert np.array_equal(c.constant("l_weight"), full.constant("l_weight")[1::2])


def test_no_constants_table_is_said_clearly(built, fixtures):
    """A plain model.so carries no table: constants() says so; the weights stay readable as bytes."""
    with mpspack.open(built["cpu_mlp_blob"]) as c:
        assert not c.has_constants_table()
        with pytest.raises(mpspack.NoConstantsTable, match="no constants table"):
            c.constants()
        blob = (fixtures / "rebuilt-bookworm" / "cpu_mlp_blob" / "weights.blob").read_bytes()
        assert bytes(c.weights_bytes()) == blob
        assert bytes(c.weights_bytes(library=0)) == blob
        assert bytes(c.segment_bytes(c.weights[0]["segment"])) == blob


def test_torch_tensors_share_the_mapping(built):
    torch = pytest.importorskip("torch", reason="torch is not installed here: constants(torch=True) not tested")
    with mpspack.open(built["pt2_blob"]) as c:
        a = c.constants()["l_weight"]
        t = c.constants(torch=True)["l_weight"]
        assert isinstance(t, torch.Tensor) and t.dtype == torch.float32 and tuple(t.shape) == a.shape
        assert t.data_ptr() == a.ctypes.data  # the same memory, no copy
        assert torch.equal(t, torch.from_numpy(a.copy()))
    dst = c.path + ".bf16.mpk"
    p = ".weights[0].constants[0]"
    rewrite(c.path, dst, {f"{p}.dtype": 15, f"{p}.shape[1]": 16, f"{p}.stride[0]": 16})
    with mpspack.open(dst) as c:
        t = c.constant("l_weight", torch=True)
        assert t.dtype == torch.bfloat16 and tuple(t.shape) == (4, 16)


def test_torch_missing_is_a_clear_error(built, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails, installed or not
    with mpspack.open(built["pt2_blob"]) as c, pytest.raises(ImportError, match="needs torch"):
        c.constants(torch=True)


def test_verify_finds_a_flipped_byte(built, tmp_path, mpspack_bin):
    data = bytearray(built["pt2_blob"].read_bytes())
    with mpspack.open(built["pt2_blob"]) as c:
        seg = c.segments[c.weights[0]["segment"]]
    data[seg["offset"] + 5] ^= 0x40
    bad = tmp_path / "flipped.mpk"
    bad.write_bytes(data)
    with mpspack.open(bad) as c:  # opening does not read the segments
        with pytest.raises(mpspack.FormatError, match=rf"flipped\.mpk: segment {seg['index']} .* is damaged") as e:
            c.verify()
        report = c.verify(check=False)
    assert not report["ok"] and [s["ok"] for s in report["segments"]] == [True, False]
    cli = subprocess.run([mpspack_bin, "verify", str(bad), "--json"], capture_output=True)
    assert cli.returncode == 1 and json.loads(cli.stdout) == report == e.value.report


def test_verify_finds_non_zero_padding(built, tmp_path):
    data = bytearray(built["pt2_blob"].read_bytes())
    with mpspack.open(built["pt2_blob"]) as c:
        end = c.header["metadata_offset"] + c.header["metadata_size"]
    data[end + 3] = 7
    bad = tmp_path / "padding.mpk"
    bad.write_bytes(data)
    with mpspack.open(bad) as c:
        with pytest.raises(mpspack.FormatError, match="in the padding after the metadata is 0x07, not zero"):
            c.verify()
