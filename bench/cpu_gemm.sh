#!/usr/bin/env bash
# CPU products beyond batch 1, side by side in one run (device machine: torch installed, many cores): GEMMs
# (batch-32 Linear layers made with torch, bench/device/make_big_case.py) and convolutions (the tiny CNN
# fixture), steady-state p50 of one or more mpspack binaries, alternating, and of torch's runner on the same
# library (bench/device/torch_runner.py cpu). This is how the shim's OpenBLAS set-up was chosen (shim/blas.hpp:
# OpenBLAS single-threaded, large GEMMs split over the model's OpenMP team, against OpenBLAS's own threads).
#   bench/cpu_gemm.sh "MPSPACK [MPSPACK...]" ["64 256"] [ROUNDS=3]
# An entry VAR=VALUE[,VAR=VALUE...]:MPSPACK runs that binary with those variables set, so one binary can be set
# against itself (OPENBLAS_CORETYPE=Prescott:build/bin/mpspack: OpenBLAS's oldest kernels, as before shim/blas.hpp
# named them). BATCH (default 32) is the Linear models' batch; BATCH=1 measures the GEMV path instead.
# Sizes are MiB of weights for one Linear(D, D) (64: D=4096, 256: D=8192; "" for the fixtures only). FIXTURES (default
# ../shared/fixtures/aoti-2.11/rebuilt-bookworm beside the repository) holds cpu_cnn_blob and cpu_mlp_blob;
# WORK (default /tmp/cpu_gemm) the models. Each binary's output is checked against torch eager first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
read -r -a bins <<< "$1"; sizes="${2-64 256}"; rounds="${3:-3}"; batch="${BATCH:-32}"
work="${WORK:-/tmp/cpu_gemm}"; fixtures="${FIXTURES:-$here/../../shared/fixtures/aoti-2.11/rebuilt-bookworm}"
mkdir -p "$work"
p50() {  # the p50 (and first run) of a --bench or torch_runner JSON report on stdin
  python3 -c 'import json,sys; d=json.load(sys.stdin); f=d.get("load_ms",{}).get("first_run_ms")
print("p50 %8.4f ms" % d["latency_ms"]["p50"] + ("   first run %7.2f ms" % f if f is not None else ""))'; }
mpk() {  # mpk ENTRY ARGS...: the entry's binary, with the entry's variables when it has some
  local spec="$1" vars; shift
  if [[ "$spec" == *=*:* ]]; then vars="${spec%%:*}"; env ${vars//,/ } "${spec#*:}" "$@"; else "$spec" "$@"; fi
}
bench() { mpk "$1" run "$2" --input "$3" --bench --iterations "$4" --warmup "$5" --format json | p50; }

for mib in $sizes; do
  d="$work/b${batch}_$mib"
  [ -f "$d/big.pt2" ] || MIB="$mib" DEVICE=cpu BATCH="$batch" OUT="$d" python3 "$here/device/make_big_case.py"
  shape=$(cat "$d/shape.txt"); D=${shape#*x}; input="$d/input0.bin:f32:$shape"
  mpk "${bins[0]}" -q build "$d/big.pt2" -o "$d/big.mpk"
  rm -rf "$d/unpacked" && mpk "${bins[0]}" -q unpack "$d/big.mpk" -o "$d/unpacked"
  so=$(ls "$d"/unpacked/*.so | head -1); blob=$(ls "$d"/unpacked/*_weights.blob | head -1)
  for b in "${bins[@]}"; do
    mpk "$b" -q run "$d/big.mpk" --input "$input" --expect "$d/expected0.bin:f32:$shape" --rtol 1e-3 --atol 1e-4
  done
  for r in $(seq "$rounds"); do
    for b in "${bins[@]}"; do echo "Linear($D,$D) batch $batch | round $r | $b | $(bench "$b" "$d/big.mpk" "$input" 50 3)"; done
    echo "Linear($D,$D) batch $batch | round $r | torch's runner | $(python3 "$here/device/torch_runner.py" "$so" "$blob" "$d/input0.bin" "$D" 50 cpu | p50)"
  done
done

for c in cnn mlp; do
  f="$fixtures/cpu_${c}_blob"
  [ -d "$f" ] || { echo "cpu_gemm.sh: no fixture $f (set FIXTURES)" >&2; exit 2; }
  mpk "${bins[0]}" -q build "$f/model.so" --weights "$f/weights.blob" -o "$work/$c.mpk"
  shape=$([ "$c" = cnn ] && echo 4x3x32x32 || echo 8x64)
  for r in $(seq "$rounds"); do
    for b in "${bins[@]}"; do echo "$c fixture | round $r | $b | $(bench "$b" "$work/$c.mpk" "$f/input0.bin:f32:$shape" 100 10)"; done
  done
done
