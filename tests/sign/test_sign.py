"""mpspack sign, verify --key and run --key (docs/SIGNING.md): a signature made with each key kind verifies on every
weights flavour, and every kind of tampering (wrong key, a flipped byte in any segment, a swapped segment, a
truncated or garbled signature, another container's signature, a missing or wrong kind of key) fails with exit
status non-zero, one line on stderr naming what failed, and `run --key` running nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import pathlib
import shutil
import subprocess

import pytest

from conftest import FLAVOURS, RUNNABLE, build


def one_line(r: subprocess.CompletedProcess) -> str:
    """The refusal's single stderr line (asserted to be the only one)."""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("mpspack: "), r.stderr
    return lines[0]


def refused(r: subprocess.CompletedProcess, *words: str) -> str:
    assert r.returncode != 0, r.stdout
    line = one_line(r)
    for w in words:
        assert w in line, line
    return line


def segments(cli, mpk: pathlib.Path) -> list[dict]:
    return json.loads(cli.ok("inspect", "--json", mpk).stdout)["segments"]


def flip(path: pathlib.Path, offset: int):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x40]))


def envelope(sig: pathlib.Path) -> dict:
    return json.loads(sig.read_text())


def statement(sig: pathlib.Path) -> dict:
    return json.loads(base64.b64decode(envelope(sig)["payload"]))


def key_id(openssl: str, public: pathlib.Path) -> str:
    der = subprocess.run([openssl, "pkey", "-pubin", "-in", public, "-outform", "DER"], check=True,
                         capture_output=True).stdout
    return hashlib.sha256(der).hexdigest()


@pytest.fixture(scope="module")
def signed(cli, fixtures, keys, tmp_path_factory) -> dict[str, pathlib.Path]:
    """A container of each flavour, signed with the Ed25519 key (FILE.sig beside it)."""
    d = tmp_path_factory.mktemp("signed")
    out = {}
    for flavour, case in FLAVOURS.items():
        mpk = build(cli, fixtures / case, d / f"{flavour}.mpk")
        cli.ok("sign", mpk, "--key", keys["ed25519"][0])
        out[flavour] = mpk
    return out


@pytest.mark.parametrize("kind", ["ed25519", "p256"])
@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_sign_verify_run_each_flavour_and_key(cli, fixtures, keys, openssl, tmp_path, kind, flavour):
    mpk = build(cli, fixtures / FLAVOURS[flavour], tmp_path / "m.mpk")
    private, public = keys[kind]
    signed = json.loads(cli.ok("sign", mpk, "--key", private, "--json").stdout)
    sig = tmp_path / "m.mpk.sig"
    assert signed["signature"] == str(sig) and sig.exists()
    assert signed["key_id"] == key_id(openssl, public)
    assert signed["algorithm"] == {"ed25519": "ed25519", "p256": "ecdsa-p256"}[kind]
    # The statement lists the header, the metadata and every segment, in the container's order.
    st = statement(sig)
    names = [s["name"] for s in st["subject"]]
    segs = segments(cli, mpk)
    assert names == ["header", "metadata"] + [f"segment/{s['index']}/{s['name']}" for s in segs]
    assert st["predicate"]["libraries"][0]["flavour"] == flavour
    r = cli.ok("verify", mpk, "--key", public)
    assert f"signed by key {signed['key_id']}" in r.stdout
    v = json.loads(cli.ok("verify", mpk, "--key", public, "--json").stdout)
    assert v["ok"] and v["subjects"] == len(names) and v["key_id"] == signed["key_id"]
    if flavour in RUNNABLE:
        cli.ok("run", mpk, "--key", public)


def test_inspect_shows_the_signature_without_checking_it(cli, signed, keys, openssl, tmp_path):
    mpk = signed["embedded"]
    kid = key_id(openssl, keys["ed25519"][1])
    r = cli.ok("inspect", mpk)
    assert f"signature: {mpk}.sig, by key id {kid}" in r.stdout
    j = json.loads(cli.ok("inspect", mpk, "--json").stdout)
    assert j["signature"]["key_ids"] == [kid]
    assert j["signature"]["predicate_type"] == "https://mpspack/signature/v1.0"
    unsigned = tmp_path / "unsigned.mpk"
    shutil.copy(mpk, unsigned)
    assert "signature: none beside it" in cli.ok("inspect", unsigned).stdout
    assert "signature" not in json.loads(cli.ok("inspect", unsigned, "--json").stdout)


def test_signature_named_elsewhere(cli, signed, keys, tmp_path):
    mpk = signed["external-blob"]
    sig = tmp_path / "elsewhere.dsse"
    cli.ok("sign", mpk, "--key", keys["p256"][0], "-o", sig)
    cli.ok("verify", mpk, "--key", keys["p256"][1], "--signature", sig)
    cli.ok("run", mpk, "--key", keys["p256"][1], "--signature", sig)


def copy_signed(signed: pathlib.Path, tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    mpk = tmp_path / "copy.mpk"
    shutil.copy(signed, mpk)
    shutil.copy(f"{signed}.sig", f"{mpk}.sig")
    return mpk, pathlib.Path(f"{mpk}.sig")


def check_refusals(cli, mpk: pathlib.Path, public: pathlib.Path, *words: str, runnable=True):
    """verify --key and run --key both refuse with one line holding `words`; run prints nothing on stdout (no
    report: nothing ran)."""
    v = cli("verify", mpk, "--key", public)
    refused(v, *words)
    if runnable:
        for bench in ([], ["--bench", "--iterations", "1", "--warmup", "0"]):
            r = cli("run", mpk, "--key", public, *bench)
            refused(r, *words)
            assert r.stdout == ""


def test_wrong_key(cli, signed, keys, tmp_path):
    mpk, _ = copy_signed(signed["embedded"], tmp_path)
    check_refusals(cli, mpk, keys["other"][1], f"{mpk}.sig", "not signed by this key")
    check_refusals(cli, mpk, keys["p256"][1], f"{mpk}.sig", "not signed by this key")


def test_flipped_byte_in_every_segment(cli, signed, keys, tmp_path):
    for flavour in RUNNABLE:
        for seg in segments(cli, signed[flavour]):
            if seg["size"] == 0:
                continue
            mpk, _ = copy_signed(signed[flavour], tmp_path)
            flip(mpk, seg["offset"] + seg["size"] // 2)
            check_refusals(cli, mpk, keys["ed25519"][1], str(mpk), f"segment/{seg['index']}/{seg['name']}",
                           "does not match the signature")


def test_flipped_padding_byte(cli, signed, keys, tmp_path):
    mpk, _ = copy_signed(signed["embedded"], tmp_path)
    segs = segments(cli, mpk)
    # The last byte before the first segment's 64 KiB boundary is padding after the metadata.
    flip(mpk, segs[0]["offset"] - 1)
    check_refusals(cli, mpk, keys["ed25519"][1], str(mpk), "outside every signed range")


def test_swapped_segment(cli, fixtures, signed, keys, tmp_path):
    """The weights of another build of the same library, same size, put in place of the signed ones."""
    case = fixtures / FLAVOURS["external-blob"]
    blob = (case / "weights.blob").read_bytes()
    other_blob = tmp_path / "other_weights.blob"
    other_blob.write_bytes(bytes(reversed(blob)))
    other = build(cli, case, tmp_path / "other.mpk", weights=other_blob)
    mpk, _ = copy_signed(signed["external-blob"], tmp_path)
    segs, other_segs = segments(cli, mpk), segments(cli, other)
    w = next(s for s in segs if s["kind"] == "weights")
    ow = next(s for s in other_segs if s["kind"] == "weights")
    assert (w["offset"], w["size"]) == (ow["offset"], ow["size"])
    with open(other, "rb") as f:
        f.seek(ow["offset"])
        replacement = f.read(ow["size"])
    with open(mpk, "r+b") as f:
        f.seek(w["offset"])
        f.write(replacement)
    check_refusals(cli, mpk, keys["ed25519"][1], str(mpk), f"segment/{w['index']}/{w['name']}",
                   "does not match the signature")


def test_truncated_and_garbled_signatures(cli, signed, keys, tmp_path):
    mpk, sig = copy_signed(signed["embedded"], tmp_path)
    text = sig.read_text()
    sig.write_text(text[: len(text) // 2])
    check_refusals(cli, mpk, keys["ed25519"][1], str(sig), "not a DSSE envelope", "truncated or garbled")
    # One character of the signature changed: still base64, no longer the key's signature.
    env = json.loads(text)
    s = env["signatures"][0]["sig"]
    env["signatures"][0]["sig"] = ("B" if s[0] != "B" else "C") + s[1:]
    sig.write_text(json.dumps(env))
    check_refusals(cli, mpk, keys["ed25519"][1], str(sig), "does not verify")
    # The signature cut short.
    env["signatures"][0]["sig"] = base64.b64encode(base64.b64decode(s)[:40]).decode()
    sig.write_text(json.dumps(env))
    check_refusals(cli, mpk, keys["ed25519"][1], str(sig), "does not verify")
    # The payload changed (a statement naming other digests) under the original signature.
    env = json.loads(text)
    st = json.loads(base64.b64decode(env["payload"]))
    st["subject"][2]["digest"]["sha256"] = "0" * 64
    env["payload"] = base64.b64encode(json.dumps(st).encode()).decode()
    sig.write_text(json.dumps(env))
    check_refusals(cli, mpk, keys["ed25519"][1], str(sig), "does not verify")
    # Not base64 at all.
    env = json.loads(text)
    env["signatures"][0]["sig"] = "@@@@"
    sig.write_text(json.dumps(env))
    check_refusals(cli, mpk, keys["ed25519"][1], str(sig), "not base64")


def test_signature_of_another_container(cli, signed, keys, tmp_path):
    mpk, sig = copy_signed(signed["embedded"], tmp_path)
    shutil.copy(f"{signed['external-blob']}.sig", sig)
    check_refusals(cli, mpk, keys["ed25519"][1], str(mpk), "another container")


def test_missing_files(cli, signed, keys, tmp_path):
    mpk = tmp_path / "lonely.mpk"
    shutil.copy(signed["embedded"], mpk)
    check_refusals(cli, mpk, keys["ed25519"][1], str(mpk), "no signature beside it")
    mpk, _ = copy_signed(signed["embedded"], tmp_path)
    check_refusals(cli, mpk, tmp_path / "absent.pem", "absent.pem")
    r = cli("verify", mpk, "--key", keys["ed25519"][1], "--signature", tmp_path / "absent.sig")
    refused(r, "absent.sig")
    r = cli("sign", mpk, "--key", tmp_path / "absent.pem", "-o", tmp_path / "out.sig")
    refused(r, "absent.pem")
    assert not (tmp_path / "out.sig").exists()


def test_keys_of_the_wrong_kind(cli, openssl, signed, keys, tmp_path):
    mpk, _ = copy_signed(signed["embedded"], tmp_path)
    private, public = keys["ed25519"]
    # A private key where the public one is read, and the other way round.
    check_refusals(cli, mpk, private, str(private), "a private key")
    out = tmp_path / "out.sig"
    refused(cli("sign", mpk, "--key", public, "-o", out), str(public), "a public key")
    rsa, rsa_pub = subprocess_key(openssl, tmp_path, "rsa", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048")
    refused(cli("sign", mpk, "--key", rsa, "-o", out), str(rsa), "an RSA key")
    check_refusals(cli, mpk, rsa_pub, str(rsa_pub), "an RSA key")
    p384, p384_pub = subprocess_key(openssl, tmp_path, "p384", "-algorithm", "EC", "-pkeyopt",
                                    "ec_paramgen_curve:P-384")
    refused(cli("sign", mpk, "--key", p384, "-o", out), str(p384), "curve P-384")
    check_refusals(cli, mpk, p384_pub, str(p384_pub), "curve P-384")
    enc = tmp_path / "enc.pem"
    subprocess.run([openssl, "pkey", "-in", private, "-aes256", "-passout", "pass:x", "-out", enc], check=True)
    refused(cli("sign", mpk, "--key", enc, "-o", out), str(enc), "encrypted")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n")
    check_refusals(cli, mpk, garbage, str(garbage))
    not_pem = tmp_path / "not.pem"
    not_pem.write_bytes(b"\x00\x01binary")
    check_refusals(cli, mpk, not_pem, str(not_pem), "not a PEM key file")
    assert not out.exists()


def subprocess_key(openssl, folder, name, *args):
    from conftest import make_key
    return make_key(openssl, folder, name, *args)


def test_sign_refuses_a_damaged_container_and_writes_nothing(cli, signed, keys, tmp_path):
    mpk = tmp_path / "damaged.mpk"
    shutil.copy(signed["embedded"], mpk)
    segs = segments(cli, mpk)
    flip(mpk, segs[0]["offset"] - 1)  # padding
    out = tmp_path / "damaged.sig"
    refused(cli("sign", mpk, "--key", keys["ed25519"][0], "-o", out), str(mpk), "not zero")
    assert not out.exists()
    # A byte flipped in a segment: its recorded XXH3 no longer matches, and sign says so.
    for seg in segments(cli, signed["embedded"]):
        shutil.copy(signed["embedded"], mpk)
        flip(mpk, seg["offset"] + seg["size"] // 2)
        refused(cli("sign", mpk, "--key", keys["ed25519"][0], "-o", out), str(mpk),
                f"segment {seg['index']} ('{seg['name']}'", "is damaged", "not signed")
        assert not out.exists()


def test_large_segment_is_signed_in_shards(cli, fixtures, keys, tmp_path):
    """A weights segment of 150 MiB: three shards of at most 64 MiB, each its own subject; a flipped byte in the
    third is named by its range."""
    case = fixtures / FLAVOURS["external-blob"]
    so = bytearray((case / "model.so").read_bytes())
    offset = json.loads(cli.ok("inspect", "--json", case / "model.so").stdout)["constants_region"]["file_offset"]
    size = 150 << 20
    so[offset:offset + 8] = size.to_bytes(8, "little")
    (tmp_path / "big.so").write_bytes(so)
    (tmp_path / "big_weights.blob").write_bytes(hashlib.shake_256(b"mpspack").digest(size))
    mpk = tmp_path / "big.mpk"
    cli.ok("build", tmp_path / "big.so", "-o", mpk)
    cli.ok("sign", mpk, "--key", keys["p256"][0])
    w = next(s for s in segments(cli, mpk) if s["kind"] == "weights")
    base = f"segment/{w['index']}/{w['name']}"
    names = [s["name"] for s in statement(pathlib.Path(f"{mpk}.sig"))["subject"]]
    shard = 64 << 20
    assert [n for n in names if n.startswith(base)] == [f"{base}:0:{shard}", f"{base}:{shard}:{2 * shard}",
                                                        f"{base}:{2 * shard}:{size}"]
    cli.ok("verify", mpk, "--key", keys["p256"][1])
    flip(mpk, w["offset"] + 2 * shard + 5)
    refused(cli("verify", mpk, "--key", keys["p256"][1]), f"{base}:{2 * shard}:{size}", "does not match")
    # Signing it now: the damaged 16 MiB chunk (the ninth, at 128 MiB) is named, and nothing is written.
    chunk = 16 << 20
    refused(cli("sign", mpk, "--key", keys["p256"][0], "-o", tmp_path / "again.sig"),
            f"chunk 8 (bytes {hex(8 * chunk)}-{hex(9 * chunk)})", "is damaged")
    assert not (tmp_path / "again.sig").exists()


def test_json_outputs_match_their_schemas(cli, signed, keys, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schemas = pathlib.Path(__file__).resolve().parents[2] / "docs" / "schema"
    verify_schema = json.loads((schemas / "verify.schema.json").read_text())
    inspect_schema = json.loads((schemas / "inspect-container.schema.json").read_text())
    mpk, sig = copy_signed(signed["embedded"], tmp_path)
    jsonschema.validate(json.loads(cli.ok("verify", mpk, "--key", keys["ed25519"][1], "--json").stdout), verify_schema)
    jsonschema.validate(json.loads(cli.ok("inspect", mpk, "--json").stdout), inspect_schema)
    failed = cli("verify", mpk, "--key", keys["other"][1], "--json")
    assert failed.returncode == 1
    report = json.loads(failed.stdout)
    jsonschema.validate(report, verify_schema)
    assert not report["ok"] and "not signed by this key" in report["problem"]
    sig.write_text("garbage")
    j = json.loads(cli.ok("inspect", mpk, "--json").stdout)
    jsonschema.validate(j, inspect_schema)
    assert "not a DSSE envelope" in j["signature"]["problem"]


def test_envelope_with_several_signatures(cli, signed, keys, tmp_path):
    """DSSE allows several signatures over one payload: each key finds its own, and one without a keyid is tried."""
    mpk, sig = copy_signed(signed["embedded"], tmp_path)
    other_sig = tmp_path / "other.sig"
    cli.ok("sign", mpk, "--key", keys["other"][0], "-o", other_sig)
    mine, theirs = envelope(sig), envelope(other_sig)
    assert mine["payload"] == theirs["payload"]  # the same statement: the same container, nothing random in it
    both = dict(mine, signatures=theirs["signatures"] + mine["signatures"])
    sig.write_text(json.dumps(both))
    cli.ok("verify", mpk, "--key", keys["ed25519"][1])
    cli.ok("verify", mpk, "--key", keys["other"][1])
    refused(cli("verify", mpk, "--key", keys["p256"][1]), "not signed by this key",
            mine["signatures"][0]["keyid"], theirs["signatures"][0]["keyid"])
    # Without key ids: every signature is tried with the key given.
    sig.write_text(json.dumps(dict(both, signatures=[{"sig": s["sig"]} for s in both["signatures"]])))
    cli.ok("verify", mpk, "--key", keys["ed25519"][1])
    refused(cli("verify", mpk, "--key", keys["p256"][1]), "does not verify")


def test_statement_fields_of_other_json_types(cli, signed, keys, openssl, tmp_path):
    """A signed statement whose fields have other JSON types than DSSE's (a key holder's mistake, or a hostile
    signer): inspect shows no predicate type and verify refuses it by name, never an uncaught exception."""
    mpk, sig = copy_signed(signed["embedded"], tmp_path)
    payload_type = envelope(sig)["payloadType"].encode()
    good = statement(sig)
    cases = [({"predicateType": 1}, "is not an in-toto"),
             (dict(good, _type=["x"]), "is not an in-toto"),
             (dict(good, predicateType={"v": 1}), 'has predicateType {"v":1}')]
    for st, words in cases:
        payload = json.dumps(st).encode()
        pae = tmp_path / "pae.bin"
        pae.write_bytes(b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type, len(payload), payload))
        raw = subprocess.run([openssl, "pkeyutl", "-sign", "-inkey", keys["ed25519"][0], "-rawin", "-in", pae],
                             check=True, capture_output=True).stdout
        env = {"payloadType": payload_type.decode(), "payload": base64.b64encode(payload).decode(),
               "signatures": [{"sig": base64.b64encode(raw).decode()}]}
        sig.write_text(json.dumps(env))
        j = json.loads(cli.ok("inspect", mpk, "--json").stdout)
        shown = st["predicateType"] if isinstance(st.get("predicateType"), str) else ""
        assert j["signature"]["predicate_type"] == shown, j["signature"]
        refused(cli("verify", mpk, "--key", keys["ed25519"][1]), words)
