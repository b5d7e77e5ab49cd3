"""The README's install command works offline with Debian's Python: a venv that sees the system's
packages, then pip with no index and no build isolation (setuptools and wheel from Debian), run on
the checkout's python/ as the README says, which it leaves as it was. Installed, the package runs
the mpspack executable installed beside it before one on PATH."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import SOURCE_DIR

PYTHON = "/usr/bin/python3"
FIND = "import mpspack, sys; print(mpspack.__file__); print(mpspack.find_executable())"


def clean_env(path: str) -> dict:
    """The environment without Python, pip or mpspack settings, with PATH = `path`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV")) and k != "MPSPACK_BIN"}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PATH=path)
    return env


def git_status(folder) -> str | None:
    """`git status --porcelain --ignored` of `folder` (Python's own __pycache__ folders left out), or None
    outside a git checkout (a source tarball)."""
    if shutil.which("git") is None:
        return None
    r = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--ignored", "."], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return None
    return "".join(line for line in r.stdout.splitlines(keepends=True) if "__pycache__" not in line)


def decoy(folder):
    """An `mpspack` on PATH that is not the one to run."""
    folder.mkdir()
    (folder / "mpspack").write_text("#!/bin/sh\nexit 3\n")
    (folder / "mpspack").chmod(0o755)
    return folder


def test_offline_install_into_a_venv(tmp_path, built, mpspack_bin):
    if not os.path.exists(PYTHON):
        pytest.skip(f"{PYTHON} (Debian's Python) is not here")
    before = git_status(SOURCE_DIR / "python")
    path = f"{decoy(tmp_path / 'decoy')}:/usr/bin:/bin"
    env = clean_env(path)
    v = tmp_path / "V"
    run = lambda *argv: subprocess.run(argv, cwd=SOURCE_DIR, env=env, capture_output=True, text=True, timeout=120)
    r = run(PYTHON, "-m", "venv", "--system-site-packages", str(v))
    assert r.returncode == 0, r.stderr
    r = run(f"{v}/bin/pip", "install", "--no-build-isolation", "--no-index", "./python")
    assert r.returncode == 0, r.stdout + r.stderr
    # Building wrote nothing into the checkout (no build/, no *.egg-info; ignored files count too).
    if before is not None:
        assert git_status(SOURCE_DIR / "python") == before
    code = ("import mpspack, sys; c = mpspack.open(sys.argv[1]); "
            "print(mpspack.__file__); print(c.constant('l_weight').shape)")
    r = run(f"{v}/bin/python", "-c", code, str(built["pt2_blob"]))
    assert r.returncode == 0, r.stderr
    where, shape = r.stdout.splitlines()
    assert where.startswith(str(v)), where  # the installed copy, not the source tree
    assert shape == "(4, 8)"
    # The tool installed into the same environment is the one run, not the one on PATH.
    os.symlink(mpspack_bin, v / "bin" / "mpspack")
    code = FIND + "; print(mpspack.run(sys.argv[1])['ok'])"
    r = run(f"{v}/bin/python", "-c", code, str(built["tiny"]))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1:] == [str(v / "bin" / "mpspack"), "True"]


@pytest.mark.parametrize("under", ["lib/python3/site-packages", "lib/python"])
def test_the_tool_of_the_prefix_the_package_is_installed_in(tmp_path, mpspack_bin, under):
    # The package where an install tree P would hold it, imported by a Python of another prefix
    # (/usr): it runs P/bin/mpspack, not the one on PATH.
    p = tmp_path / "P"
    site = p / under
    shutil.copytree(SOURCE_DIR / "python" / "mpspack", site / "mpspack", ignore=shutil.ignore_patterns("__pycache__"))
    (p / "bin").mkdir()
    os.symlink(mpspack_bin, p / "bin" / "mpspack")
    env = clean_env(f"{decoy(tmp_path / 'decoy')}:/usr/bin:/bin")
    env.update(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([PYTHON, "-c", FIND], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(site / "mpspack" / "__init__.py"), str(p / "bin" / "mpspack")]
    env["MPSPACK_BIN"] = "/x/mpspack"  # still overrides
    r = subprocess.run([PYTHON, "-c", FIND], env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.splitlines()[1] == "/x/mpspack"
