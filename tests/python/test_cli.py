"""mpspack.build() (the C API, in this process) and mpspack.run() (the executable): the CLI's --json reports,
the package's errors for a failed build and CommandError for a failed run."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import mpspack


def test_build_and_run_return_the_json_reports(tmp_path, mpspack_bin, tiny_so):
    e = tiny_so.parent
    out = tmp_path / "tiny.mpk"
    report = mpspack.build(tiny_so, out, example_inputs=[(e / "input0.bin", "f32", (4, 16))],
                           example_outputs=[(e / "expected0.bin", "f32", (4, 8))])
    assert report == {"schema_version": 1, "output": str(out), "libraries": 1, "segments": 4,
                      "segment_bytes": report["segment_bytes"]}
    with mpspack.open(out) as c:
        assert report["segment_bytes"] == sum(s["size"] for s in c.segments)
    ran = mpspack.run(out, mpspack_bin=mpspack_bin)
    assert ran["ok"] and ran["checked"] and ran["outputs"][0]["match"] and ran["outputs"][0]["shape"] == [4, 8]
    ran = mpspack.run(out, inputs=[e / "input0.bin"], expect=[(e / "expected0.bin", "f32", (4, 8))],
                      output_dir=tmp_path / "outs", mpspack_bin=mpspack_bin)
    assert ran["ok"] and (tmp_path / "outs" / "output0.npy").exists()
    ran = mpspack.run(out, seed=5, output_dir=tmp_path / "gen", mpspack_bin=mpspack_bin)
    assert ran["inputs"] == "seed" and ran["seed"] == 5 and not ran["checked"]
    ran = mpspack.run(out, seed=5, expect=[tmp_path / "gen" / "output0.npy"], mpspack_bin=mpspack_bin)
    assert ran["checked"] and ran["ok"]


def test_build_reports_like_the_cli(tmp_path, mpspack_bin, tiny_so):
    """build()'s report is `mpspack build --json`'s for the same inputs (the output path aside)."""
    mine = mpspack.build(tiny_so, tmp_path / "a.mpk")
    cli = json.loads(subprocess.run([mpspack_bin, "build", str(tiny_so), "-o", str(tmp_path / "b.mpk"), "--json"],
                                    check=True, capture_output=True).stdout)
    assert {**mine, "output": None} == {**cli, "output": None}
    with mpspack.open(tmp_path / "a.mpk") as a, mpspack.open(tmp_path / "b.mpk") as b:
        assert {**a.to_dict(), "file": None} == {**b.to_dict(), "file": None}  # the same container


def test_a_failed_build_or_run_raises(tmp_path, mpspack_bin, tiny_so):
    with pytest.raises(FileNotFoundError) as e:
        mpspack.build(tmp_path / "absent.so", tmp_path / "x.mpk")
    assert isinstance(e.value, mpspack.NotFoundError) and str(e.value).startswith(f"{tmp_path / 'absent.so'}: ")
    assert not (tmp_path / "x.mpk").exists()
    (tmp_path / "junk.so").write_bytes(b"not a library")
    with pytest.raises(mpspack.FormatError, match="junk.so"):
        mpspack.build(tmp_path / "junk.so", tmp_path / "x.mpk")
    assert not (tmp_path / "x.mpk").exists()
    # Outputs that do not match: exit 1, and the report is still there.
    out = tmp_path / "t.mpk"
    mpspack.build(tiny_so, out)
    wrong = tmp_path / "wrong.bin"
    wrong.write_bytes(bytes(4 * 8 * 4))
    with pytest.raises(mpspack.CommandError) as e:
        mpspack.run(out, inputs=[(tiny_so.parent / "input0.bin", "f32", (4, 16))], expect=[(wrong, "f32", (4, 8))],
                    mpspack_bin=mpspack_bin)
    assert e.value.returncode == 1 and e.value.report["ok"] is False
    assert e.value.report["outputs"][0]["match"] is False


def test_the_executable_comes_from_the_argument_the_environment_or_path(monkeypatch, tmp_path, mpspack_bin):
    # An environment with no mpspack of its own (sys.prefix is /usr here, where a .deb links one).
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "empty_prefix"))
    monkeypatch.setenv("MPSPACK_BIN", mpspack_bin)
    assert mpspack.find_executable() == mpspack_bin
    assert mpspack.find_executable("/x/mpspack") == "/x/mpspack"
    monkeypatch.delenv("MPSPACK_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="MPSPACK_BIN"):
        mpspack.find_executable()
    os.symlink(mpspack_bin, tmp_path / "mpspack")
    assert mpspack.find_executable() == str(tmp_path / "mpspack")


def fake_tool(path, says: str):
    """An executable `mpspack` that prints `says` as its JSON report, to tell which one ran."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{{\"ran\": \"{says}\"}}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_executable_installed_with_the_package_comes_before_path(monkeypatch, tmp_path):
    monkeypatch.delenv("MPSPACK_BIN", raising=False)
    on_path = fake_tool(tmp_path / "path" / "mpspack", "path")
    monkeypatch.setenv("PATH", str(on_path.parent))
    prefix = tmp_path / "venv"
    monkeypatch.setattr(sys, "prefix", str(prefix))
    assert str(prefix / "bin" / "mpspack") in mpspack.installed_executables()
    assert mpspack.find_executable() == str(on_path)  # nothing installed beside the package yet
    beside = fake_tool(prefix / "bin" / "mpspack", "prefix")
    assert mpspack.find_executable() == str(beside)
    assert mpspack.run("x.mpk") == {"ran": "prefix"}
    beside.chmod(0o644)  # not executable: not taken
    assert mpspack.find_executable() == str(on_path)
    beside.chmod(0o755)
    monkeypatch.setenv("MPSPACK_BIN", str(on_path))  # still overrides
    assert mpspack.run("x.mpk") == {"ran": "path"}


@pytest.fixture
def scratch(monkeypatch, tmp_path):
    """The folder temporary files are made in, to see that run() leaves nothing there."""
    d = tmp_path / "scratch"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def test_run_takes_numpy_arrays_and_removes_their_files(tmp_path, mpspack_bin, tiny_so, scratch):
    e = tiny_so.parent
    out = tmp_path / "tiny.mpk"
    mpspack.build(tiny_so, out)
    x = np.fromfile(e / "input0.bin", dtype="<f4").reshape(4, 16)
    y = np.fromfile(e / "expected0.bin", dtype="<f4").reshape(4, 8)
    ran = mpspack.run(out, inputs=[x], expect=[y], mpspack_bin=mpspack_bin)
    assert ran["ok"] and ran["checked"] and ran["outputs"][0]["shape"] == [4, 8]
    assert list(scratch.iterdir()) == []
    # Big-endian and Fortran-ordered arrays hold the same values: written as the tool reads them.
    ran = mpspack.run(out, inputs=[np.asfortranarray(x).astype(">f4")], expect=[y.astype(">f4")],
                      mpspack_bin=mpspack_bin)
    assert ran["ok"] and ran["checked"]
    # Arrays with other values: the comparison says no, from the array given.
    with pytest.raises(mpspack.CommandError) as err:
        mpspack.run(out, inputs=[x], expect=[y + 1], mpspack_bin=mpspack_bin)
    assert err.value.returncode == 1 and err.value.report["ok"] is False
    assert list(scratch.iterdir()) == []
    # example tensors of build() take arrays too.
    mpspack.build(tiny_so, tmp_path / "ex.mpk", example_inputs=[x], example_outputs=[y])
    assert mpspack.run(tmp_path / "ex.mpk", mpspack_bin=mpspack_bin)["checked"]
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("inputs,error,message", [
    ([3], TypeError, "run() inputs[0]: is int"),
    (["a.npy", None], TypeError, "run() inputs[1]: is NoneType"),
    ([np.zeros(2), np.zeros(2, dtype=np.complex64)], TypeError, "run() inputs[1]: a numpy array of dtype complex64"),
    ([("a.bin", "f32")], ValueError, "run() inputs[0]: a tuple must be (path, dtype, shape)"),
    ([("a.bin", "f32", None)], TypeError, "run() inputs[0]: the shape"),
    ("a.npy", TypeError, "run() inputs: must be a list of tensors"),
    (np.zeros(2), TypeError, "run() inputs: must be a list of tensors"),
])
def test_run_refuses_other_inputs_naming_the_argument(tmp_path, scratch, inputs, error, message):
    never = fake_tool(tmp_path / "never" / "mpspack", "never")
    never.chmod(0o644)  # the tool must not run: the arguments are refused first
    with pytest.raises(error) as e:
        mpspack.run("x.mpk", inputs=inputs, mpspack_bin=never)
    assert str(e.value).startswith(message), str(e.value)
    assert list(scratch.iterdir()) == []
    with pytest.raises(TypeError, match=r"^run\(\) expect\[0\]: is float"):
        mpspack.run("x.mpk", expect=[1.5], mpspack_bin=never)
