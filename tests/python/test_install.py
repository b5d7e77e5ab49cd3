"""The README's install command works offline with Debian's Python: a venv that sees the system's
packages, then pip with no index and no build isolation (setuptools and wheel from Debian), run on
the checkout's python/ as the README says, which it leaves as it was. Installed, the package loads the C API
library and runs the mpspack executable installed beside it (the prefix's lib/ and bin/) before others."""

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
           if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV")) and k not in ("MPSPACK_BIN", "MPSPACK_LIBRARY")}
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


def built_library() -> str:
    """The C API library of this build (CTest's MPSPACK_LIBRARY)."""
    from mpspack import library_path
    return os.path.realpath(library_path())


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
            "print(mpspack.__file__); print(c.constant('l_weight').shape); print(mpspack.library_path())")
    # The C API library where the venv's prefix holds it (V/lib), as `cmake --install build --prefix V` puts it.
    os.symlink(built_library(), v / "lib" / "libmpspack_c.so.0")
    r = run(f"{v}/bin/python", "-c", code, str(built["pt2_blob"]))
    assert r.returncode == 0, r.stderr
    where, shape, library = r.stdout.splitlines()
    assert where.startswith(str(v)), where  # the installed copy, not the source tree
    assert shape == "(4, 8)"
    assert library == str(v / "lib" / "libmpspack_c.so.0")
    # The tool installed into the same environment is the one run, not the one on PATH.
    os.symlink(mpspack_bin, v / "bin" / "mpspack")
    code = FIND + "; print(mpspack.run(sys.argv[1])['ok'])"
    r = run(f"{v}/bin/python", "-c", code, str(built["tiny"]))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1:] == [str(v / "bin" / "mpspack"), "True"]


@pytest.mark.parametrize("under", ["lib/python3/site-packages", "lib/python"])
def test_the_tool_of_the_prefix_the_package_is_installed_in(tmp_path, mpspack_bin, under, built):
    # The package where an install tree P would hold it, imported by a Python of another prefix
    # (/usr): it loads P/lib/libmpspack_c.so.0 and runs P/bin/mpspack, not the one on PATH.
    p = tmp_path / "P"
    site = p / under
    shutil.copytree(SOURCE_DIR / "python" / "mpspack", site / "mpspack", ignore=shutil.ignore_patterns("__pycache__"))
    (p / "bin").mkdir()
    os.symlink(mpspack_bin, p / "bin" / "mpspack")
    os.symlink(built_library(), p / "lib" / "libmpspack_c.so.0")
    env = clean_env(f"{decoy(tmp_path / 'decoy')}:/usr/bin:/bin")
    env.update(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([PYTHON, "-c", FIND + "; print(mpspack.library_path()); print(len(mpspack.open(sys.argv[1]).segments))",
                        str(built["tiny"])], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(site / "mpspack" / "__init__.py"), str(p / "bin" / "mpspack"),
                                     str(p / "lib" / "libmpspack_c.so.0"), "4"]
    env["MPSPACK_BIN"] = "/x/mpspack"  # still overrides
    r = subprocess.run([PYTHON, "-c", FIND], env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.splitlines()[1] == "/x/mpspack"


def test_import_works_without_the_library_and_using_it_says_where_it_looked(tmp_path):
    env = clean_env("/usr/bin:/bin")
    env.update(PYTHONPATH=str(SOURCE_DIR / "python"), PYTHONDONTWRITEBYTECODE="1",
               MPSPACK_LIBRARY=str(tmp_path / "absent.so"))
    code = ("import sys, mpspack\ntry:\n    mpspack.open(sys.argv[1])\nexcept mpspack.LibraryNotFound as e:\n"
            "    assert isinstance(e, ImportError)\n    print(e)\n")
    r = subprocess.run([PYTHON, "-c", code, "x.mpk"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"MPSPACK_LIBRARY={tmp_path / 'absent.so'}: no such file"
