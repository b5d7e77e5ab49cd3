#!/usr/bin/env bash
# Load to first result, side by side in one run, same model, same disk:
#   container   `mpspack run FILE --bench --iterations 1 --warmup 0` (embedded, or external blob)
#   dlopen      the original .so opened where it lies (bench/direct_load: dlopen, Create,
#               [map blob + AOTInductorModelUpdateConstantsFromBlob], Run), on mpspack's shim
#   tempfile    ExecuTorch's way: the whole .so read, written to a temp file, dlopen'ed (direct_load --tempfile)
#   read        `dd bs=16M` of the same bytes (.so + blob) to /dev/null: the disk's (or page cache's) limit
# Cases: the rebuilt-bookworm fixtures (tiny, real AOTInductor output) and SYNTHETIC embedded
# models of PAD MiB extra constants (bench/synthetic/make.sh), labelled so. Warm: every file read
# once before. Cold: `dd iflag=nocache count=0` (posix_fadvise DONTNEED, clean pages only) on every
# file of the case before each run. Each figure is the median of RUNS rounds; in each round every path runs once,
# in an order that rotates from round to round, so that a noisy stretch of the machine falls on all of them. Ratios
# are to the container path of the same case and cache state (>1: slower than the container).
# A second table gives the load alone (the first run left out), where the first run's own noise would hide it:
# container `load_total_ms` (open, checks, library, weights, Create); dlopen and temp file: their steps to Create
# (and the blob's copy).
# OTHER_MPSPACK=PATH adds a column for another mpspack binary (say, one built from an earlier commit) run the same
# way in the same rounds.
#
#   bash bench/load_compare.sh BUILD_DIR [SIZES_MIB="1 64 1024"] [RUNS=3]
# BUILD_DIR must be configured with -DMPSPACK_BUILD_BENCH=ON and have built mpspack and direct_load.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # direct_load finds libsleef there when the folder is moved
sizes="${2:-1 64 1024}"
runs="${3:-3}"
fixtures="$root/../shared/fixtures/aoti-2.11/rebuilt-bookworm"
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-load-XXXXXX")"
trap 'rm -rf "$work"' EXIT
for b in mpspack direct_load; do
  [ -x "$build/bin/$b" ] || { echo "load_compare.sh: $build/bin/$b missing (configure with -DMPSPACK_BUILD_BENCH=ON, build mpspack direct_load)" >&2; exit 2; }
done
for s in $sizes; do
  echo "building synthetic model, $s MiB extra constant..." >&2
  bash "$root/bench/synthetic/make.sh" "$build" "$s" "$work/synthetic_$s" >&2
done
python3 - "$build" "$fixtures" "$work" "$runs" $sizes <<'PY'
import json, os, statistics, subprocess, sys, time
build, fixtures, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sizes = sys.argv[5:]
mpspack, direct = f"{build}/bin/mpspack", f"{build}/bin/direct_load"
other = os.environ.get("OTHER_MPSPACK")
short = {"torch.float32": "f32", "torch.int64": "i64"}

def drop(files):
    for f in files:
        subprocess.run(["dd", f"if={f}", "iflag=nocache", "count=0", "status=none"], check=True)
    subprocess.run(["sync"])

def warm(files):
    for f in files:
        subprocess.run(["cat", f], stdout=subprocess.DEVNULL, check=True)

def js(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"load_compare.sh: {' '.join(cmd)} failed:\n{r.stderr}")
    return json.loads(r.stdout)

cases = []  # (label, kind, files for the container path, so, blob, input, dtype, shape)
if os.path.exists(f"{fixtures}/manifest.json"):
    for c in json.load(open(f"{fixtures}/manifest.json"))["cases"]:
        d = f"{fixtures}/{c['dir']}"
        i = c["inputs"][0]
        blob = f"{d}/weights.blob" if os.path.exists(f"{d}/weights.blob") else None
        mpk = f"{work}/{c['dir']}.mpk"
        cmd = [mpspack, "-q", "build", f"{d}/model.so", "-o", mpk] + (["--weights", blob] if blob else [])
        subprocess.run(cmd, check=True)
        cases.append((c["dir"] + " (fixture)", mpk, f"{d}/model.so", blob, f"{d}/input0.bin",
                      short[i["dtype"]], "x".join(map(str, i["shape"]))))
else:
    print(f"(no fixtures at {fixtures}: only synthetic cases)", file=sys.stderr)
for s in sizes:
    d = f"{work}/synthetic_{s}"
    cases.append((f"synthetic embedded +{s} MiB", f"{d}/embedded.mpk", f"{d}/model.so", None, f"{d}/input0.bin",
                  "f32", "4x16"))

# Each path's (load to first result, from exec, load alone) in ms.
def one(kind, case, cold):
    label, mpk, so, blob, inp, dt, shape = case
    files = [mpk, so, inp] + ([blob] if blob else [])
    (drop if cold else warm)(files)
    if kind in ("container", "other"):
        j = js([mpspack if kind == "container" else other, "run", "--bench", mpk, "--input", f"{inp}:{dt}:{shape}",
                "--iterations", "1", "--warmup", "0", "--format", "json"] + (["--cold"] if cold else []))
        return j["load_ms"]["load_to_first_result_ms"], j["time_to_first_result_ms"], j["load_ms"]["load_total_ms"]
    if kind in ("dlopen", "tempfile"):
        cmd = [direct, so, inp, dt, shape] + (["--blob", blob] if blob else []) + (["--tempfile"] if kind == "tempfile" else [])
        j = js(cmd)
        return (j["load_to_first_result_ms"], j["time_to_first_result_ms"],
                j["load_to_first_result_ms"] - j["first_run_ms"])
    # read: the bytes of the original library (+ blob)
    t0 = time.perf_counter()
    for f in [so] + ([blob] if blob else []):
        subprocess.run(["dd", f"if={f}", "of=/dev/null", "bs=16M", "status=none"], check=True)
    t = (time.perf_counter() - t0) * 1e3
    return t, t, t

kinds = ["container"] + (["other"] if other else []) + ["dlopen", "tempfile", "read"]
titles = {"other": "other mpspack ms (ratio)", "dlopen": "dlopen ms (ratio)", "tempfile": "tempfile ms (ratio)",
          "read": "read() of the bytes ms (ratio)"}
print(f"machine: {open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()}, "
      f"{os.cpu_count()} cores; median of {runs} rounds, the paths alternating; ms = load start to first result "
      f"(in-process); from exec in parentheses; ratio = this / container" + (f"; other mpspack: {other}" if other else ""))
print()
print("| case | cache | size | container ms | " + " | ".join(titles[k] for k in kinds[1:]) + " |")
print("|---" * (len(kinds) + 3) + "|")
loads = []  # the load-alone table's rows, printed after the main one
for case in cases:
    size = os.path.getsize(case[2]) + (os.path.getsize(case[3]) if case[3] else 0)
    for cold in (False, True):
        vals = {k: [] for k in kinds}
        for r in range(runs):
            for k in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
                vals[k].append(one(k, case, cold))
        res = {k: [statistics.median(v[i] for v in vals[k]) for i in range(3)] for k in kinds}
        base = res["container"][0]
        cells = [f"{res['container'][0]:.2f} ({res['container'][1]:.0f})"]
        for k in kinds[1:]:
            v = res[k]
            extra = f" ({v[1]:.0f})" if k != "read" else ""
            cells.append(f"{v[0]:.2f}{extra} ×{v[0] / base:.2f}" if base > 0 else f"{v[0]:.2f}")
        state = 'cold' if cold else 'warm'
        print(f"| {case[0]} | {state} | {size / 2**20:.1f} MiB | " + " | ".join(cells) + " |", flush=True)
        base = res["container"][2]
        cells = [f"{base:.3f}"] + [f"{res[k][2]:.3f} ×{res[k][2] / base:.2f}" if base > 0 else f"{res[k][2]:.3f}"
                                   for k in kinds[1:] if k != "read"]
        loads.append(f"| {case[0]} | {state} | " + " | ".join(cells) + " |")
print()
print("Load alone (to Create done; the first run left out), ms, same rounds:")
print()
print("| case | cache | container | " + " | ".join(titles[k].replace(" ms (ratio)", "") + " (ratio)"
                                              for k in kinds[1:] if k != "read") + " |")
print("|---" * (len(kinds) + 2) + "|")
print("\n".join(loads))
PY
