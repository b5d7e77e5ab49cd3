#!/usr/bin/env bash
# Load to first result of a real AOTInductor library with its weights embedded (device machine: torch installed):
# one Linear(D, D) of MIB MiB made by bench/device/make_big_case.py (EMBEDDED=1), side by side, alternating in
# each of ROUNDS rounds, page cache warm:
#   container         `mpspack run big.mpk --bench --iterations 1 --warmup 0` (Create's block faulted in up front)
#   container, libc   the same with MPSPACK_LARGE_BLOCKS=libc (Create's block from the C library's malloc)
#   dlopen            the original .so (mpspack unpack of the container), opened where it lies (bench/direct_load)
# Outputs are checked against torch eager's (the container runs with --expect).
#   bash bench/embedded_real.sh BUILD_DIR [MIB=1024] [ROUNDS=3]
# BUILD_DIR holds bin/mpspack and bin/direct_load (-DMPSPACK_BUILD_BENCH=ON); WORK (default /tmp/embedded_real)
# the model.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "$1" && pwd)"; mib="${2:-1024}"; rounds="${3:-3}"; work="${WORK:-/tmp/embedded_real}"
EMBEDDED=1 MIB="$mib" DEVICE=cpu BATCH=1 OUT="$work" python3 "$here/device/make_big_case.py" 2>&1 | grep big.pt2
shape=$(cat "$work/shape.txt")
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # direct_load finds libsleef there
"$build/bin/mpspack" -q build "$work/big.pt2" -o "$work/big.mpk"
# The original .so: unpack writes it byte for byte as the .pt2 holds it (docs/CLI.md, unpack).
rm -rf "$work/unpacked" && "$build/bin/mpspack" -q unpack "$work/big.mpk" -o "$work/unpacked"
so=$(ls "$work"/unpacked/*.so | head -1)
cat "$work/big.mpk" "$so" > /dev/null
echo "| round | container ms | container, libc malloc ms | dlopen ms | dlopen / container |"
echo "|---|---|---|---|---|"
for r in $(seq "$rounds"); do
  row="| $r"
  for blocks in prefault libc; do
    row+=" | $(MPSPACK_LARGE_BLOCKS="$blocks" "$build/bin/mpspack" run "$work/big.mpk" --bench --iterations 1 \
      --warmup 0 --format json --input "$work/input0.bin:f32:$shape" --expect "$work/expected0.bin:f32:$shape" |
      python3 -c 'import json,sys; j=json.load(sys.stdin); l=j["load_ms"]; assert j["ok"]
print("%.1f (Create %.1f; from exec %.0f)" % (l["load_to_first_result_ms"], l["create_ms"], j["time_to_first_result_ms"]))')"
    [ "$blocks" = prefault ] && mine=${row##*| } && mine=${mine%% *}
  done
  d=$("$build/bin/direct_load" "$so" "$work/input0.bin" f32 "$shape" |
      python3 -c 'import json,sys; j=json.load(sys.stdin)
print("%.1f (Create %.1f; from exec %.0f)" % (j["load_to_first_result_ms"], j["create_ms"], j["time_to_first_result_ms"]))')
  echo "$row | $d | x$(python3 -c "print('%.2f' % (${d%% *} / $mine))") |"
done
