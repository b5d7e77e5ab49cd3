"""push --sign and pull --key (docs/SIGNING.md, "In a registry"): the signature goes up as an OCI referrer of the
container's manifest, through the referrers tag schema on Debian's docker-registry (no referrers API) and through
the API behind referrers_proxy.py; pull --key refuses an unsigned container, one signed by another key and one
whose attached signature is of another container, leaving no output file."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import urllib.request

import pytest

from conftest import build_container, missing
from referrers_proxy import ReferrersProxy

ENVELOPE = "application/vnd.dsse.envelope.v1+json"


def make_key(tmp, name, *args):
    private, public = tmp / f"{name}.pem", tmp / f"{name}.pub.pem"
    subprocess.run(["openssl", "genpkey", *args, "-out", private], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", private, "-pubout", "-out", public], check=True, capture_output=True)
    return private, public


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    if not shutil.which("openssl"):
        missing("the openssl command line (Debian package openssl)")
    d = tmp_path_factory.mktemp("keys")
    return {"mine": make_key(d, "mine", "-algorithm", "ed25519"),
            "p256": make_key(d, "p256", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"),
            "other": make_key(d, "other", "-algorithm", "ed25519")}


@pytest.fixture(scope="module")
def mlp(cli, fixtures, tmp_path_factory):
    return build_container(cli, fixtures / "rebuilt-bookworm" / "cpu_mlp_blob",
                           tmp_path_factory.mktemp("mlp") / "mlp.mpk")


@pytest.fixture(scope="module")
def cnn(cli, fixtures, tmp_path_factory):
    return build_container(cli, fixtures / "rebuilt-bookworm" / "cpu_cnn_blob",
                           tmp_path_factory.mktemp("cnn") / "cnn.mpk")


@pytest.fixture
def proxy(registry):
    p = ReferrersProxy(registry.host)
    yield p
    p.stop()


def get(host: str, path: str, accept: str = "application/vnd.oci.image.index.v1+json"):
    req = urllib.request.Request(f"http://{host}{path}", headers={"Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


def refused(r: subprocess.CompletedProcess, *words: str):
    assert r.returncode != 0
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mpspack: "), r.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_tag_schema_round_trip(cli, registry, keys, mlp, tmp_path):
    report = cli.json("push", mlp, f"{registry.host}/signed/mlp:v1", "--plain-http", "--sign", keys["mine"][0])
    digest = report["manifest_digest"]
    # The registry has no referrers API: the index under the referrers tag lists the signature.
    status, body = get(registry.host, f"/v2/signed/mlp/manifests/{digest.replace(':', '-')}")
    assert status == 200
    listed = json.loads(body)["manifests"]
    assert [(d["digest"], d["artifactType"]) for d in listed] == [(report["signature_digest"], ENVELOPE)]
    status, body = get(registry.host, f"/v2/signed/mlp/manifests/{report['signature_digest']}",
                       "application/vnd.oci.image.manifest.v1+json")
    sig_manifest = json.loads(body)
    assert sig_manifest["subject"]["digest"] == digest and sig_manifest["artifactType"] == ENVELOPE
    out = tmp_path / "pulled.mpk"
    pulled = cli.json("pull", f"{registry.host}/signed/mlp:v1", "-o", out, "--plain-http", "--key", keys["mine"][1])
    assert out.read_bytes() == mlp.read_bytes()
    assert pulled["signed_by"] == hashlib.sha256(subprocess.run(
        ["openssl", "pkey", "-pubin", "-in", keys["mine"][1], "-outform", "DER"], capture_output=True).stdout).hexdigest()
    # A second signature (another key) is added to the same index; each key finds its own.
    cli.ok("push", mlp, f"{registry.host}/signed/mlp:v1", "--plain-http", "--sign", keys["p256"][0])
    status, body = get(registry.host, f"/v2/signed/mlp/manifests/{digest.replace(':', '-')}")
    assert len(json.loads(body)["manifests"]) == 2
    cli.ok("pull", f"{registry.host}/signed/mlp:v1", "-o", tmp_path / "p2.mpk", "--plain-http", "--key", keys["p256"][1])


def test_referrers_api_round_trip(cli, registry, proxy, keys, cnn, tmp_path):
    report = cli.json("push", cnn, f"{proxy.host}/api/cnn:v1", "--plain-http", "--sign", keys["mine"][0])
    digest = report["manifest_digest"]
    # The API took it: no referrers tag was written.
    assert get(registry.host, f"/v2/api/cnn/manifests/{digest.replace(':', '-')}")[0] == 404
    out = tmp_path / "pulled.mpk"
    cli.ok("pull", f"{proxy.host}/api/cnn:v1", "-o", out, "--plain-http", "--key", keys["mine"][1])
    assert proxy.api_calls >= 1
    assert out.read_bytes() == cnn.read_bytes()


def test_unsigned_or_wrongly_signed_leaves_no_file(cli, registry, keys, mlp, tmp_path):
    cli.ok("push", mlp, f"{registry.host}/unsigned/mlp:v1", "--plain-http")
    out = tmp_path / "out.mpk"
    refused(cli("pull", f"{registry.host}/unsigned/mlp:v1", "-o", out, "--plain-http", "--key", keys["mine"][1]),
            "no signature is attached")
    assert not out.exists()
    cli.ok("push", mlp, f"{registry.host}/wrongkey/mlp:v1", "--plain-http", "--sign", keys["other"][0])
    refused(cli("pull", f"{registry.host}/wrongkey/mlp:v1", "-o", out, "--plain-http", "--key", keys["mine"][1]),
            "not signed by this key")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temp file either


def test_signature_of_another_container_leaves_no_file(cli, registry, keys, mlp, cnn, tmp_path):
    """cnn's signature (by the right key) attached to mlp's manifest: found, fetched, and refused once the layers are
    in, before the file is renamed into place."""
    mlp_report = cli.json("push", mlp, f"{registry.host}/swap/mlp:v1", "--plain-http")
    cli.ok("sign", cnn, "--key", keys["mine"][0], "-o", tmp_path / "cnn.sig")
    envelope = (tmp_path / "cnn.sig").read_bytes()
    attach(registry.host, "swap/mlp", mlp_report["manifest_digest"], mlp_report_size(registry.host, mlp_report),
           envelope)
    out = tmp_path / "out.mpk"
    refused(cli("pull", f"{registry.host}/swap/mlp:v1", "-o", out, "--plain-http", "--key", keys["mine"][1]),
            "another container")
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.sig"]


def test_pull_key_refuses_library_subset(cli, registry, keys, tmp_path):
    r = cli("pull", f"{registry.host}/signed/mlp:v1", "-o", tmp_path / "x.mpk", "--plain-http",
            "--key", keys["mine"][1], "--library", "model")
    assert r.returncode == 2 and "excludes" in r.stderr


def mlp_report_size(host: str, report: dict) -> int:
    status, body = get(host, f"/v2/swap/mlp/manifests/{report['manifest_digest']}",
                       "application/vnd.oci.image.manifest.v1+json")
    assert status == 200
    return len(body)


def upload(host: str, repo: str, data: bytes) -> str:
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    req = urllib.request.Request(f"http://{host}/v2/{repo}/blobs/uploads/", method="POST", data=b"")
    with urllib.request.urlopen(req, timeout=10) as r:
        location = r.headers["Location"]
    sep = "&" if "?" in location else "?"
    url = location if location.startswith("http") else f"http://{host}{location}"
    req = urllib.request.Request(f"{url}{sep}digest={digest}", method="PUT", data=data,
                                 headers={"Content-Type": "application/octet-stream"})
    urllib.request.urlopen(req, timeout=10).close()
    return digest


def put_manifest(host: str, repo: str, ref: str, body: bytes, media_type: str):
    req = urllib.request.Request(f"http://{host}/v2/{repo}/manifests/{ref}", method="PUT", data=body,
                                 headers={"Content-Type": media_type})
    urllib.request.urlopen(req, timeout=10).close()


def attach(host: str, repo: str, subject: str, subject_size: int, envelope: bytes):
    """A referrer of `subject` holding `envelope`, through the referrers tag schema, as another tool would attach it."""
    empty = upload(host, repo, b"{}")
    layer = upload(host, repo, envelope)
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "artifactType": ENVELOPE,
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": empty, "size": 2},
        "layers": [{"mediaType": ENVELOPE, "digest": layer, "size": len(envelope)}],
        "subject": {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": subject,
                    "size": subject_size}}).encode()
    digest = "sha256:" + hashlib.sha256(manifest).hexdigest()
    put_manifest(host, repo, digest, manifest, "application/vnd.oci.image.manifest.v1+json")
    index = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest,
                                       "size": len(manifest), "artifactType": ENVELOPE}]}).encode()
    put_manifest(host, repo, subject.replace(":", "-"), index, "application/vnd.oci.image.index.v1+json")
