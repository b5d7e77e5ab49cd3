#!/usr/bin/env bash
# The GPU weight upload under variants of its settings, side by side on the device machine: each container
# bench/gpu_layouts.sh made in WORK (pt2.mpk, blob.mpk, embedded.mpk) run with `mpspack run --device cuda --bench`
# under each variant (a space-separated list of MPSPACK_UPLOAD_* assignments, "-" for the defaults), ROUNDS rounds
# with the variants' order alternating. Per layout and variant: the median share of a plain pinned copy measured in
# the same run, each round's share, and from the upload's info line (medians) its milliseconds, when the last
# reader started and when the first copy was queued (from the upload's start), the `.pt2`'s device block's
# cudaMalloc, then the first run and the load to the first result (medians).
#
#   bash bench/upload_variants.sh MPSPACK [WORK=/tmp/gpu_layouts] [ROUNDS=3] [VARIANT...]
#   e.g. bash bench/upload_variants.sh .device/bin/mpspack /tmp/gl64 7 - MPSPACK_OPEN_LIBRARIES_EARLY=0 MPSPACK_UPLOAD_CHUNK_MIB=4
set -euo pipefail
mpspack="$1"; work="${2:-/tmp/gpu_layouts}"; rounds="${3:-3}"
if [ $# -gt 3 ]; then shift 3; else set -- -; fi
python3 - "$mpspack" "$work" "$rounds" "$@" <<'PY'
import json, os, re, statistics, subprocess, sys
mpspack, work, rounds, variants = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
shape = open(f"{work}/blob/shape.txt").read().strip()
layouts = [l for l in ("pt2", "blob", "embedded") if os.path.exists(f"{work}/{l}.mpk")]
figures = {}
def number(pattern, text):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else float("nan")
for r in range(rounds):
    for variant in (variants if r % 2 == 0 else variants[::-1]):
        for layout in layouts:
            case = "embedded" if layout == "embedded" else "blob"
            env = dict(os.environ)
            if variant != "-":
                env.update(kv.split("=", 1) for kv in variant.split())
            p = subprocess.run([mpspack, "--log-level", "info", "run", f"{work}/{layout}.mpk", "--device", "cuda",
                                "--input", f"{work}/{case}/input0.bin:f32:{shape}", "--bench", "--iterations", "3",
                                "--warmup", "1", "--format", "json"], capture_output=True, text=True, env=env)
            if p.returncode != 0:
                sys.exit(f"upload_variants.sh: {layout} with {variant} failed:\n{p.stderr}")
            j = json.loads(p.stdout)
            u = j["device"]["weights_upload"]
            f = figures.setdefault((layout, variant), {k: [] for k in ("share", "ms", "last", "first", "malloc",
                                                                       "first_run", "load")})
            f["first_run"].append(j["load_ms"]["first_run_ms"])
            f["load"].append(j["load_ms"]["load_to_first_result_ms"])
            f["share"].append(u["of_pinned_copy"])
            f["ms"].append(u["ms"])
            f["last"].append(number(r"last reader started at ([0-9.]+) ms", p.stderr))
            f["first"].append(number(r"first copy queued at ([0-9.]+) ms", p.stderr))
            f["malloc"].append(number(r"device block: \d+ bytes allocated in ([0-9.]+) ms", p.stderr))
med = lambda xs: statistics.median(xs)
print(f"{rounds} rounds; upload as a share of a pinned copy measured in the same run (median; each round); medians of "
      "the upload's ms, its last reader's start, its first copy, the .pt2's device block's cudaMalloc, the first run, "
      "the load to the first result")
print()
print("| layout | variant | upload / pinned | rounds | upload ms | last reader started ms | first copy ms | "
      "cudaMalloc ms | first run ms | load to first result ms |\n|---|---|---|---|---|---|---|---|---|---|")
for layout in layouts:
    for variant in variants:
        f = figures[(layout, variant)]
        print(f"| {layout} | {variant if variant != '-' else 'defaults'} | {100 * med(f['share']):.0f}% | "
              f"{', '.join(f'{100 * x:.0f}' for x in f['share'])} | {med(f['ms']):.2f} | {med(f['last']):.2f} | "
              f"{med(f['first']):.2f} | {med(f['malloc']):.2f} | {med(f['first_run']):.1f} | {med(f['load']):.1f} |")
PY
