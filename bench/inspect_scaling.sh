#!/usr/bin/env bash
# inspect's time must not grow with the weights: it reads only the header and metadata.
# Builds a small container (a real fixture, 38 KiB of weights) and a 4.5 GiB one (the same
# library patched to record a 4.5 GiB external blob, the blob sparse), then times `inspect` on
# both side by side with hyperfine and prints the ratio.
#
#   bash bench/inspect_scaling.sh [build-dir]        (needs ../shared and hyperfine)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build}/bin/mpspack"
fixture="$root/../shared/fixtures/aoti-2.11/rebuilt-bookworm/cpu_mlp_blob"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$bin" build "$fixture/model.so" --weights "$fixture/weights.blob" -o "$work/small.mpk" -q
offset=$("$bin" inspect --json "$fixture/model.so" | python3 -c 'import json,sys; print(json.load(sys.stdin)["constants_region"]["file_offset"])')
size=$(( (4 << 30) + (512 << 20) ))
cp "$fixture/model.so" "$work/big.so"
python3 - "$work/big.so" "$offset" "$size" <<'PY'
import struct, sys
path, off, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "r+b") as f:
    f.seek(off); f.write(struct.pack("<Q", size))
PY
truncate -s "$size" "$work/big_weights.blob"
"$bin" build "$work/big.so" -o "$work/big.mpk" -q
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; containers: $(stat -c %s "$work/small.mpk") and $(stat -c %s "$work/big.mpk") bytes"
hyperfine -N --warmup 5 --runs 50 --export-json "$work/h.json" \
  "$bin inspect --json $work/small.mpk" "$bin inspect --json $work/big.mpk"
python3 - "$work/h.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
small, big = r[0]["mean"] * 1e3, r[1]["mean"] * 1e3
print(f"inspect: small {small:.2f} ms, 4.5 GiB {big:.2f} ms, ratio big/small {big/small:.2f}")
PY
