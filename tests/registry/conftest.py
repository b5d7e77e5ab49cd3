"""A real OCI registry for the push/pull tests: Debian's docker-registry (Distribution 2.8) on a free loopback
port, filesystem storage in a temp folder, stopped after the tests. A missing docker-registry (or fixture) skips
with the reason shown (pytest -rs), except under CI=true, where it fails (.ci/packages installs it)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]


def missing(what: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing (CI=true: it must be present)")
    pytest.skip(f"{what} is missing")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Registry:
    """docker-registry serving `root`/storage on 127.0.0.1:<port>; with `htpasswd`, basic auth against it."""

    def __init__(self, root: pathlib.Path, htpasswd: pathlib.Path | None = None):
        self.root = root
        self.storage = root / "storage"
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        auth = f"auth:\n  htpasswd:\n    realm: mpspack-test\n    path: {htpasswd}\n" if htpasswd else ""
        config = root / "config.yml"
        config.write_text(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\n"
            f"storage:\n  filesystem:\n    rootdirectory: {self.storage}\n  delete:\n    enabled: true\n"
            f"http:\n  addr: {self.host}\n{auth}")
        self.log = open(root / "registry.log", "wb")
        self.proc = subprocess.Popen([shutil.which("docker-registry"), "serve", str(config)],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://{self.host}/v2/", timeout=1)
                break
            except urllib.error.HTTPError:
                break  # 401: up, and asking for credentials
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"docker-registry did not start: {(root / 'registry.log').read_text()}")
                time.sleep(0.05)

    def blobs(self) -> set[str]:
        """Digests of the blobs the registry stores (its filesystem layout, docker/registry/v2/blobs)."""
        d = self.storage / "docker" / "registry" / "v2" / "blobs" / "sha256"
        return {"sha256:" + p.parent.name for p in d.glob("*/*/data")} if d.is_dir() else set()

    def blob_path(self, digest: str) -> pathlib.Path:
        hexd = digest.split(":", 1)[1]
        return self.storage / "docker" / "registry" / "v2" / "blobs" / "sha256" / hexd[:2] / hexd / "data"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture(scope="session", autouse=True)
def upload_cache(tmp_path_factory):
    """push keeps the state of unfinished uploads under $XDG_CACHE_HOME: a folder of the session's, not the
    user's ~/.cache (test_resume.py gives each of its tests one of its own)."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME")
    else:
        os.environ["XDG_CACHE_HOME"] = saved


@pytest.fixture(scope="session")
def registry_bin() -> str:
    b = shutil.which("docker-registry")
    if not b:
        missing("docker-registry (Debian package docker-registry)")
    return b


@pytest.fixture(scope="session")
def registry(registry_bin, tmp_path_factory):
    r = Registry(tmp_path_factory.mktemp("registry"))
    yield r
    r.stop()


@pytest.fixture(scope="session")
def mpspack_bin() -> str:
    b = os.environ.get("MPSPACK_BIN")
    if not b or not os.path.exists(b):
        missing("the mpspack executable (set MPSPACK_BIN)")
    return b


@pytest.fixture(scope="session")
def fixtures() -> pathlib.Path:
    d = pathlib.Path(os.environ.get("MPSPACK_SHARED_DIR", SOURCE_DIR.parent / "shared")) / "fixtures" / "aoti-2.11"
    if not d.is_dir():
        missing(f"the AOTInductor fixtures ({d})")
    return d


class Cli:
    def __init__(self, binary: str):
        self.binary = binary

    def __call__(self, *args, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, *map(str, args)], input=stdin, capture_output=True, text=True,
                              timeout=120, env={**os.environ, **(env or {})})

    def ok(self, *args, **kw) -> subprocess.CompletedProcess:
        r = self(*args, **kw)
        assert r.returncode == 0, r.stderr
        return r

    def json(self, *args, **kw) -> dict:
        return json.loads(self.ok(*args, "--json", **kw).stdout)


@pytest.fixture(scope="session")
def cli(mpspack_bin) -> Cli:
    return Cli(mpspack_bin)


def build_container(cli: Cli, case_dir: pathlib.Path, out: pathlib.Path, weights: pathlib.Path | None = None):
    """A container of one fixture library (model.so, with its weights.blob when it has one)."""
    args = ["build", case_dir / "model.so", "-o", out]
    blob = weights or case_dir / "weights.blob"
    if blob.exists():
        args += ["--weights", blob]
    cli.ok(*args)
    return out
