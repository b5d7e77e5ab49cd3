#!/usr/bin/env bash
# Runs every case of one device kind (cpu or cuda) of one or more make_aoti_cases.py case folders (each with
# a manifest.json) through `mpspack build` -> `mpspack verify` -> `mpspack run --device ... --input ...
# --expect ...` and prints one line per case. Exit 0 only if every case matched. Meant for the device
# machine, where the torch-built libraries (glibc >= 2.38) load and the GPU is:
#
#   tests/device/run_cases.sh cpu|cuda MPSPACK CASE_ROOT...
#
# CUDA outputs are compared at float32 rtol 1e-3, atol 1e-4 (TF32 and other kernel orders may differ from
# torch's); CPU ones at the run command's defaults. Each container is then damaged one segment at a time (one byte
# flipped): `run` must exit 2 naming the segment, before any output.
set -uo pipefail
device="$1"; mpspack="$2"; shift 2
tol=(); [ "$device" = cuda ] && tol=(--rtol 1e-3 --atol 1e-4)
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
pass=0; fail=0
for root in "$@"; do
  while IFS=$'\t' read -r dir inputs expects flavor; do
    case_dir="$root/$dir"
    weights=(); [ -f "$case_dir/weights.blob" ] && weights=(--weights "$case_dir/weights.blob")
    out="$work/$dir.mpk"
    if ! "$mpspack" -q build "$case_dir/model.so" "${weights[@]}" -o "$out" 2> "$work/err"; then
      echo "FAIL $dir build: $(cat "$work/err")"; fail=$((fail + 1)); continue
    fi
    "$mpspack" -q verify "$out" || { echo "FAIL $dir verify"; fail=$((fail + 1)); continue; }
    args=()
    for s in $inputs; do args+=(--input "$case_dir/$s"); done
    for s in $expects; do args+=(--expect "$case_dir/$s"); done
    if result=$("$mpspack" run "$out" --device "$device" "${args[@]}" "${tol[@]}" --json 2> "$work/err"); then
      summary=$(python3 -c "import json,sys; r=json.load(sys.stdin); print(' '.join('out%d max_abs %.2e' % (i, o.get('max_abs_error') or 0) for i, o in enumerate(r.get('outputs', []))))" <<< "$result" 2>/dev/null)
      echo "ok   $dir $summary"
      pass=$((pass + 1))
    else
      echo "FAIL $dir run: $(tail -n 3 "$work/err" | tr '\n' ' ')"; fail=$((fail + 1)); continue
    fi
    # One flipped byte in each segment (library, weights, cubins): exit 2, the segment named, no output.
    if damage=$(python3 - "$mpspack" "$out" "$work/bad.mpk" "$device" "${args[@]}" 2>&1 <<'PY'
import json, shutil, subprocess, sys
mpspack, good, bad, device, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
segs = json.loads(subprocess.run([mpspack, "inspect", good, "--json"], capture_output=True, text=True,
                                 check=True).stdout)["segments"]
for i, s in enumerate(segs):
    if s["size"] == 0: continue
    shutil.copyfile(good, bad)
    with open(bad, "r+b") as f:
        f.seek(s["offset"] + s["size"] // 2); b = f.read(1); f.seek(-1, 1); f.write(bytes([b[0] ^ 0xFF]))
    r = subprocess.run([mpspack, "run", bad, "--device", device] + args, capture_output=True, text=True)
    last = (r.stderr.strip().splitlines() or [""])[-1]
    if r.returncode != 2 or f"segment {i} (" not in last or "is damaged" not in last or r.stdout:
        sys.exit(f"segment {i} ({s['kind']}): exit {r.returncode}, stderr: {last}")
print(f"{len(segs)} segments")
PY
); then
      echo "ok   $dir a flipped byte in each of $damage stops the run"
      pass=$((pass + 1))
    else
      echo "FAIL $dir damaged: $damage"; fail=$((fail + 1))
    fi
    # Embedded weights, mmap-self and a plain blob again with the no-copy path forced on these small weights (it
    # starts at 1 MiB): mapped from the container with no copy by Create (CPU), or the library's copies made by
    # mpspack's upload pipeline (GPU).
    case "$flavor" in default|embedded|blob|mmap) ;; *) continue ;; esac
    mode=""; want="mapped from the container (copy-on-write, no copy)"
    [ "$device" = cuda ] && want="uploaded to the GPU by mpspack"
    if result=$(MPSPACK_MAP_WEIGHTS_MIN_BYTES=1 "$mpspack" run "$out" --device "$device" "${args[@]}" "${tol[@]}" \
                --json 2> "$work/err") && mode=$(python3 -c "import json,sys; print(json.load(sys.stdin)['weights'])" <<< "$result") \
       && [[ "$mode" == *"$want"* ]]; then
      echo "ok   $dir without the library's copy ($mode)"
      pass=$((pass + 1))
    else
      echo "FAIL $dir without the library's copy: ${mode:-} $(tail -n 3 "$work/err" | tr '\n' ' ')"; fail=$((fail + 1))
    fi
  done < <(python3 - "$root/manifest.json" "$device" <<'PY'
import json, sys
names = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16", "torch.float64": "f64",
         "torch.int64": "i64", "torch.int32": "i32", "torch.int16": "i16", "torch.int8": "i8",
         "torch.uint8": "u8", "torch.bool": "bool"}
spec = lambda prefix, i, t: f"{prefix}{i}.bin:{names[t['dtype']]}:{'x'.join(map(str, t['shape'])) or '1'}"
for c in json.load(open(sys.argv[1]))["cases"]:
    if c.get("device", c["dir"].split("_")[0]) != sys.argv[2]: continue
    ins = " ".join(spec("input", i, t) for i, t in enumerate(c["inputs"]))
    outs = " ".join(spec("expected", i, t) for i, t in enumerate(c["outputs"]))
    print(f"{c['dir']}\t{ins}\t{outs}\t{c.get('flavor', c['dir'].split('_')[-1])}")
PY
)
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
