"""An independent check of mpspack's signatures: the envelope verified as the DSSE specification says, with
python3-cryptography over the pre-authentication encoding, and the raw signature with the openssl command line; the
statement's subjects recomputed with hashlib from the byte ranges docs/SIGNING.md defines. Nothing of mpspack's is
used but `inspect --json` for the segments' offsets (a verifier of its own would read them from the metadata)."""

from __future__ import annotations

import base64
import hashlib
import json
import pathlib
import struct
import subprocess

import pytest

from conftest import FLAVOURS, build, missing

SHARD = 64 << 20


def pae(payload_type: bytes, payload: bytes) -> bytes:
    return b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type, len(payload), payload)


@pytest.fixture(scope="module")
def crypto():
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    except ImportError:
        missing("python3-cryptography")
    return hashes, serialization, ec, ed25519


def expected_subjects(cli, mpk: pathlib.Path) -> list[tuple[str, int, int]]:
    """(name, offset, size) of every subject, by the rules of docs/SIGNING.md."""
    data = mpk.read_bytes()[:128]
    header_size, = struct.unpack_from("<I", data, 12)
    metadata_offset, metadata_size = struct.unpack_from("<QQ", data, 24)
    out = [("header", 0, header_size), ("metadata", metadata_offset, metadata_size)]
    for s in json.loads(cli.ok("inspect", "--json", mpk).stdout)["segments"]:
        base = f"segment/{s['index']}/{s['name']}"
        if s["size"] <= SHARD:
            out.append((base, s["offset"], s["size"]))
            continue
        for begin in range(0, s["size"], SHARD):
            end = min(s["size"], begin + SHARD)
            out.append((f"{base}:{begin}:{end}", s["offset"] + begin, end - begin))
    return out


@pytest.mark.parametrize("kind", ["ed25519", "p256"])
def test_envelope_verifies_independently(cli, fixtures, keys, openssl, crypto, tmp_path, kind):
    hashes, serialization, ec, ed25519 = crypto
    mpk = build(cli, fixtures / FLAVOURS["external-blob"], tmp_path / "m.mpk")
    private, public = keys[kind]
    cli.ok("sign", mpk, "--key", private)
    env = json.loads((tmp_path / "m.mpk.sig").read_text())
    assert set(env) == {"payloadType", "payload", "signatures"}
    assert env["payloadType"] == "application/vnd.in-toto+json"
    payload = base64.b64decode(env["payload"], validate=True)
    [signature] = env["signatures"]
    sig = base64.b64decode(signature["sig"], validate=True)
    message = pae(env["payloadType"].encode(), payload)

    # The key id: SHA-256 of the public key's SubjectPublicKeyInfo DER.
    pub = serialization.load_pem_public_key(public.read_bytes())
    der = pub.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert signature["keyid"] == hashlib.sha256(der).hexdigest()

    # python3-cryptography over the PAE (raises InvalidSignature when it does not verify).
    if kind == "ed25519":
        assert isinstance(pub, ed25519.Ed25519PublicKey)
        pub.verify(sig, message)
    else:
        pub.verify(sig, message, ec.ECDSA(hashes.SHA256()))  # DER Ecdsa-Sig-Value, SHA-256 of the PAE

    # The openssl command line on the raw signature.
    (tmp_path / "pae.bin").write_bytes(message)
    (tmp_path / "sig.bin").write_bytes(sig)
    if kind == "ed25519":
        cmd = [openssl, "pkeyutl", "-verify", "-pubin", "-inkey", public, "-rawin", "-in", tmp_path / "pae.bin",
               "-sigfile", tmp_path / "sig.bin"]
    else:
        cmd = [openssl, "dgst", "-sha256", "-verify", public, "-signature", tmp_path / "sig.bin", tmp_path / "pae.bin"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0 and "Verified" in r.stdout + r.stderr, r.stdout + r.stderr
    # ...and refuses a PAE changed by one byte.
    (tmp_path / "pae.bin").write_bytes(message[:-1] + bytes([message[-1] ^ 1]))
    assert subprocess.run(cmd, capture_output=True).returncode != 0

    # The in-toto Statement v1 and its subjects against the container's bytes.
    st = json.loads(payload)
    assert st["_type"] == "https://in-toto.io/Statement/v1"
    assert st["predicateType"] == "https://mpspack/signature/v1.0"
    assert st["predicate"]["serialization"] == {"method": "mpspack-container", "hash_type": "sha256",
                                                "shard_size": SHARD}
    data = mpk.read_bytes()
    want = [{"name": n, "digest": {"sha256": hashlib.sha256(data[o:o + s]).hexdigest()}}
            for n, o, s in expected_subjects(cli, mpk)]
    assert st["subject"] == want
    # Every byte the subjects leave out is zero padding.
    covered = bytearray(len(data))
    for _, o, s in expected_subjects(cli, mpk):
        covered[o:o + s] = b"\x01" * s
    assert all(b == 0 for b, c in zip(data, covered) if not c)
