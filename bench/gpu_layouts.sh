#!/usr/bin/env bash
# The weights' upload to the GPU in each layout, side by side in one run on the device machine (an NVIDIA GPU,
# torch installed): a stack of Linear(D, D) + ReLU CUDA layers with MIB MiB of weights from a fixed seed
# (bench/device/make_big_case.py), compiled by torch twice, as an external blob and embedded, and packed three ways:
#   .pt2      the blob package as is (its wrapper source gives the constants table: mpspack uploads the segment
#             and hands the model tensors over it)
#   blob      the same model.so + weights blob, unpacked and packed again as a plain .so + blob (no table: the
#             model's own UpdateConstantsFromBlob copies, made by mpspack's pipeline instead)
#   embedded  the embedded package (Create's copies, made by mpspack's pipeline instead)
# Each runs `mpspack run --device cuda --expect` against torch eager, then `--bench` (its upload against a plain
# pinned copy of the same size measured in the same run; every weight byte checked against its hashes on the CPU
# beside the upload), the same with `--no-verify` (the weights' hashes not checked), then `--bench --copy-weights`
# with MPSPACK_LARGE_BLOCKS=libc, which leaves the copies to the library (AOTInductor's own path: one synchronous
# cudaMemcpy per constant from pageable memory).
#
#   bench/gpu_layouts.sh MPSPACK [MIB=1024]
# WORK (default /tmp/gpu_layouts) holds the models (about 5 x MIB MiB; each compile's inductor cache, one more copy of
# its weights, is removed once the package is written). LAYOUTS (default "pt2 blob embedded") picks the layouts, so
# that at 8 GiB one call can make and time one model at a time on a 64 GiB disk.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mpspack="$1"; mib="${2:-1024}"; work="${WORK:-/tmp/gpu_layouts}"
layouts=" ${LAYOUTS:-pt2 blob embedded} "
wants() { [[ "$layouts" == *" $1 "* ]]; }
mkdir -p "$work/blob" "$work/embedded"
# The models, two compiles at once, each with its own inductor cache (a shared one races on its temporary files).
make_case() {  # folder, then make_big_case.py's settings
  local dir="$1" rc=0; shift
  [ -f "$work/$dir/big.pt2" ] && return 0
  env "$@" TORCHINDUCTOR_CACHE_DIR="$work/cache_$dir" MIB="$mib" OUT="$work/$dir" \
    python3 "$here/device/make_big_case.py" || rc=$?
  rm -rf "$work/cache_$dir"; return $rc
}
blob_pid= embedded_pid=
if wants pt2 || wants blob; then make_case blob & blob_pid=$!; fi
if wants embedded; then make_case embedded EMBEDDED=1 & embedded_pid=$!; fi
[ -z "$blob_pid" ] || wait "$blob_pid"
[ -z "$embedded_pid" ] || wait "$embedded_pid" ||
  echo "gpu_layouts.sh: torch could not compile the embedded model of $mib MiB; that layout is left out" >&2
if wants pt2 || wants blob; then
  "$mpspack" -q build "$work/blob/big.pt2" -o "$work/pt2.mpk"
  if wants blob; then
    rm -rf "$work/unpacked" && "$mpspack" -q unpack "$work/pt2.mpk" -o "$work/unpacked"
    so=$(ls "$work"/unpacked/*.so | head -1); blob=$(ls "$work"/unpacked/*_weights.blob | head -1)
    "$mpspack" -q build "$so" --weights "$blob" -o "$work/blob.mpk"
    rm -rf "$work/unpacked"
  fi
  wants pt2 || rm -f "$work/pt2.mpk"
fi
wants embedded && [ -f "$work/embedded/big.pt2" ] && "$mpspack" -q build "$work/embedded/big.pt2" -o "$work/embedded.mpk"
python3 - "$mpspack" "$work" <<'PY'
import json, os, subprocess, sys
mpspack, work = sys.argv[1], sys.argv[2]
def run(args, env={}):
    r = subprocess.run([mpspack, "run"] + args, capture_output=True, text=True, env=dict(os.environ, **env))
    if r.returncode != 0:
        sys.exit(f"gpu_layouts.sh: mpspack run {' '.join(args)} failed:\n{r.stderr}")
    return json.loads(r.stdout)
rows = []
import os
for layout, case in (("pt2", "blob"), ("blob", "blob"), ("embedded", "embedded")):
    if not os.path.exists(f"{work}/{layout}.mpk"):
        continue
    shape = open(f"{work}/{case}/shape.txt").read().strip()
    io = ["--device", "cuda", "--input", f"{work}/{case}/input0.bin:f32:{shape}"]
    mpk = f"{work}/{layout}.mpk"
    check = run([mpk] + io + ["--expect", f"{work}/{case}/expected0.bin:f32:{shape}", "--rtol", "1e-3", "--atol", "1e-4",
                              "--json"])
    err = max(o.get("max_abs_error") or 0 for o in check["outputs"])
    bench = ["--bench", "--iterations", "5", "--warmup", "1", "--format", "json"]
    m = run([mpk] + io + bench)
    nv = run([mpk] + io + bench + ["--no-verify"])
    c = run([mpk] + io + bench + ["--copy-weights"], env={"MPSPACK_LARGE_BLOCKS": "libc"})
    u, d = m["device"].get("weights_upload", {}), m["device"]
    rows.append((layout, m["weights_mode"], u.get("bytes", 0) / 2**30, u.get("gbps", 0), d["h2d_pinned_gbps"],
                 u.get("of_pinned_copy", 0), m["load_ms"]["load_to_first_result_ms"],
                 nv["load_ms"]["load_to_first_result_ms"], m["load_ms"]["verify_ms"], c["weights_mode"],
                 c["load_ms"]["load_to_first_result_ms"], err))
    machine = f"{m['machine']['cpu']}, {m['machine']['cores']} cores; GPU {d['name']}"
print(f"machine: {machine}; warm page cache")
print()
print("| layout | weights mode | GiB | upload GB/s | pinned copy GB/s | upload / pinned | load to first result ms | "
      "--no-verify ms (check ms) | the library's own copies: mode, ms | ratio | max abs error vs torch |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for (layout, mode, gib, gbps, pinned, share, ms, nvms, vms, cmode, cms, err) in rows:
    print(f"| {layout} | {mode} | {gib:.2f} | {gbps:.1f} | {pinned:.1f} | {100 * share:.0f}% | {ms:.0f} | "
          f"{nvms:.0f} ({vms:.0f}) | {cmode}, {cms:.0f} | {cms / ms:.1f}x | {err:.1e} |")
PY
