#!/usr/bin/env bash
# Embedded weights: the two ways the loader can put them back (memcpy, mmap; MPSPACK_EMBEDDED_WEIGHTS), each
# with Create's block faulted in up front (the default), and mmap once more with Create's block left to the C
# library's malloc (`mmap, libc malloc`: MPSPACK_LARGE_BLOCKS=libc); end to end to the first result, warm and cold,
# on a SYNTHETIC embedded model with PAD_MIB MiB of extra constant. The ways alternate within each of RUNS rounds;
# medians; prints a Markdown table (docs/PERFORMANCE.md).
#   bash bench/embedded_weights.sh BUILD_DIR [PAD_MIB=1024] [RUNS=3]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$1" && pwd)"; pad="${2:-1024}"; runs="${3:-3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-embw-XXXXXX")"
trap 'rm -rf "$work"' EXIT
bash "$root/bench/synthetic/make.sh" "$build" "$pad" "$work/m" >&2
f="$work/m/embedded.mpk"
ways="memcpy mmap mmap:libc"
for cache in warm cold; do
  for _ in $(seq "$runs"); do
    for way in $ways; do
      how="${way%:libc}"; blocks=prefault; [ "$how" != "$way" ] && blocks=libc
      if [ "$cache" = warm ]; then cat "$f" > /dev/null; c=""; else c="--cold"; fi
      MPSPACK_EMBEDDED_WEIGHTS="$how" MPSPACK_LARGE_BLOCKS="$blocks" \
          "$build/bin/mpspack" run "$f" --bench --iterations 1 --warmup 0 --format json $c |
        python3 -c "import json,sys; j=json.load(sys.stdin); l=j['load_ms']; print('$cache', '$way', l['weights_ms'], l['create_ms'], l['first_run_ms'], l['load_to_first_result_ms'], j['peak_rss_bytes']>>20)"
    done
  done
done > "$work/runs.txt"
python3 - "$work/runs.txt" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    d[(p[0], p[1])].append((float(p[2]), float(p[3]), float(p[4]), float(p[5]), int(p[6])))
print("| cache | mechanism | weights ms | Create ms | first run ms | load to first result ms | ratio vs memcpy | peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|")
for cache in ("warm", "cold"):
    base = statistics.median(v[3] for v in d[(cache, "memcpy")])
    for how in ("memcpy", "mmap", "mmap:libc"):
        v = d[(cache, how)]
        m = lambda i: statistics.median(x[i] for x in v)
        print(f"| {cache} | {how.replace(':libc', ', libc malloc')} | {m(0):.1f} | {m(1):.0f} | {m(2):.2f} | {m(3):.0f} | ×{m(3)/base:.2f} | {max(x[4] for x in v)} |")
PY
