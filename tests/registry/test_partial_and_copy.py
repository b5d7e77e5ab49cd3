"""pull --library (a smaller container that verifies and runs), inspect oci:// (metadata only), and a copy made
by skopeo between two repositories that pulls back to the same bytes."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import missing
from test_push_pull import no_output, refused


@pytest.fixture(scope="module")
def two_libraries(cli, fixtures, registry, tmp_path_factory):
    """cnn (embedded weights) and mlp (external blob) in one container, pushed as two/models:v1."""
    rb = fixtures / "rebuilt-bookworm"
    d = tmp_path_factory.mktemp("two")
    shutil.copy(rb / "cpu_cnn_embedded" / "model.so", d / "cnn.so")
    shutil.copy(rb / "cpu_mlp_blob" / "model.so", d / "mlp.so")
    mpk = d / "two.mpk"
    cli.ok("build", d / "cnn.so", d / "mlp.so", "--weights", rb / "cpu_mlp_blob" / "weights.blob", "-o", mpk)
    report = cli.json("push", mpk, f"{registry.host}/two/models:v1", "--plain-http")
    return mpk, report


@pytest.mark.parametrize("name,case,shape_in,shape_out", [
    ("mlp", "cpu_mlp_blob", "8x64", "8x10"),
    ("cnn", "cpu_cnn_embedded", "4x3x32x32", "4x10"),
])
def test_pull_library_verifies_and_runs(cli, fixtures, registry, two_libraries, tmp_path, name, case, shape_in,
                                        shape_out):
    mpk, pushed = two_libraries
    out = tmp_path / f"{name}.mpk"
    pulled = cli.json("pull", f"{registry.host}/two/models:v1", "--library", name, "-o", out, "--plain-http")
    # Only the chosen library's layers came down (plus the metadata).
    other = next(l for l in pushed["layers"] if l["kind"] == "library" and l["name"] != f"{name}.so")
    assert other["digest"] not in {l["digest"] for l in pulled["layers"]}
    assert pulled["bytes_fetched"] < mpk.stat().st_size
    cli.ok("verify", out)
    info = cli.json("inspect", out)
    assert [l["name"] for l in info["libraries"]] == [name]
    assert out.stat().st_size < mpk.stat().st_size
    d = fixtures / "rebuilt-bookworm" / case
    cli.ok("run", out, "--input", f"{d / 'input0.bin'}:f32:{shape_in}", "--expect",
           f"{d / 'expected0.bin'}:f32:{shape_out}")


def test_pull_library_unknown_name(cli, registry, two_libraries, tmp_path):
    refused(cli("pull", f"{registry.host}/two/models:v1", "--library", "nope", "-o", tmp_path / "x.mpk",
                "--plain-http"), "no library named 'nope'", "cnn", "mlp")
    no_output(tmp_path)


def test_inspect_oci_reads_the_metadata(cli, registry, two_libraries):
    mpk, _ = two_libraries
    local = cli.json("inspect", mpk)
    remote = cli.json("inspect", f"oci://{registry.host}/two/models:v1", "--plain-http")
    # The symbol versions are read from the stored libraries, which only the metadata layer's fetch leaves out.
    for lib in local["libraries"]:
        assert lib.pop("version_needs")["highest"]["glibc"].startswith("GLIBC_2.")
    for lib in remote["libraries"]:
        assert lib.pop("version_needs") is None
    assert remote["libraries"] == local["libraries"]
    assert remote["segments"] == local["segments"]
    text = cli.ok("inspect", f"oci://{registry.host}/two/models:v1", "--plain-http").stdout
    assert "cnn" in text and "mlp" in text
    assert "highest symbol versions needed: (not known: only the metadata was fetched)" in text


def test_inspect_oci_bad_reference(cli):
    refused(cli("inspect", "oci://nohost"), "not a registry reference")


def test_skopeo_copy_then_pull(cli, registry, two_libraries, tmp_path):
    skopeo = shutil.which("skopeo")
    if not skopeo:
        missing("skopeo (Debian package skopeo)")
    mpk, _ = two_libraries
    r = subprocess.run([skopeo, "copy", "--src-tls-verify=false", "--dest-tls-verify=false",
                        f"docker://{registry.host}/two/models:v1", f"docker://{registry.host}/copied/models:v2"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "copy.mpk"
    cli.ok("pull", f"{registry.host}/copied/models:v2", "-o", out, "--plain-http")
    assert out.read_bytes() == mpk.read_bytes()
