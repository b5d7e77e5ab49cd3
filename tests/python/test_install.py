"""The README's install command works offline with Debian's Python: a venv that sees the system's
packages, then pip with no index and no build isolation (setuptools and wheel from Debian)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import SOURCE_DIR

PYTHON = "/usr/bin/python3"


def test_offline_install_into_a_venv(tmp_path, built):
    if not os.path.exists(PYTHON):
        pytest.skip(f"{PYTHON} (Debian's Python) is not here")
    # A copy of python/: setuptools writes build/ and *.egg-info beside the sources it builds.
    shutil.copytree(SOURCE_DIR / "python", tmp_path / "python", ignore=shutil.ignore_patterns("__pycache__", "build",
                                                                                              "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    run = lambda *argv: subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    r = run(PYTHON, "-m", "venv", "--system-site-packages", "V")
    assert r.returncode == 0, r.stderr
    r = run("V/bin/pip", "install", "--no-build-isolation", "--no-index", "./python")
    assert r.returncode == 0, r.stdout + r.stderr
    code = ("import mpspack, sys; c = mpspack.open(sys.argv[1]); "
            "print(mpspack.__file__); print(c.constant('l_weight').shape)")
    r = run("V/bin/python", "-c", code, str(built["pt2_blob"]))
    assert r.returncode == 0, r.stderr
    where, shape = r.stdout.splitlines()
    assert where.startswith(str(tmp_path / "V")), where  # the installed copy, not the source tree
    assert shape == "(4, 8)"
