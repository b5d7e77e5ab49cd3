#!/usr/bin/env bash
# Regenerates the seed corpora under tests/fuzz/corpus/<target>/ from the AOTInductor fixtures
# (../shared/fixtures/aoti-2.11 beside the checkout) and a few synthetic files. Small files only
# (the whole corpus stays well under 2 MB): containers are kept as their header + metadata (the
# fuzz_container harness zero-extends an input to the file_size its header declares), the .pt2
# packages are rebuilt with their 2 MB libraries swapped for a small synthetic one.
#
#   tests/fuzz/make_corpus.sh [MPSPACK_BINARY] [FIXTURES_DIR]
#
# Needs: an mpspack binary (default build/bin/mpspack), the make_shared_seeds binary (built beside the
# tests, or MAKE_SHARED_SEEDS=PATH), cc, objcopy, python3 (with python3-cryptography). Deterministic: the
# same fixtures and tools give the same files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mpspack="${1:-$root/build/bin/mpspack}"
fixtures="${2:-$root/../shared/fixtures/aoti-2.11}"
corpus="$here/corpus"
[ -x "$mpspack" ] || { echo "make_corpus: no mpspack binary at $mpspack (build it, or pass its path)" >&2; exit 2; }
[ -d "$fixtures/rebuilt-bookworm" ] || { echo "make_corpus: no fixtures at $fixtures" >&2; exit 2; }
rb="$fixtures/rebuilt-bookworm"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rm -rf "$corpus"
mkdir -p "$corpus"/{fuzz_container,fuzz_elf,fuzz_pt2,fuzz_tensor,fuzz_signature}

# --- Synthetic AOTInductor-shaped libraries (a few KB): constants blob linked in with objcopy the
# way AOTInductor does it (so _binary_constants_bin_start/_end exist), one shim import.
python3 -c "import sys; sys.stdout.buffer.write(bytes(range(256)) * 2)" > "$work/constants.bin"
(cd "$work" && objcopy -I binary -O elf64-x86-64 -B i386:x86-64 \
  --rename-section .data=.lrodata,alloc,load,readonly,data,contents constants.bin constants.o)
cat > "$work/tiny.c" <<'C'
extern const unsigned char _binary_constants_bin_start[], _binary_constants_bin_end[];
void* aoti_torch_empty_strided(void);
float Sleef_expf8_u10(float);
long AOTInductorModelContainerCreateWithDevice(void) {
  return (long)aoti_torch_empty_strided() + (long)Sleef_expf8_u10(1.0f) +
         (long)(_binary_constants_bin_end - _binary_constants_bin_start);
}
C
cc -shared -fPIC -O1 -Wl,--build-id=none,-z,noexecstack -o "$work/tiny_embedded.so" "$work/tiny.c" "$work/constants.o"
cc -shared -fPIC -O1 -Wl,--build-id=none,-z,noexecstack -s -o "$work/tiny_stripped.so" "$work/tiny.c" "$work/constants.o"
cc -shared -fPIC -O1 -Wl,--build-id=none,-z,noexecstack -Wl,--no-as-needed -lm -o "$work/tiny_needed.so" "$work/tiny.c" "$work/constants.o"
echo 'int f(void) { return 1; }' > "$work/plain.c"
cc -shared -fPIC -O1 -Wl,--build-id=none,-z,noexecstack -s -o "$work/plain.so" "$work/plain.c"

# --- fuzz_elf: the synthetic libraries and one real (small) fixture library of each flavour.
cp "$work"/tiny_embedded.so "$work"/tiny_stripped.so "$work"/tiny_needed.so "$work"/plain.so "$corpus/fuzz_elf/"
cp "$rb/cpu_mlp_blob/model.so" "$corpus/fuzz_elf/cpu_mlp_blob.so"

# --- fuzz_container: containers built by mpspack, cut after their metadata; one kept whole.
build() { local out="$1"; shift; "$mpspack" build "$@" -o "$work/$out.mpk" >/dev/null; }
build tiny_embedded "$work/tiny_embedded.so"
build mlp_embedded_examples "$rb/cpu_mlp_embedded/model.so" \
  --example-input "$rb/cpu_mlp_embedded/input0.bin:f32:8x64" --example-output "$rb/cpu_mlp_embedded/expected0.bin:f32:8x10"
build mlp_blob "$rb/cpu_mlp_blob/model.so" --weights "$rb/cpu_mlp_blob/weights.blob"
build two_libraries "$rb/cpu_mlp_embedded/model.so" "$rb/cpu_cnn_blob/model.so" --weights "$rb/cpu_cnn_blob/weights.blob"
build pt2_constants "$fixtures/pt2/blob.pt2"
cp "$work/tiny_embedded.mpk" "$corpus/fuzz_container/tiny_embedded_whole.mpk"
# Metadata that shares one string, patch or library table many times (the total decoded size bound).
seeds="${MAKE_SHARED_SEEDS:-$(dirname "$mpspack")/make_shared_seeds}"
[ -x "$seeds" ] || seeds="$root/build/tests/fuzz/make_shared_seeds"
[ -x "$seeds" ] || { echo "make_corpus: no make_shared_seeds binary (ninja make_shared_seeds)" >&2; exit 2; }
"$seeds" "$corpus/fuzz_container"
for f in "$work"/*.mpk; do
  python3 - "$f" "$corpus/fuzz_container/$(basename "${f%.mpk}").head" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
meta_offset, meta_size = struct.unpack_from("<QQ", data, 24)
open(sys.argv[2], "wb").write(data[:meta_offset + meta_size])
PY
done

# --- fuzz_pt2: the fixture packages rebuilt small: every entry kept, the compiled library swapped
# for the synthetic one, big entries cut to 4 KB; one stored, one deflated, the CUDA one with a cubin.
for p in pkg blob cuda; do
  python3 - "$fixtures/pt2/$p.pt2" "$corpus/fuzz_pt2/$p.pt2" "$work/tiny_stripped.so" "$p" <<'PY'
import sys, zipfile
src, dst, lib, kind = sys.argv[1:]
method = zipfile.ZIP_DEFLATED if kind == "blob" else zipfile.ZIP_STORED
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", method) as zout:
    for info in zin.infolist():
        data = zin.read(info.filename)
        if info.filename.endswith(".so"):
            data = open(lib, "rb").read()
        elif info.filename.endswith(".kernel.cpp") or info.filename.endswith(".cubin"):
            data = data[:4096]
        out = zipfile.ZipInfo(info.filename, date_time=(2024, 1, 1, 0, 0, 0))
        out.compress_type = method
        out.external_attr = info.external_attr
        zout.writestr(out, data)
PY
done

# --- fuzz_tensor: "<spec suffix>\n<file bytes>": .npy files of several dtypes, raw files with
# their DTYPE:SHAPE, and a spec with no file.
python3 - "$corpus/fuzz_tensor" "$rb/cpu_mlp_embedded/input0.bin" <<'PY'
import struct, sys, os
out, raw_input = sys.argv[1], sys.argv[2]
def npy(descr, shape, payload, version=1):
    shape_txt = "(" + "".join(f"{d}," if len(shape) == 1 else f"{d}, " for d in shape).rstrip(" ") + ")"
    if len(shape) > 1: shape_txt = "(" + ", ".join(str(d) for d in shape) + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
    prefix = 10 if version == 1 else 12
    pad = (64 - (prefix + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    if version == 1:
        head = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header))
    else:
        head = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(header))
    return head + header.encode() + payload
def put(name, spec, body):
    open(os.path.join(out, name), "wb").write(spec.encode() + b"\n" + body)
f32 = open(raw_input, "rb").read()[:256]
put("f32_4x16.npy", "", npy("<f4", (4, 16), f32))
put("f16_8.npy", "", npy("<f2", (8,), bytes(range(16))))
put("i64_2x3_v2.npy", "", npy("<i8", (2, 3), bytes(48), version=2))
put("bool_scalar_v3.npy", "", npy("|b1", (), b"\x01", version=3))
put("u8_0x4.npy", "", npy("|u1", (0, 4), b""))
put("f64_fortran.npy", "", npy("<f8", (2,), bytes(16)).replace(b"False", b"True "))
put("npy_with_spec", ":f32:4x16", npy("<f4", (4, 16), f32))
put("raw_f32_4x16", ":f32:4x16", f32)
put("raw_bf16_2x2", ":bf16:2x2", bytes(8))
put("raw_i8_scalar", ":i8:scalar", b"\x07")
put("raw_hint", "h", bytes(16))
put("no_spec", "", f32[:64])
PY
# --- fuzz_signature: "<mode byte><bytes>" (fuzz_signature.cpp): key DER of both kinds from fixed secrets, a DSSE
# envelope signed with Ed25519 (deterministic), and signatures after their key. Needs python3-cryptography.
python3 - "$corpus/fuzz_signature" <<'PY'
import base64, hashlib, json, os, sys
from cryptography.hazmat.primitives import hashes, serialization as s
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
out = sys.argv[1]
def put(name, mode, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([mode]) + data)
ed = ed25519.Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"mpspack fuzz ed25519").digest())
p256 = ec.derive_private_key(int.from_bytes(hashlib.sha256(b"mpspack fuzz p256").digest(), "big") % (2**255), ec.SECP256R1())
spki = lambda k: k.public_key().public_bytes(s.Encoding.DER, s.PublicFormat.SubjectPublicKeyInfo)
pkcs8 = lambda k: k.private_bytes(s.Encoding.DER, s.PrivateFormat.PKCS8, s.NoEncryption())
put("spki_ed25519", 0, spki(ed))
put("spki_p256", 0, spki(p256))
put("pkcs8_ed25519", 1, pkcs8(ed))
put("pkcs8_p256", 1, pkcs8(p256))
statement = json.dumps({"_type": "https://in-toto.io/Statement/v1", "predicateType": "https://mpspack/signature/v1.0",
                        "subject": [{"name": "header", "digest": {"sha256": "00" * 32}}], "predicate": {}}).encode()
t = b"application/vnd.in-toto+json"
pae = b"DSSEv1 %d %s %d %s" % (len(t), t, len(statement), statement)
keyid = hashlib.sha256(spki(ed)).hexdigest()
envelope = {"payloadType": t.decode(), "payload": base64.b64encode(statement).decode(),
            "signatures": [{"keyid": keyid, "sig": base64.b64encode(ed.sign(pae)).decode()}]}
put("envelope_ed25519", 2, json.dumps(envelope).encode())
message = b"DSSEv1 28 application/vnd.in-toto+json 2 {}"
put("sig_ed25519", 3, bytes([len(spki(ed))]) + spki(ed) + ed.sign(message))
# ECDSA signatures are random; a fixed (r, s) of the right form keeps the corpus the same from run to run.
put("sig_p256", 3, bytes([len(spki(p256))]) + spki(p256) + encode_dss_signature(2**255 - 19, 2**254 + 7))
PY
du -sh "$corpus"/*
