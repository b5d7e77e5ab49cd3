"""Authentication: basic (docker-registry with an htpasswd file), docker login's saved credentials, and the
token flow (a front that demands Bearer tokens, tests/registry/token_proxy.py). A refused login is one line,
exit 2, no output file."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess

import pytest

from conftest import Registry, build_container, missing
from token_proxy import TokenProxy
from test_push_pull import no_output, refused


@pytest.fixture(scope="module")
def mlp(cli, fixtures, tmp_path_factory):
    return build_container(cli, fixtures / "rebuilt-bookworm" / "cpu_mlp_blob",
                           tmp_path_factory.mktemp("auth-mlp") / "mlp.mpk")


@pytest.fixture(scope="module")
def basic_registry(registry_bin, tmp_path_factory):
    htpasswd = shutil.which("htpasswd")
    if not htpasswd:
        missing("htpasswd (Debian package apache2-utils)")
    root = tmp_path_factory.mktemp("basic-registry")
    line = subprocess.run([htpasswd, "-Bbn", "alice", "s3cret"], capture_output=True, text=True, check=True).stdout
    (root / "htpasswd").write_text(line)
    r = Registry(root, htpasswd=root / "htpasswd")
    yield r
    r.stop()


def test_basic_auth_with_password_on_stdin(cli, basic_registry, mlp, tmp_path):
    ref = f"{basic_registry.host}/private/mlp:v1"
    cli.ok("push", mlp, ref, "--plain-http", "--username", "alice", "--password-stdin", stdin="s3cret\n")
    out = tmp_path / "m.mpk"
    cli.ok("pull", ref, "-o", out, "--plain-http", "--username", "alice", "--password-stdin", stdin="s3cret\n")
    assert out.read_bytes() == mlp.read_bytes()


def test_basic_auth_from_docker_config(cli, basic_registry, mlp, tmp_path):
    ref = f"{basic_registry.host}/private/mlp:v1"
    cli.ok("push", mlp, ref, "--plain-http", "--username", "alice", "--password-stdin", stdin="s3cret\n")
    docker = tmp_path / "docker"
    docker.mkdir()
    auth = base64.b64encode(b"alice:s3cret").decode()
    (docker / "config.json").write_text(json.dumps({"auths": {basic_registry.host: {"auth": auth}}}))
    out = tmp_path / "out"
    out.mkdir()
    cli.ok("pull", ref, "-o", out / "m.mpk", "--plain-http", env={"DOCKER_CONFIG": str(docker)})
    assert (out / "m.mpk").read_bytes() == mlp.read_bytes()


def test_basic_auth_refusals(cli, basic_registry, mlp, tmp_path):
    ref = f"{basic_registry.host}/private/mlp:v1"
    empty = tmp_path / "no-docker-config"
    refused(cli("pull", ref, "-o", tmp_path / "x.mpk", "--plain-http", env={"DOCKER_CONFIG": str(empty)}),
            "asks for a user name and password")
    refused(cli("pull", ref, "-o", tmp_path / "x.mpk", "--plain-http", "--username", "alice", "--password-stdin",
                stdin="wrong\n"), "HTTP 401")
    refused(cli("push", mlp, ref, "--plain-http", "--username", "mallory", "--password-stdin", stdin="s3cret\n"),
            "HTTP 401")
    assert not (tmp_path / "x.mpk").exists()


@pytest.fixture(scope="module")
def token_front(registry):
    proxy = TokenProxy(registry.host, {"bob": ("t0ken-pass", {"pull", "push"}), "reader": ("r3ad", {"pull"})})
    yield proxy
    proxy.stop()


def test_token_flow(cli, token_front, mlp, tmp_path):
    ref = f"{token_front.host}/tokens/mlp:v1"
    cli.ok("push", mlp, ref, "--plain-http", "--username", "bob", "--password-stdin", stdin="t0ken-pass\n")
    assert token_front.token_requests >= 1
    out = tmp_path / "m.mpk"
    cli.ok("pull", ref, "-o", out, "--plain-http", "--username", "reader", "--password-stdin", stdin="r3ad\n")
    assert out.read_bytes() == mlp.read_bytes()


def test_token_flow_refusals(cli, token_front, mlp, tmp_path):
    ref = f"{token_front.host}/tokens/mlp:v1"
    refused(cli("pull", ref, "-o", tmp_path / "x.mpk", "--plain-http", "--username", "bob", "--password-stdin",
                stdin="wrong\n"), "token request", "HTTP 401")
    # A user who may only pull is refused the upload.
    refused(cli("push", mlp, f"{token_front.host}/tokens/other:v1", "--plain-http", "--username", "reader",
                "--password-stdin", stdin="r3ad\n"), "HTTP 403")
    no_output(tmp_path)
