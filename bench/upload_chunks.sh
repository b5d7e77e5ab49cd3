#!/usr/bin/env bash
# The GPU weight upload's chunk size, side by side on the device machine: each container bench/gpu_layouts.sh made
# in WORK (pt2.mpk, blob.mpk, embedded.mpk) run with `mpspack run --device cuda --bench` at each chunk size
# (MPSPACK_UPLOAD_CHUNK_MIB), ROUNDS rounds with the sizes' order alternating; per layout and size the median share
# of a plain pinned copy measured in the same run, and of the upload's milliseconds.
#
#   bash bench/upload_chunks.sh MPSPACK [WORK=/tmp/gpu_layouts] [ROUNDS=3] [CHUNKS_MIB="2 4 8"]
set -euo pipefail
mpspack="$1"; work="${2:-/tmp/gpu_layouts}"; rounds="${3:-3}"; chunks="${4:-2 4 8}"
python3 - "$mpspack" "$work" "$rounds" $chunks <<'PY'
import json, os, statistics, subprocess, sys
mpspack, work, rounds, chunks = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
shape = open(f"{work}/blob/shape.txt").read().strip()
layouts = [l for l in ("pt2", "blob", "embedded") if os.path.exists(f"{work}/{l}.mpk")]
share, ms = {}, {}
for r in range(rounds):
    for chunk in (chunks if r % 2 == 0 else chunks[::-1]):
        for layout in layouts:
            case = "embedded" if layout == "embedded" else "blob"
            env = dict(os.environ, MPSPACK_UPLOAD_CHUNK_MIB=chunk)
            p = subprocess.run([mpspack, "run", f"{work}/{layout}.mpk", "--device", "cuda", "--input",
                                f"{work}/{case}/input0.bin:f32:{shape}", "--bench", "--iterations", "3", "--warmup",
                                "1", "--format", "json"], capture_output=True, text=True, env=env)
            if p.returncode != 0:
                sys.exit(f"upload_chunks.sh: {layout} at {chunk} MiB failed:\n{p.stderr}")
            u = json.loads(p.stdout)["device"]["weights_upload"]
            share.setdefault((layout, chunk), []).append(u["of_pinned_copy"])
            ms.setdefault((layout, chunk), []).append(u["ms"])
print(f"{rounds} rounds; upload as a share of a pinned copy measured in the same run (median; each round), ms")
print()
print("| layout | chunk MiB | upload / pinned | rounds | upload ms |\n|---|---|---|---|---|")
for layout in layouts:
    for chunk in chunks:
        s, m = share[(layout, chunk)], ms[(layout, chunk)]
        print(f"| {layout} | {chunk} | {100 * statistics.median(s):.0f}% | {', '.join(f'{100 * x:.0f}' for x in s)} | "
              f"{statistics.median(m):.1f} |")
PY
