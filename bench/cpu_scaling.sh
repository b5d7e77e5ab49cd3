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
#     Create + AOTInductorModelUpdateConstantsFromBlob on the mapped blob + first Run).
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
bench() {  # mpspack run --bench JSON for container $1, prefault mode $2, extra args...
  local mpk="$1" mode="$2"; shift 2
  MPSPACK_CPU_PREFAULT="$mode" "$mpspack" run "$mpk" --device cpu "${io[@]}" --bench --iterations "$iters" \
    --warmup 1 --format json "$@"; }

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
  lazy=$(bench "$d/big.mpk" lazy); threads=$(bench "$d/big.mpk" threads)
  warm_read=$(read_ms "$blob")
  D=${shape#*x}
  torch=$(python3 "$here/device/torch_runner.py" "$so" "$blob" "$d/input0.bin" "$D" "$iters" cpu)
  drop "$d/big.mpk"; lazy_cold=$(bench "$d/big.mpk" lazy --cold)
  drop "$d/big.mpk"; threads_cold=$(bench "$d/big.mpk" threads --cold)
  drop "$blob"; cold_read=$(read_ms "$blob")
  drop "$blob" "$so"; torch_cold=$(python3 "$here/device/torch_runner.py" "$so" "$blob" "$d/input0.bin" "$D" "$iters" cpu)
  python3 - "$mib" "$(stat -c %s "$blob")" "$warm_read" "$cold_read" <<PY >> "$rows"
import json, sys
mib, size, wr, cr = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
j = lambda s: json.loads(s)
print(json.dumps({"mib": int(mib), "bytes": size, "read_warm_ms": wr, "read_cold_ms": cr,
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
print("| weights | cache | mpspack lazy | mpspack threads | first run lazy / threads | p50 | floor (read + p50) | vs floor | AOTInductor's path | AOTI / mpspack | torch p50 | p50 mpspack / torch |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    for cache, lk, tk, read, tr in (("warm", "lazy", "threads", r["read_warm_ms"], r["torch"]),
                                    ("cold", "lazy_cold", "threads_cold", r["read_cold_ms"], r["torch_cold"])):
        L, T = r[lk], r[tk]
        best = min(L["load_ms"]["load_to_first_result_ms"], T["load_ms"]["load_to_first_result_ms"])
        p50 = L["latency_ms"]["p50"]
        floor = read + p50
        print(f"| {r['bytes'] / 2**20:.0f} MiB | {cache} | {L['load_ms']['load_to_first_result_ms']:.1f} | "
              f"{T['load_ms']['load_to_first_result_ms']:.1f} | {L['load_ms']['first_run_ms']:.1f} / "
              f"{T['load_ms']['first_run_ms']:.1f} | {p50:.2f} | {floor:.1f} | {best / floor:.2f} | "
              f"{tr['ready_to_first_result_ms']:.1f} | {tr['ready_to_first_result_ms'] / best:.1f}x | "
              + (f"{tr['latency_ms']['p50']:.2f} | {p50 / tr['latency_ms']['p50']:.2f} |" if cache == "warm" else "| |"))
PY
