"""Every --json output of the CLI matches its documented schema (docs/schema/*.schema.json), checked
with Debian's python3-jsonschema (JSON Schema draft 2020-12): inspect (a container, a raw library, a
.pt2), verify (intact and damaged), diff (same and different), build, run (matching and mismatching),
run --bench and unpack. Each case also asserts that the optional part of its schema it was chosen
for was exercised, and that a field going missing, changing type or appearing unannounced fails."""

from __future__ import annotations

import copy
import json
import pathlib
import subprocess

import jsonschema
import pytest

from conftest import SOURCE_DIR

SCHEMAS = SOURCE_DIR / "docs" / "schema"


def schema(name: str) -> dict:
    s = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(s)
    return s


def errors(doc, name: str) -> list:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in jsonschema.Draft202012Validator(schema(name)).iter_errors(doc)]


def output(mpspack_bin, args, code: int, name: str) -> dict:
    r = subprocess.run([mpspack_bin, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == code, r.stderr
    doc = json.loads(r.stdout)
    assert errors(doc, name) == []
    return doc


@pytest.fixture(scope="module")
def rebuilt(fixtures) -> pathlib.Path:
    return fixtures / "rebuilt-bookworm"


def test_every_schema_is_draft_2020_12_and_valid():
    names = sorted(p.name for p in SCHEMAS.glob("*.schema.json"))
    assert len(names) >= 9
    for n in names:
        s = schema(n.removesuffix(".schema.json"))
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema", n


def test_inspect_verify_and_diff(tmp_path, mpspack_bin, fixtures, rebuilt):
    a, b = tmp_path / "a.mpk", tmp_path / "b.mpk"
    embedded = rebuilt / "cpu_mlp_embedded" / "model.so"
    blob_dir = rebuilt / "cpu_mlp_blob"
    # a: a .pt2 (a constants table) and an embedded library; b: an external-blob library.
    output(mpspack_bin, ["build", fixtures / "pt2" / "pkg.pt2", embedded, "-o", a, "--json"], 0, "build")
    output(mpspack_bin, ["build", blob_dir / "model.so", "--weights", blob_dir / "weights.blob", "-o", b, "--json"],
           0, "build")

    j = output(mpspack_bin, ["inspect", a, "--json"], 0, "inspect-container")
    assert j["weights"][0]["constants"]  # the constants' schema was exercised
    output(mpspack_bin, ["inspect", b, "--json"], 0, "inspect-container")
    output(mpspack_bin, ["inspect", embedded, "--json"], 0, "inspect-library")
    j = output(mpspack_bin, ["inspect", blob_dir / "model.so", "--json"], 0, "inspect-library")
    assert "recorded_blob_size" in j
    j = output(mpspack_bin, ["inspect", fixtures / "pt2" / "blob.pt2", "--json"], 0, "inspect-pt2")
    assert len(j["models"][0]["constants"]) == 1

    output(mpspack_bin, ["verify", a, "--json"], 0, "verify")
    data = bytearray(b.read_bytes())
    data[-1] ^= 0xFF  # inside the last segment
    (tmp_path / "seg.mpk").write_bytes(data)
    assert "segments" in output(mpspack_bin, ["verify", tmp_path / "seg.mpk", "--json"], 1, "verify")
    data = bytearray(b.read_bytes())
    data[70] ^= 0xFF  # the header checksum
    (tmp_path / "hdr.mpk").write_bytes(data)
    output(mpspack_bin, ["verify", tmp_path / "hdr.mpk", "--json"], 1, "verify")

    output(mpspack_bin, ["diff", a, a, "--json"], 0, "diff")
    j = output(mpspack_bin, ["diff", a, b, "--json"], 1, "diff")
    assert any(d["a"] is None or d["b"] is None for d in j["differences"])  # the null form was exercised


def test_build_run_and_unpack(tmp_path, mpspack_bin, tiny_so):
    e, mpk = tiny_so.parent, tmp_path / "tiny.mpk"
    j = output(mpspack_bin, ["build", tiny_so, "--example-input", f"{e / 'input0.bin'}:f32:4x16", "--example-output",
                             f"{e / 'expected0.bin'}:f32:4x8", "-o", mpk, "--json"], 0, "build")
    assert j["libraries"] == 1
    j = output(mpspack_bin, ["run", mpk, "--json", "--output", tmp_path / "out"], 0, "run")
    assert j["outputs"][0]["match"] is True and "written" in j["outputs"][0]
    (tmp_path / "wrong.bin").write_bytes(bytes(4 * 8 * 4))
    j = output(mpspack_bin, ["run", mpk, "--json", "--input", f"{e / 'input0.bin'}:f32:4x16", "--expect",
                             f"{tmp_path / 'wrong.bin'}:f32:4x8"], 1, "run")
    assert "first_mismatch" in j["outputs"][0]  # the comparison's failure fields
    j = output(mpspack_bin, ["run", mpk, "--json", "--seed", "3"], 0, "run")
    assert j["inputs"] == "seed" and j["seed"] == 3 and j["checked"] is False
    j = output(mpspack_bin, ["run", "--bench", mpk, "--json", "--seed", "3", "--iterations", "2", "--repetitions", "2",
                             "--percentile", "99.9", "--threads", "1"], 0, "bench")
    assert j["percentiles_ms"] and j["percentiles_ms_stddev"]  # the percentiles' schema was exercised
    assert j["inputs"] == "seed" and j["seed"] == 3 and j["threads"] == 1 and j["repetitions"] == 2
    for field in ("latency_ms_stddev", "percentiles_ms", "threads", "seed"):
        bad = copy.deepcopy(j)
        del bad[field]
        assert errors(bad, "bench"), field
    bad = copy.deepcopy(j)
    bad["percentiles_ms"]["median"] = 1.0  # a key that is no percentile
    assert errors(bad, "bench")
    j = output(mpspack_bin, ["unpack", mpk, "-o", tmp_path / "unpacked", "--json"], 0, "unpack")
    assert [pathlib.Path(p).name for p in j["written"]] == [tiny_so.name, "input0.bin", "expected0.bin", "rebuild.sh"]
    assert all(pathlib.Path(p).exists() for p in j["written"])
    assert j["rebuild"]["identical"] is True and "why_not" not in j["rebuild"]
    bad = copy.deepcopy(j)
    bad["rebuild"]["identical"] = False  # a rebuild that differs must say why
    assert errors(bad, "unpack")


def test_run_bench(tmp_path, mpspack_bin, rebuilt):
    spec = ":f32:" + "x".join(str(d) for d in recorded_input_shape(rebuilt, "cpu_mlp_embedded"))
    e, b = tmp_path / "e.mpk", tmp_path / "b.mpk"
    output(mpspack_bin, ["build", rebuilt / "cpu_mlp_embedded" / "model.so", "-o", e, "--json"], 0, "build")
    output(mpspack_bin, ["build", rebuilt / "cpu_mlp_blob" / "model.so", "--weights",
                         rebuilt / "cpu_mlp_blob" / "weights.blob", "-o", b, "--json"], 0, "build")
    j = output(mpspack_bin, ["run", "--bench", e, "--input", f"{rebuilt / 'cpu_mlp_embedded' / 'input0.bin'}{spec}",
                             "--json", "--iterations", "3", "--export-times", tmp_path / "t.json"], 0, "bench")
    assert "export_times" in j
    j = output(mpspack_bin, ["run", "--bench", b, "--input", f"{rebuilt / 'cpu_mlp_blob' / 'input0.bin'}{spec}",
                             "--json", "--iterations", "2", "--cold"], 0, "bench")
    assert "cold_cache" in j  # the optional object's schema was exercised
    bad = copy.deepcopy(j)
    del bad["latency_ms"]["p99"]
    assert errors(bad, "bench")


def recorded_input_shape(rebuilt: pathlib.Path, case: str) -> list:
    for c in json.loads((rebuilt / "manifest.json").read_text())["cases"]:
        if c["dir"] == case:
            i = c["inputs"][0]
            assert i["dtype"] == "torch.float32", i
            return i["shape"]
    raise AssertionError(f"{case} is not in {rebuilt / 'manifest.json'}")


def test_a_documented_field_missing_retyped_or_unannounced_fails(tmp_path, mpspack_bin, rebuilt):
    mpk = tmp_path / "m.mpk"
    output(mpspack_bin, ["build", rebuilt / "cpu_mlp_embedded" / "model.so", "-o", mpk, "--json"], 0, "build")
    good = output(mpspack_bin, ["inspect", mpk, "--json"], 0, "inspect-container")
    for edit in (lambda j: j["libraries"][0].pop("original_sha256"),
                 lambda j: j["header"].__setitem__("file_size", "123"),
                 lambda j: j["segments"][0].__setitem__("kind", "other"),
                 lambda j: j["segments"][0].__setitem__("surprise", 1)):
        j = copy.deepcopy(good)
        edit(j)
        assert errors(j, "inspect-container")
