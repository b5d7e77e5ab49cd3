"""Shared pieces of the signing tests: the mpspack under test, the fixtures, keys made with the openssl command line
(as a user makes them) and containers built from the fixture libraries. A missing tool or fixture skips with the
reason shown (pytest -rs), except under CI=true, where it fails."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]


def missing(what: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing (CI=true: it must be present)")
    pytest.skip(f"{what} is missing")


class Cli:
    def __init__(self, binary: str):
        self.binary = binary

    def __call__(self, *args) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, *map(str, args)], capture_output=True, text=True, timeout=300)

    def ok(self, *args) -> subprocess.CompletedProcess:
        r = self(*args)
        assert r.returncode == 0, r.stderr
        return r


@pytest.fixture(scope="session")
def cli() -> Cli:
    b = os.environ.get("MPSPACK_BIN")
    if not b or not os.path.exists(b):
        missing("the mpspack executable (set MPSPACK_BIN)")
    return Cli(b)


@pytest.fixture(scope="session")
def fixtures() -> pathlib.Path:
    d = pathlib.Path(os.environ.get("MPSPACK_SHARED_DIR", SOURCE_DIR.parent / "shared")) / "fixtures" / "aoti-2.11"
    if not d.is_dir():
        missing(f"the AOTInductor fixtures ({d})")
    return d


@pytest.fixture(scope="session")
def openssl() -> str:
    b = shutil.which("openssl")
    if not b:
        missing("the openssl command line (Debian package openssl)")
    return b


def make_key(openssl: str, folder: pathlib.Path, name: str, *genpkey_args: str) -> tuple[pathlib.Path, pathlib.Path]:
    """A private key as `openssl genpkey` writes it and its public key as `openssl pkey -pubout` writes it."""
    private, public = folder / f"{name}.pem", folder / f"{name}.pub.pem"
    subprocess.run([openssl, "genpkey", *genpkey_args, "-out", private], check=True, capture_output=True)
    subprocess.run([openssl, "pkey", "-in", private, "-pubout", "-out", public], check=True, capture_output=True)
    return private, public


@pytest.fixture(scope="session")
def keys(openssl, tmp_path_factory) -> dict[str, tuple[pathlib.Path, pathlib.Path]]:
    """(private, public) PEM files by kind: ed25519, p256, and a second ed25519 key, `other`."""
    d = tmp_path_factory.mktemp("keys")
    return {
        "ed25519": make_key(openssl, d, "ed25519", "-algorithm", "ed25519"),
        "p256": make_key(openssl, d, "p256", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"),
        "other": make_key(openssl, d, "other", "-algorithm", "ed25519"),
    }


# One case folder per weights flavour: embedded, external blob, and weights after the ELF image (mmap-self, built
# by torch on a newer glibc: signed and verified here, run only where it loads).
FLAVOURS = {
    "embedded": "rebuilt-bookworm/cpu_mlp_embedded",
    "external-blob": "rebuilt-bookworm/cpu_mlp_blob",
    "mmap-self": "torch-built/cpu_mlp_mmap",
}
RUNNABLE = ("embedded", "external-blob")


def build(cli: Cli, case: pathlib.Path, out: pathlib.Path, weights: pathlib.Path | None = None) -> pathlib.Path:
    """A container of the case's mlp library, with its example input and output recorded (what `run` checks)."""
    args = ["build", case / "model.so", "-o", out, "--example-input", f"{case / 'input0.bin'}:f32:8x64",
            "--example-output", f"{case / 'expected0.bin'}:f32:8x10"]
    blob = weights or case / "weights.blob"
    if blob.exists():
        args += ["--weights", blob]
    cli.ok(*args)
    return out
