#!/usr/bin/env bash
# The CPU fixtures with the model library's OpenMP teams followed by the shim (the default) against left alone
# (MPSPACK_MODEL_TEAMS=0), side by side in one run, alternating, outputs checked against torch eager's. The fixtures
# were compiled on a 16-thread machine: their kernels ask for teams of 16 (`num_threads(16)`). Left alone, on a
# machine with fewer cores, the shim's and oneDNN's teams of one per core made libgomp end and restart threads
# around every call; followed, they run on the calling thread and mpspack's own pool there (shim/parallel.hpp,
# model_parallel). A third setting, "capped", caps the model's own teams at the cores (OMP_THREAD_LIMIT), which
# mpspack does not do: it is faster, but wrong for kernels that split their work by the compiled thread count
# (docs/BACKENDS.md, "The model's team size"); these fixtures have none, and their outputs are checked. Per fixture
# and setting: p50 of 100 runs after 10 warm-ups and the first run, each round; then the threads started during
# 110 runs (strace's count of clone calls, one process each).
#   bash bench/openmp_teams.sh [MPSPACK=build/bin/mpspack] [ROUNDS=3]
# FIXTURES (default ../shared/fixtures/aoti-2.11/rebuilt-bookworm beside the repository) holds cpu_*_blob.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mpspack="${1:-$here/../build/bin/mpspack}"; rounds="${2:-3}"
fixtures="${FIXTURES:-$here/../../shared/fixtures/aoti-2.11/rebuilt-bookworm}"
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-openmp-teams-XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
echo "| fixture | round | model's teams | p50 ms | first run ms |"
echo "|---|---|---|---|---|"
declare -A io=([cnn]="f32:4x3x32x32 f32:4x10" [mlp]="f32:8x64 f32:8x10" [block]="i64:2x16 f32:2x16x100")
for c in cnn block mlp; do
  f="$fixtures/cpu_${c}_blob"
  [ -d "$f" ] || { echo "openmp_teams.sh: no fixture $f (set FIXTURES)" >&2; exit 2; }
  "$mpspack" -q build "$f/model.so" --weights "$f/weights.blob" -o "$work/$c.mpk"
  read -r in out <<< "${io[$c]}"
  args=(run "$work/$c.mpk" --input "$f/input0.bin:$in" --expect "$f/expected0.bin:$out")
  for r in $(seq "$rounds"); do
    for teams in followed "left alone" capped; do
      v=1 cap=(); [ "$teams" = "left alone" ] && v=0
      [ "$teams" = capped ] && cap=(OMP_THREAD_LIMIT="$(nproc)")
      env "${cap[@]}" MPSPACK_MODEL_TEAMS=$v "$mpspack" "${args[@]}" --bench --iterations 100 --warmup 10 --format json |
        /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["ok"], "outputs do not match"
print("| %s | %s | %s | %.3f | %.1f |" % (sys.argv[1], sys.argv[2], sys.argv[3], d["latency_ms"]["p50"], d["load_ms"]["first_run_ms"]))' \
        "$c" "$r" "$teams"
    done
  done
done
if command -v strace > /dev/null; then
  echo
  echo "| fixture | model's teams | threads started in 110 runs |"
  echo "|---|---|---|"
  for c in cnn block mlp; do
    read -r in out <<< "${io[$c]}"
    for v in 1 0; do
      MPSPACK_MODEL_TEAMS=$v strace -f -qq -e trace=clone,clone3 -o "$work/strace" "$mpspack" run "$work/$c.mpk" \
        --input "$fixtures/cpu_${c}_blob/input0.bin:$in" --bench --iterations 100 --warmup 10 --format json > /dev/null
      echo "| $c | $([ $v = 1 ] && echo followed || echo "left alone") | $(grep -c clone "$work/strace") |"
    done
  done
else
  echo "openmp_teams.sh: strace not installed: the threads started are not counted" >&2
fi
