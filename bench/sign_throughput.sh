#!/usr/bin/env bash
# sign and verify --key throughput on a container of SIZE_MIB (default 4096) of random weights, warm page cache,
# best of RUNS, beside `openssl dgst -sha256` of the same container (one core, SHA extensions) and `verify`
# without a key (XXH3). The container is a real external-blob library (a fixture) patched to record a blob of that
# size, as bench/throughput.sh makes it. Prints GB/s (10^9 bytes per second of the container's size) of wall time
# and of CPU time (rate() below says why both).
#
#   bash bench/sign_throughput.sh [build-dir] [SIZE_MIB=4096] [RUNS=3]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build}/bin/mpspack"
size_mib="${2:-4096}"
runs="${3:-3}"
fixture="$root/../shared/fixtures/aoti-2.11/rebuilt-bookworm/cpu_mlp_blob"
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-sign-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT

size=$(( size_mib << 20 ))
offset=$("$bin" inspect --json "$fixture/model.so" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["constants_region"]["file_offset"])')
cp "$fixture/model.so" "$work/big.so"
/usr/bin/python3 - "$work/big.so" "$offset" "$size" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); f.write(struct.pack("<Q", int(sys.argv[3])))
PY
head -c "$size" /dev/urandom > "$work/big_weights.blob"
"$bin" -q build "$work/big.so" -o "$work/big.mpk"
rm "$work/big_weights.blob"  # only the container stays in the page cache
openssl genpkey -algorithm ed25519 -out "$work/ed25519.pem" 2>/dev/null
openssl pkey -in "$work/ed25519.pem" -pubout -out "$work/ed25519.pub.pem"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/p256.pem" 2>/dev/null
openssl pkey -in "$work/p256.pem" -pubout -out "$work/p256.pub.pem"
cat "$work/big.mpk" > /dev/null
bytes=$(stat -c %s "$work/big.mpk")

# "<GB/s wall> (<s> s), <GB/s per CPU-second> per core": the run of "$@" with the best wall time of $runs; the
# second figure (bytes over the run's user + system CPU seconds) is what one core hashes, and does not drop when
# other work shares the cores, as the wall time does on a busy machine.
rate() {
  /usr/bin/python3 - "$bytes" "$runs" "$@" <<'PY'
import resource, subprocess, sys, time
size, runs, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
best = None
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if best is None or wall < best[0]:
        best = (wall, cpu)
wall, cpu = best
print(f"{size / wall / 1e9:5.2f} GB/s ({wall:.2f} s wall), {size / cpu / 1e9:5.2f} GB/s per CPU-second ({cpu:.2f} s CPU)")
PY
}

echo "container: $bytes bytes, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in ed25519 p256; do
  printf '%-24s %s\n' "sign ($kind):" "$(rate "$bin" -q sign "$work/big.mpk" --key "$work/$kind.pem")"
  printf '%-24s %s\n' "verify --key ($kind):" "$(rate "$bin" -q verify "$work/big.mpk" --key "$work/$kind.pub.pem")"
done
printf '%-24s %s\n' "verify (XXH3, no key):" "$(rate "$bin" -q verify "$work/big.mpk")"
printf '%-24s %s\n' "openssl dgst -sha256:" "$(rate openssl dgst -sha256 "$work/big.mpk")"
