"""push then pull through a real docker-registry: byte-identical containers, only changed layers uploaded, and
every bad input refused with one line, exit 2 and no output file."""

from __future__ import annotations

import hashlib
import json
import urllib.request

import pytest

from conftest import build_container, free_port


@pytest.fixture(scope="module")
def mlp(cli, fixtures, tmp_path_factory):
    return build_container(cli, fixtures / "rebuilt-bookworm" / "cpu_mlp_blob",
                           tmp_path_factory.mktemp("mlp") / "mlp.mpk")


def push(cli, registry, path, repo_tag):
    return cli.json("push", path, f"{registry.host}/{repo_tag}", "--plain-http")


def test_round_trip_is_byte_identical(cli, registry, mlp, tmp_path):
    report = push(cli, registry, mlp, "rt/mlp:v1")
    kinds = [l["kind"] for l in report["layers"]]
    assert kinds[0] == "header" and "library" in kinds
    assert report["bytes_sent"] + report["bytes_skipped"] == sum(l["size"] for l in report["layers"])
    out = tmp_path / "pulled.mpk"
    pulled = cli.json("pull", f"{registry.host}/rt/mlp:v1", "-o", out, "--plain-http")
    assert pulled["manifest_digest"] == report["manifest_digest"]
    assert out.read_bytes() == mlp.read_bytes()
    cli.ok("verify", out)
    # By digest too.
    out2 = tmp_path / "by_digest.mpk"
    cli.ok("pull", f"{registry.host}/rt/mlp@{report['manifest_digest']}", "-o", out2, "--plain-http")
    assert out2.read_bytes() == mlp.read_bytes()


def test_pushing_again_sends_nothing(cli, registry, mlp):
    push(cli, registry, mlp, "again/mlp:v1")
    before = registry.blobs()
    report = push(cli, registry, mlp, "again/mlp:v2")
    assert report["bytes_sent"] == 0
    assert not any(l["sent"] for l in report["layers"])
    assert registry.blobs() == before


def test_second_version_uploads_only_changed_layers(cli, registry, fixtures, mlp, tmp_path):
    case = fixtures / "rebuilt-bookworm" / "cpu_mlp_blob"
    blob = bytearray((case / "weights.blob").read_bytes())
    blob[100] ^= 0x40  # one value of one constant changes
    changed = tmp_path / "weights.blob"
    changed.write_bytes(blob)
    v2 = build_container(cli, case, tmp_path / "v2.mpk", weights=changed)
    first = push(cli, registry, mlp, "versions/mlp:v1")
    before = registry.blobs()
    second = push(cli, registry, v2, "versions/mlp:v2")
    sent = [l for l in second["layers"] if l["sent"]]
    # The metadata (it hashes the weights) and the layer holding the changed byte; the library is not resent.
    assert {l["kind"] for l in sent} <= {"header", "constant", "constants", "chunk"}
    assert not any(l["kind"] == "library" for l in sent)
    offsets_of_change = [l for l in sent if l["kind"] != "header"]
    assert len(offsets_of_change) == 1
    unchanged = {l["digest"] for l in first["layers"]} & {l["digest"] for l in second["layers"]}
    assert unchanged and all(not l["sent"] for l in second["layers"] if l["digest"] in unchanged)
    # The registry now holds exactly the sent layers more, besides the new config and manifest (which
    # distribution stores as blobs too).
    assert len(registry.blobs() - before) == len(sent) + 2
    assert second["bytes_sent"] == sum(l["size"] for l in sent)


def refused(result, *words):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("mpspack: "), result.stderr
    for w in words:
        assert w in lines[0], lines[0]


def no_output(tmp_path):
    assert list(tmp_path.iterdir()) == []


def test_unparsable_reference(cli, mlp, tmp_path):
    refused(cli("pull", "no-host-here", "-o", tmp_path / "x.mpk"), "not a registry reference")
    refused(cli("push", mlp, "localhost:5000/UPPER/case:v1"), "not a registry reference")
    refused(cli("pull", "localhost:5000/repo@sha256:abc", "-o", tmp_path / "x.mpk"), "digest")
    no_output(tmp_path)


def test_unreachable_registry(cli, mlp, tmp_path):
    port = free_port()  # nothing listens there
    refused(cli("pull", f"127.0.0.1:{port}/r/m:v1", "-o", tmp_path / "x.mpk", "--plain-http"), f"127.0.0.1:{port}")
    refused(cli("push", mlp, f"127.0.0.1:{port}/r/m:v1", "--plain-http"), f"127.0.0.1:{port}")
    no_output(tmp_path)


def test_https_to_a_plain_http_registry_hints_at_plain_http(cli, registry, mlp, tmp_path):
    # The registry serves plain HTTP: without --plain-http the TLS handshake fails, and the line says what to try.
    for r in (cli("push", mlp, f"{registry.host}/tls/mlp:v1"),
              cli("pull", f"{registry.host}/tls/mlp:v1", "-o", tmp_path / "x.mpk"),
              cli("inspect", f"oci://{registry.host}/tls/mlp:v1")):
        refused(r, f"https://{registry.host}/", "the registry may be serving plain HTTP", "--plain-http")
    no_output(tmp_path)


def test_missing_tag(cli, registry, mlp, tmp_path):
    push(cli, registry, mlp, "missing/mlp:v1")
    refused(cli("pull", f"{registry.host}/missing/mlp:nope", "-o", tmp_path / "x.mpk", "--plain-http"),
            "HTTP 404", "MANIFEST_UNKNOWN")
    no_output(tmp_path)


def upload(registry, repo: str, data: bytes) -> str:
    """A blob put there the way the distribution spec says: POST for a location, PUT the bytes with the digest."""
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    started = urllib.request.urlopen(
        urllib.request.Request(f"http://{registry.host}/v2/{repo}/blobs/uploads/", method="POST"))
    location = started.headers["Location"]
    if location.startswith("/"):
        location = f"http://{registry.host}{location}"
    location += ("&" if "?" in location else "?") + "digest=" + digest
    urllib.request.urlopen(urllib.request.Request(location, data=data, method="PUT",
                                                  headers={"Content-Type": "application/octet-stream"}))
    return digest


def test_another_artifact_type(cli, registry, tmp_path):
    config, layer = b"{}", b"not a container"
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": upload(registry, "other/img", config),
                   "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": upload(registry, "other/img", layer),
                    "size": len(layer)}],
    }
    req = urllib.request.Request(f"http://{registry.host}/v2/other/img/manifests/v1", data=json.dumps(manifest).encode(),
                                 method="PUT", headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"})
    urllib.request.urlopen(req)
    refused(cli("pull", f"{registry.host}/other/img:v1", "-o", tmp_path / "x.mpk", "--plain-http"),
            "not an mpspack container", "application/vnd.oci.image.config.v1+json")
    no_output(tmp_path)


@pytest.fixture
def cnn_pushed(cli, registry, fixtures, tmp_path_factory):
    """A container whose blobs no other test uses, so the tests may damage them."""
    mpk = build_container(cli, fixtures / "rebuilt-bookworm" / "cpu_cnn_blob", tmp_path_factory.mktemp("cnn") / "c.mpk")
    report = push(cli, registry, mpk, "damaged/cnn:v1")
    library = next(l for l in report["layers"] if l["kind"] == "library")
    path = registry.blob_path(library["digest"])
    saved = path.read_bytes()
    yield path
    path.chmod(0o644)
    path.write_bytes(saved)


def test_layer_not_matching_its_digest(cli, registry, cnn_pushed, tmp_path):
    data = bytearray(cnn_pushed.read_bytes())
    data[len(data) // 2] ^= 1
    cnn_pushed.write_bytes(data)
    refused(cli("pull", f"{registry.host}/damaged/cnn:v1", "-o", tmp_path / "x.mpk", "--plain-http"),
            "do not match the digest")
    no_output(tmp_path)


def test_truncated_stream(cli, registry, cnn_pushed, tmp_path):
    data = cnn_pushed.read_bytes()
    cnn_pushed.write_bytes(data[: len(data) // 3])
    refused(cli("pull", f"{registry.host}/damaged/cnn:v1", "-o", tmp_path / "x.mpk", "--plain-http"), "cut short")
    no_output(tmp_path)


def test_chunked_upload(cli, registry, fixtures, tmp_path):
    """Blobs above the chunk size go up in PATCH chunks (Content-Range), then a PUT with the digest."""
    block = build_container(cli, fixtures / "rebuilt-bookworm" / "cpu_block_blob", tmp_path / "block.mpk")
    before = registry.blobs()
    report = cli.json("push", block, f"{registry.host}/chunked/block:v1", "--plain-http",
                      "--upload-chunk-bytes", 65536)
    library = next(l for l in report["layers"] if l["kind"] == "library")
    assert library["sent"] and library["size"] > 4 * 65536 and library["digest"] in registry.blobs() - before
    out = tmp_path / "out"
    out.mkdir()
    cli.ok("pull", f"{registry.host}/chunked/block:v1", "-o", out / "pulled.mpk", "--plain-http")
    assert (out / "pulled.mpk").read_bytes() == block.read_bytes()


def test_reference_forms(cli, registry, mlp, tmp_path):
    """No tag means "latest"; repositories may nest; a digest names the manifest whatever the tag."""
    report = push(cli, registry, mlp, "deep/er/path/mlp")
    assert report["reference"] == f"{registry.host}/deep/er/path/mlp:latest"
    cli.ok("pull", f"{registry.host}/deep/er/path/mlp:latest", "-o", tmp_path / "a.mpk", "--plain-http")
    cli.ok("pull", f"{registry.host}/deep/er/path/mlp:ignored@{report['manifest_digest']}", "-o", tmp_path / "b.mpk",
           "--plain-http")
    assert (tmp_path / "a.mpk").read_bytes() == (tmp_path / "b.mpk").read_bytes() == mlp.read_bytes()
