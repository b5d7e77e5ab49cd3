#!/usr/bin/env bash
# GPU benchmark, side by side in one run on the device machine (an NVIDIA GPU, torch installed):
#   1. makes a large external-blob CUDA model with torch (bench/device/make_big_case.py: GIB GiB of Linear
#      weights from a fixed seed) as a .pt2 package, packs it (`mpspack build`) and checks mpspack's output
#      against torch eager's;
#   2. `mpspack run --device cuda --bench`: load phases, the weight upload against a plain pinned and pageable
#      host-to-device copy measured in the same run, steady-state latency;
#   3. torch's own runtime on the same library and blob (bench/device/torch_runner.py): Create +
#      UpdateConstantsFromBlob + first Run, and steady-state Run latency;
#   4. prints the ratios.
#
#   bench/gpu_compare.sh MPSPACK [GIB] [ITERATIONS]
# WORK (default /tmp/gpu_compare) holds the model (GIB GiB twice: package and container).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mpspack="$1"; gib="${2:-4}"; iters="${3:-50}"; work="${WORK:-/tmp/gpu_compare}"
D="${DIM:-16384}"
mkdir -p "$work"
if [ ! -f "$work/big.pt2" ]; then
  GIB="$gib" OUT="$work" DIM="$D" python3 "$here/device/make_big_case.py"
fi
"$mpspack" -q build "$work/big.pt2" -o "$work/big.mpk"
rm -rf "$work/unpacked" && "$mpspack" -q unpack "$work/big.mpk" -o "$work/unpacked"
so=$(ls "$work"/unpacked/*.so | head -1); blob=$(ls "$work"/unpacked/*_weights.blob | head -1)
io=(--input "$work/input0.bin:f32:8x$D")

echo "== mpspack run --device cuda (check against torch eager)"
"$mpspack" run "$work/big.mpk" --device cuda "${io[@]}" --expect "$work/expected0.bin:f32:8x$D" --rtol 1e-3 --atol 1e-4
echo "== mpspack run --device cuda --bench"
"$mpspack" run "$work/big.mpk" --device cuda "${io[@]}" --bench --iterations "$iters" --format json > "$work/mpspack.json"
echo "== torch's runtime on the same library"
python3 "$here/device/torch_runner.py" "$so" "$blob" "$work/input0.bin" "$D" "$iters" > "$work/torch.json"
python3 - "$work/mpspack.json" "$work/torch.json" <<'PY'
import json, sys
m, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
d, l = m["device"], m["load_ms"]
u = d.get("weights_upload", {})
ready = l["load_total_ms"] - l["checks_ms"] + l["first_run_ms"]  # without CUDA context creation (in checks)
print(f"machine: {m['machine']['cpu']}, {m['machine']['cores']} cores; GPU {d['name']}")
print(f"weights: {u.get('bytes', 0) / 2**30:.2f} GiB, mode: {m['weights_mode']}")
print(f"upload: {u.get('gbps', 0):.1f} GB/s = {100 * u.get('of_pinned_copy', 0):.0f}% of a plain pinned copy "
      f"({d['h2d_pinned_gbps']:.1f} GB/s; pageable {d['h2d_pageable_gbps']:.1f} GB/s)")
print(f"model ready to first result: mpspack {ready:.0f} ms (+{l['checks_ms']:.0f} ms CUDA context), "
      f"torch {t['ready_to_first_result_ms']:.0f} ms (context made before) -> torch / mpspack = "
      f"{t['ready_to_first_result_ms'] / ready:.2f}x")
print(f"  torch: create {t['create_ms']:.0f} ms, UpdateConstantsFromBlob {t['update_constants_from_blob_ms']:.0f} ms, "
      f"first run {t['first_run_ms']:.0f} ms")
print(f"  mpspack: library {l['library_ms']:.0f} ms, create {l['create_ms']:.0f} ms, constants (upload) "
      f"{l['constants_ms']:.0f} ms, first run {l['first_run_ms']:.0f} ms")
mp, tp = m["latency_ms"]["p50"], t["latency_ms"]["p50"]
print(f"steady-state latency p50: mpspack {mp:.3f} ms, torch {tp:.3f} ms -> mpspack / torch = {mp / tp:.3f} "
      f"(min {m['latency_ms']['min']:.3f} vs {t['latency_ms']['min']:.3f})")
PY
