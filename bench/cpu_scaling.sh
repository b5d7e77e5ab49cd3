#!/usr/bin/env bash
# CPU load scaling, side by side in one run (device machine: torch installed, many cores). For each weight size
# (MiB) it makes a real external-blob CPU model with torch (bench/device/make_big_case.py: Linear layers, weights
# from a fixed seed, batch 1), packs it, checks mpspack's output against torch eager, then measures with the page
# cache warm, and again cold (the files dropped with POSIX_FADV_DONTNEED):
#   - mpspack: `run --bench`, load start to first result (open, library, Create, weights, first run), for each
#     way of bringing the mapped weights in (MPSPACK_CPU_PREFAULT=lazy: the first run faults them in;
#     threads: MADV_POPULATE_READ by several threads first);
#   - the floor: read() of the weights (dd bs=16M to /dev/null) + one steady-state run (mpspack's p50);
#   - AOTInductor's own path on the same library and blob (bench/device/torch_runner.py cpu: libtorch's shim,
#     Create + AOTInductorModelUpdateConstantsFromBlob on the mapped blob + first Run);
#   - steady-state latency, mpspack's host against torch's runner on the same library: LAT_ROUNDS (3) rounds,
#     alternating, of LAT_ITERS (50) timed runs each after 3 warm-up runs; the median of the rounds' p50s.
# Prints one table; ratios are this / mpspack.
#   bench/cpu_scaling.sh MPSPACK ["1 64 1024 4096 8192"] [ITERATIONS=5]
# WORK (default /tmp/cpu_scaling) holds the models (each size three times: package, container, unpacked);
# CLEAN=1 removes each size's folder and torch's compile cache once it is measured (a 64 GiB disk);
# ROWS names the file that collects one JSON line per size (default WORK/rows.jsonl).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mpspack="$(realpath "$1")"; sizes="${2:-1 64 1024 4096 8192}"; iters="${3:-5}"; work="${WORK:-/tmp/cpu_scaling}"
mkdir -p "$work"
drop() { python3 -c 'import os,sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$@"; }
read_ms() {  # wall ms of dd reading $1 in 16 MiB blocks
  local a b; a=$(date +%s%N); dd if="$1" of=/dev/null bs=16M status=none; b=$(date +%s%N); echo $(( (b - a) / 1000 ))e-3; }
bench() {  # mpspack run --bench JSON for container $1, prefault mode $2, $3 iterations after $4 warm-up runs, args...
  local mpk="$1" mode="$2" n="$3" w="$4"; shift 4
  MPSPACK_CPU_PREFAULT="$mode" "$mpspack" run "$mpk" --device cpu "${io[@]}" --bench --iterations "$n" \
    --warmup "$w" --format json "$@"; }
lat_iters="${LAT_ITERS:-50}"; lat_rounds="${LAT_ROUNDS:-3}"
p50() { python3 -c 'import json,sys; print(json.load(sys.stdin)["latency_ms"]["p50"])'; }

rows="${ROWS:-$work/rows.jsonl}"; : > "$rows"
for mib in $sizes; do
  d="$work/s$mib"
  if [ ! -f "$d/big.pt2" ]; then
    MIB="$mib" DEVICE=cpu BATCH=1 OUT="$d" python3 "$here/device/make_big_case.py"
  fi
  shape=$(cat "$d/shape.txt"); io=(--input "$d/input0.bin:f32:$shape")
  "$mpspack" -q build "$d/big.pt2" -o "$d/big.mpk"
  rm -rf "$d/unpacked" && "$mpspack" -q unpack "$d/big.mpk" -o "$d/unpacked"
  so=$(ls "$d"/unpacked/*.so | head -1); blob=$(ls "$d"/unpacked/*_weights.blob | head -1)
  "$mpspack" -q run "$d/big.mpk" --device cpu "${io[@]}" --expect "$d/expected0.bin:f32:$shape" --rtol 1e-3 --atol 1e-4
  cat "$d/big.mpk" "$blob" "$so" > /dev/null
  lazy=$(bench "$d/big.mpk" lazy "$iters" 1); threads=$(bench "$d/big.mpk" threads "$iters" 1)
  warm_read=$(read_ms "$blob")
  D=${shape#*x}
  torch=$(python3 "$here/device/torch_runner.py" "$so" "$blob" "$d/input0.bin" "$D" "$iters" cpu)
  mp_p50s=(); torch_p50s=()
  for _ in $(seq "$lat_rounds"); do
    mp_p50s+=("$(bench "$d/big.mpk" lazy "$lat_iters" 3 | p50)")
    torch_p50s+=("$(python3 "$here/device/torch_runner.py" "$so" "$blob" "$d/input0.bin" "$D" "$lat_iters" cpu | p50)")
  done
  drop "$d/big.mpk"; lazy_cold=$(bench "$d/big.mpk" lazy "$iters" 1 --cold)
  drop "$d/big.mpk"; threads_cold=$(bench "$d/big.mpk" threads "$iters" 1 --cold)
  drop "$blob"; cold_read=$(read_ms "$blob")
  drop "$blob" "$so"; torch_cold=$(python3 "$here/device/torch_runner.py" "$so" "$blob" "$d/input0.bin" "$D" "$iters" cpu)
  python3 - "$mib" "$(stat -c %s "$blob")" "$warm_read" "$cold_read" "${mp_p50s[*]}" "${torch_p50s[*]}" <<PY >> "$rows"
import json, sys
mib, size, wr, cr = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
mp, tp = [float(v) for v in sys.argv[5].split()], [float(v) for v in sys.argv[6].split()]
j = lambda s: json.loads(s)
print(json.dumps({"mib": int(mib), "bytes": size, "read_warm_ms": wr, "read_cold_ms": cr,
  "steady_p50_ms": {"mpspack": mp, "torch": tp, "iterations": $lat_iters},
  "lazy": j('''$lazy'''), "threads": j('''$threads'''), "lazy_cold": j('''$lazy_cold'''),
  "threads_cold": j('''$threads_cold'''), "torch": j('''$torch'''), "torch_cold": j('''$torch_cold''')}))
PY
  echo "size $mib MiB done"
  if [ "${CLEAN:-0}" = 1 ]; then rm -rf "$d" /tmp/torchinductor_"$(id -un)"; fi
done

python3 - "$rows" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
m = rows[0]["lazy"]["machine"]
print(f"machine: {m['cpu']}, {m['cores']} cores, {m['os']}; {rows[0]['torch']['runner']}")
print("ms from load start to first result; floor = read() of the weights + one steady-state run; ratio = column / mpspack")
print("p50: median of the rounds' p50 (each round: %d timed runs); in brackets every round's" % rows[0]["steady_p50_ms"]["iterations"])
print("| weights | cache | mpspack lazy | mpspack threads | first run lazy / threads | p50 | floor (read + p50) | vs floor | AOTInductor's path | AOTI / mpspack | torch p50 | p50 mpspack / torch |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    for cache, lk, tk, read, tr in (("warm", "lazy", "threads", r["read_warm_ms"], r["torch"]),
                                    ("cold", "lazy_cold", "threads_cold", r["read_cold_ms"], r["torch_cold"])):
        L, T = r[lk], r[tk]
        best = min(L["load_ms"]["load_to_first_result_ms"], T["load_ms"]["load_to_first_result_ms"])
        med = lambda v: sorted(v)[len(v) // 2]
        rounds = lambda v: "[" + " ".join(f"{x:.2f}" for x in v) + "]"
        mp, tp = r["steady_p50_ms"]["mpspack"], r["steady_p50_ms"]["torch"]
        p50 = med(mp)
        floor = read + p50
        print(f"| {r['bytes'] / 2**20:.0f} MiB | {cache} | {L['load_ms']['load_to_first_result_ms']:.1f} | "
              f"{T['load_ms']['load_to_first_result_ms']:.1f} | {L['load_ms']['first_run_ms']:.1f} / "
              f"{T['load_ms']['first_run_ms']:.1f} | {p50:.2f} {rounds(mp)} | {floor:.1f} | {best / floor:.2f} | "
              f"{tr['ready_to_first_result_ms']:.1f} | {tr['ready_to_first_result_ms'] / best:.1f}x | "
              + (f"{med(tp):.2f} {rounds(tp)} | {p50 / med(tp):.2f} |" if cache == "warm" else "| |"))
PY
