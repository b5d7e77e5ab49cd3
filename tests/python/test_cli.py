"""mpspack.build() and mpspack.run(): the CLI's --json reports, and CommandError on failure."""

from __future__ import annotations

import os

import pytest

import mpspack


def test_build_and_run_return_the_json_reports(tmp_path, mpspack_bin, tiny_so):
    e = tiny_so.parent
    out = tmp_path / "tiny.mpk"
    report = mpspack.build(tiny_so, out, example_inputs=[(e / "input0.bin", "f32", (4, 16))],
                           example_outputs=[(e / "expected0.bin", "f32", (4, 8))], mpspack_bin=mpspack_bin)
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


def test_a_failed_command_raises_command_error(tmp_path, mpspack_bin, tiny_so):
    with pytest.raises(mpspack.CommandError) as e:
        mpspack.build(tmp_path / "absent.so", tmp_path / "x.mpk", mpspack_bin=mpspack_bin)
    assert e.value.returncode == 2 and "absent.so" in str(e.value) and e.value.stderr.startswith("mpspack: ")
    assert not (tmp_path / "x.mpk").exists()
    # Outputs that do not match: exit 1, and the report is still there.
    out = tmp_path / "t.mpk"
    mpspack.build(tiny_so, out, mpspack_bin=mpspack_bin)
    wrong = tmp_path / "wrong.bin"
    wrong.write_bytes(bytes(4 * 8 * 4))
    with pytest.raises(mpspack.CommandError) as e:
        mpspack.run(out, inputs=[(tiny_so.parent / "input0.bin", "f32", (4, 16))], expect=[(wrong, "f32", (4, 8))],
                    mpspack_bin=mpspack_bin)
    assert e.value.returncode == 1 and e.value.report["ok"] is False
    assert e.value.report["outputs"][0]["match"] is False


def test_the_executable_comes_from_the_argument_the_environment_or_path(monkeypatch, tmp_path, mpspack_bin):
    monkeypatch.setenv("MPSPACK_BIN", mpspack_bin)
    assert mpspack.find_executable() == mpspack_bin
    assert mpspack.find_executable("/x/mpspack") == "/x/mpspack"
    monkeypatch.delenv("MPSPACK_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="MPSPACK_BIN"):
        mpspack.find_executable()
    os.symlink(mpspack_bin, tmp_path / "mpspack")
    assert mpspack.find_executable() == str(tmp_path / "mpspack")
