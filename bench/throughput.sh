#!/usr/bin/env bash
# build / verify / unpack / inspect throughput against `cp` of the same bytes, side by side, same
# disk, same run. The input is a real external-blob library (a fixture) patched to record a blob of
# SIZE_MIB of random bytes (random, so nothing is sparse or compressible). Warm page cache: every
# file is read once before timing; before every timed run the previous run's output is removed and dirty
# pages are written back (`rm`, `sync`, untimed), so no run pays for deleting or writing back the last one's
# 2 GiB (replacing an existing 2 GiB file made a build take 4.7-9.4 s instead of 1.7-3.4). Prints GB/s and the ratio to cp for
# each step (best of RUNS). build and unpack are timed as they run by default (bytes in the page
# cache when they return, like cp) and with --fsync (on the disk, like cp + sync).
# build reads every input once, copies it and hashes it with SHA-256, so its floor is the slower of `cp` of
# the blob and `sha256sum` of build's inputs (the library and the blob): the script prints build's time over
# that, and over the slower of `cp` and `openssl dgst -sha256` (a SHA-256 with the CPU's SHA extensions, where
# coreutils' sha256sum, built without OpenSSL on Debian 12, hashes in portable C).
#
#   bash bench/throughput.sh [build-dir] [SIZE_MIB=2048] [RUNS=3]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build}/bin/mpspack"
size_mib="${2:-2048}"
runs="${3:-3}"
fixture="$root/../shared/fixtures/aoti-2.11/rebuilt-bookworm/cpu_mlp_blob"
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT

size=$(( size_mib << 20 ))
offset=$("$bin" inspect --json "$fixture/model.so" | python3 -c 'import json,sys; print(json.load(sys.stdin)["constants_region"]["file_offset"])')
cp "$fixture/model.so" "$work/big.so"
python3 - "$work/big.so" "$offset" "$size" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); f.write(struct.pack("<Q", int(sys.argv[3])))
PY
head -c "$size" /dev/urandom > "$work/big_weights.blob"
cat "$work/big_weights.blob" > /dev/null

best() {  # best wall seconds of $runs runs of "${@:2}", removing $1 (its output; "-": none) before each
  local out="$1" b=""; shift
  for _ in $(seq "$runs"); do
    local t0 t1
    [ "$out" = - ] || rm -rf "$out"
    sync
    t0=$(date +%s.%N); "$@" > /dev/null; t1=$(date +%s.%N)
    b=$(python3 -c "a=$t1-$t0; b='$b'; print(a if b=='' else min(a,float(b)))")
  done
  echo "$b"
}

cp_s=$(best "$work/copy.blob" cp "$work/big_weights.blob" "$work/copy.blob")
cps_s=$(best "$work/copy.blob" sh -c "cp '$work/big_weights.blob' '$work/copy.blob' && sync '$work/copy.blob'")
sha_s=$(best - sha256sum "$work/big.so" "$work/big_weights.blob")
if command -v openssl > /dev/null; then
  ossl_s=$(best - openssl dgst -sha256 "$work/big.so" "$work/big_weights.blob")
else
  ossl_s=nan
fi
build_s=$(best "$work/big.mpk" "$bin" build -q "$work/big.so" -o "$work/big.mpk")
builds_s=$(best "$work/big.mpk" "$bin" build -q --fsync "$work/big.so" -o "$work/big.mpk")
cat "$work/big.mpk" > /dev/null
verify_s=$(best - "$bin" verify -q "$work/big.mpk")
unpack_s=$(best "$work/out" "$bin" unpack -q "$work/big.mpk" -o "$work/out")
unpacks_s=$(best "$work/out" "$bin" unpack -q --fsync "$work/big.mpk" -o "$work/out")
inspect_s=$(best - "$bin" inspect --json "$work/big.mpk")

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(df -h "$work" | awk 'NR==2{print $1}'); blob ${size_mib} MiB; best of $runs"
python3 - "$size" "$cp_s" "$cps_s" "$build_s" "$builds_s" "$verify_s" "$unpack_s" "$unpacks_s" "$inspect_s" \
  "$sha_s" "$ossl_s" <<'PY'
import math, sys
size = int(sys.argv[1]); cp, cps, build, builds, verify, unpack, unpacks, inspect, sha, ossl = map(float, sys.argv[2:])
gbs = lambda s: size / s / 1e9
print(f"{'step':16} {'seconds':>8} {'GB/s':>7} {'vs cp':>6} {'vs cp+fsync':>11}")
for name, s in [("cp", cp), ("cp+fsync", cps), ("build", build), ("build --fsync", builds),
                ("verify", verify), ("unpack", unpack), ("unpack --fsync", unpacks)]:
    print(f"{name:16} {s:8.3f} {gbs(s):7.2f} {cp / s:6.2f} {cps / s:11.2f}")
print(f"inspect  {inspect * 1e3:8.2f} ms")
print(f"{'sha256sum':16} {sha:8.3f} {gbs(sha):7.2f} {cp / sha:6.2f}")
if not math.isnan(ossl):
    print(f"{'openssl sha256':16} {ossl:8.3f} {gbs(ossl):7.2f} {cp / ossl:6.2f}")
print(f"build / max(cp, sha256sum): {build / max(cp, sha):.2f} (target <= 1.10)")
if not math.isnan(ossl):
    print(f"build / max(cp, openssl sha256): {build / max(cp, ossl):.2f}")
PY
