#!/usr/bin/env bash
# Whether filling the page tables of the weights a CPU model uses from the container's pages at load
# (MADV_POPULATE_READ, MPSPACK_POPULATE_WEIGHTS=on), or on a thread of their own while the model runs
# (background), beats letting the first run fault them in (off), on the SYNTHETIC Linear model
# (bench/synthetic/make_linear.sh) in the blob layout (a mapped block), the mmap-self layout (a mapped block too:
# the one Create copies into from its own mapping) and the .pt2 layout (in place). The ways alternate in each of
# ROUNDS rounds; warm page cache; prints every round's load_to_first_result_ms and the medians.
#   bash bench/populate_weights.sh BUILD_DIR [MIB=1024] [ROUNDS=6]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
mib="${2:-1024}"; rounds="${3:-6}"
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-populate-XXXXXX")"
trap 'rm -rf "$work"' EXIT
bash "$root/bench/synthetic/make_linear.sh" "$build" "$mib" "$work" >&2
cat "$work/blob.mpk" "$work/mmap.mpk" "$work/pt2.mpk" > /dev/null
/usr/bin/python3 - "$build/bin/mpspack" "$work" "$rounds" "$mib" <<'PY'
import json, os, statistics, subprocess, sys
mpspack, work, rounds, mib = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
times = {}
for r in range(rounds):
    for layout in ("blob", "mmap", "pt2"):
        for way in ("on", "background", "off"):
            out = subprocess.run([mpspack, "run", "--bench", f"{work}/{layout}.mpk", "--iterations", "1", "--warmup",
                                  "0", "--format", "json"], env=dict(os.environ, MPSPACK_POPULATE_WEIGHTS=way),
                                 capture_output=True, text=True, check=True).stdout
            times.setdefault((layout, way), []).append(json.loads(out)["load_ms"]["load_to_first_result_ms"])
print(f"{os.cpu_count()} cores, {mib} MiB synthetic Linear, warm; load_to_first_result_ms per round, then median")
for (layout, way), v in times.items():
    print(f"{layout:5} populate {way:10}: " + " ".join(f"{x:.0f}" for x in v) + f"  median {statistics.median(v):.0f}")
PY
