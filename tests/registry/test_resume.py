"""A push that dies in the middle of a chunked upload resumes it at the next push: the upload session is kept in
$XDG_CACHE_HOME/mpspack/uploads/, the registry is asked where it stands, and only the rest is sent. A state the
registry no longer knows, or garbage in its place, starts the blob over.

Everything goes through tests/registry/fault_proxy.py (the upload Locations then point at it), which forwards K
PATCHes of the first push and breaks the next one."""

from __future__ import annotations

import hashlib
import json
import re
import urllib.request
import uuid

import pytest

from conftest import build_container
from fault_proxy import FaultProxy, upload_session

CHUNK = 64 << 10  # the library (370200 bytes) and the weights (225536) go up in several of these
K = 2  # PATCHes the interrupted push gets through


@pytest.fixture(scope="module")
def proxy(registry):
    p = FaultProxy(registry.host)
    yield p
    p.stop()


@pytest.fixture(scope="module")
def block(cli, fixtures, tmp_path_factory):
    return build_container(cli, fixtures / "rebuilt-bookworm" / "cpu_block_blob",
                           tmp_path_factory.mktemp("resume") / "block.mpk")


class Pusher:
    """push of `mpk` through the proxy to a repository of its own (a blob another test uploaded there would be
    skipped, not resumed), with a cache folder of its own."""

    def __init__(self, cli, proxy, mpk, what, cache):
        self.cli, self.proxy, self.mpk, self.cache = cli, proxy, mpk, cache
        self.repo = f"resume/{what}-{uuid.uuid4().hex[:8]}"
        self.ref = f"{proxy.host}/{self.repo}:v1"
        self.repository_url = f"http://{proxy.host}/v2/{self.repo}"

    def __call__(self, *extra):
        return self.cli("push", self.mpk, self.ref, "--plain-http", "--upload-chunk-bytes", CHUNK, "--parallel", 1,
                        *extra, env={"XDG_CACHE_HOME": str(self.cache)})

    def states(self):
        d = self.cache / "mpspack" / "uploads"
        return sorted(d.iterdir()) if d.is_dir() else []

    def interrupted(self, mode: str):
        """A push that fails at the (K+1)th PATCH: one error line, exit 2, one state file. Its path and content."""
        self.proxy.reset()
        self.proxy.fail_after(K, mode)
        r = self()
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2, r.stderr
        assert len(lines) == 1 and lines[0].startswith(f"mpspack: {self.ref}: "), r.stderr
        assert mode != "500" or "HTTP 500" in lines[0], lines[0]
        assert self.proxy.faults >= 1 and self.proxy.patches == K
        [path] = self.states()
        state = json.loads(path.read_text())
        assert state["repository"] == self.repository_url and state["offset"] == K * CHUNK
        assert state["location"].startswith(f"http://{self.proxy.host}/v2/{self.repo}/blobs/uploads/")
        key = f"{self.repository_url}\n{state['digest']}".encode()
        assert path.name == hashlib.sha256(key).hexdigest() + ".json"
        return path, state

    def completed(self, *extra):
        """A push that succeeds and leaves no state; its --json report, and the proxy's counts with it."""
        self.proxy.reset()
        report = json.loads(self.cli.ok("push", self.mpk, self.ref, "--plain-http", "--upload-chunk-bytes", CHUNK,
                                        "--json", *extra, env={"XDG_CACHE_HOME": str(self.cache)}).stdout)
        assert self.states() == []
        sizes = sum(l["size"] for l in report["layers"])
        assert report["bytes_sent"] + report["bytes_resumed"] + report["bytes_skipped"] == sizes
        return report


def chunked_bytes(report) -> int:
    """The bytes of the layers this push uploaded in chunks."""
    return sum(l["size"] for l in report["layers"] if l["sent"] and l["size"] > CHUNK)


def layer_of(report, digest: str) -> dict:
    layer = next(l for l in report["layers"] if l["digest"] == digest)
    # The fault came in the middle of this blob, so there was something left to resume.
    assert layer["sent"] and layer["size"] > (K + 1) * CHUNK
    return layer


@pytest.mark.parametrize("mode", ["drop", "500"])
def test_interrupted_push_resumes(cli, registry, proxy, block, tmp_path, mode):
    push = Pusher(cli, proxy, block, mode, tmp_path / "cache")
    _, state = push.interrupted(mode)
    report = push.completed()
    layer = layer_of(report, state["digest"])
    assert report["bytes_resumed"] == K * CHUNK
    # The same session went on, and only what the registry lacked went up again.
    assert proxy.session_bytes == {**proxy.session_bytes, upload_session(state["location"]): layer["size"] - K * CHUNK}
    assert proxy.patch_bytes == chunked_bytes(report) - K * CHUNK
    out = tmp_path / "out"
    out.mkdir()
    cli.ok("pull", f"{registry.host}/{push.repo}:v1", "-o", out / "pulled.mpk", "--plain-http")
    assert (out / "pulled.mpk").read_bytes() == block.read_bytes()


def test_text_report_names_resumed_bytes(cli, proxy, block, tmp_path):
    push = Pusher(cli, proxy, block, "text", tmp_path / "cache")
    push.interrupted("drop")
    proxy.reset()
    r = cli.ok("push", block, push.ref, "--plain-http", "--upload-chunk-bytes", CHUNK,
               env={"XDG_CACHE_HOME": str(push.cache)})
    assert f"{K * CHUNK} bytes an interrupted earlier push had uploaded were resumed" in r.stdout
    assert push.states() == []


def starts_over(push, state, report):
    layer_of(report, state["digest"])
    assert report["bytes_resumed"] == 0
    assert upload_session(state["location"]) not in push.proxy.session_bytes
    assert push.proxy.patch_bytes == chunked_bytes(report)


GARBAGE = {
    "empty": b"",
    "binary": b"\x00\xff\xfe not json at all",
    "not an object": b"[1, 2, 3]",
    "wrong types": b'{"repository": 1, "digest": [], "location": null, "offset": "a lot"}',
}


@pytest.mark.parametrize("content", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_state_starts_over(cli, registry, proxy, block, tmp_path, content):
    push = Pusher(cli, proxy, block, "garbage", tmp_path / "cache")
    path, state = push.interrupted("drop")
    path.write_bytes(content)
    starts_over(push, state, push.completed())
    assert state["digest"] in registry.blobs()


def edited(state: dict, how: str) -> dict:
    if how == "other blob":
        return {**state, "digest": "sha256:" + "0" * 64}
    if how == "other host":
        # The registry's credentials would go there: a state file's word is not enough.
        return {**state, "location": re.sub(r"^http://[^/]+", "http://127.0.0.1:9", state["location"])}
    if how == "offset negative":
        return {**state, "offset": -1}
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["other blob", "other host", "offset negative"])
def test_inconsistent_state_starts_over(cli, proxy, block, tmp_path, how):
    push = Pusher(cli, proxy, block, "inconsistent", tmp_path / "cache")
    path, state = push.interrupted("500")
    path.write_text(json.dumps(edited(state, how)))
    starts_over(push, state, push.completed())


@pytest.mark.parametrize("how", ["random uuid", "cancelled"])
def test_session_the_registry_no_longer_knows(cli, proxy, block, tmp_path, how):
    push = Pusher(cli, proxy, block, "unknown", tmp_path / "cache")
    path, state = push.interrupted("drop")
    if how == "random uuid":
        path.write_text(json.dumps({**state, "location": state["location"].replace(upload_session(state["location"]),
                                                                                    str(uuid.uuid4()))}))
    else:
        # What an expired session looks like: the registry removed it.
        urllib.request.urlopen(urllib.request.Request(state["location"], method="DELETE"))
    starts_over(push, state, push.completed())
