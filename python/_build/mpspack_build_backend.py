"""The build backend of python/ (pyproject.toml's build-backend, found through backend-path): setuptools',
run on a copy of the folder in a temporary directory. setuptools writes build/ and mpspack.egg-info/ beside
the sources it builds, so `pip install ./python` run on the checkout itself would leave them there, and
a later build would package whatever stale module build/lib still held. Editable installs must point at
the sources, so they are built in place (the checkout's .gitignore names what they write)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

from setuptools import build_meta as _setuptools
from setuptools.build_meta import build_editable, get_requires_for_build_editable  # noqa: F401 - in place
from setuptools.build_meta import prepare_metadata_for_build_editable  # noqa: F401 - in place


@contextlib.contextmanager
def _in_a_copy():
    source = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="mpspack-build-") as tmp:
        copy = os.path.join(tmp, "python")
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__"))
        os.chdir(copy)
        try:
            yield
        finally:
            os.chdir(source)


def _copied(hook):
    def run(*args, **kwargs):
        # Output folders pip names are made absolute first: the hook runs in the copy.
        args = [os.path.abspath(a) if isinstance(a, str) else a for a in args]
        with _in_a_copy():
            return hook(*args, **kwargs)
    run.__name__ = hook.__name__
    run.__doc__ = hook.__doc__
    return run


get_requires_for_build_wheel = _copied(_setuptools.get_requires_for_build_wheel)
get_requires_for_build_sdist = _copied(_setuptools.get_requires_for_build_sdist)
prepare_metadata_for_build_wheel = _copied(_setuptools.prepare_metadata_for_build_wheel)
build_wheel = _copied(_setuptools.build_wheel)
build_sdist = _copied(_setuptools.build_sdist)
