#!/usr/bin/env bash
# Where the load to first result goes, phase by phase, for mpspack and for AOTInductor's own path on the same
# SYNTHETIC Linear model (bench/synthetic/make_linear.sh), the two timed back to back in each round, which goes
# first alternating, warm page cache. The phases are the ones each side reports:
#   mpspack      `mpspack run FILE --bench --iterations 1 --warmup 0 --format json`'s load_ms: open (the
#                container), checks, library (memfd, dlopen, routes), weights, create, constants, first run
#   AOTInductor  bench/direct_load: dlopen, create, blob (map + UpdateConstantsFromBlob), first run
# One line per round and side, then the median of each phase. zero_copy.sh gives the totals beside read().
# BEFORE=PATH adds a side, another mpspack binary (a build before a change) timed the same way in each round;
# VARIANTS="NAME=VALUE ..." a side per variable, this mpspack with that variable set (MPSPACK_OPEN_LIBRARIES_EARLY=0).
#
#   [BEFORE=OTHER/bin/mpspack] [VARIANTS=...] bash bench/load_phases.sh BUILD_DIR [SIZE_MIB=1] [ROUNDS=5] [LAYOUTS="mmap pt2"]
# BUILD_DIR must be configured with -DMPSPACK_BUILD_BENCH=ON and have built mpspack and direct_load.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mib="${2:-1}"
rounds="${3:-5}"
layouts="${4:-mmap pt2}"
for b in mpspack direct_load; do
  [ -x "$build/bin/$b" ] || { echo "load_phases.sh: $build/bin/$b missing (configure with -DMPSPACK_BUILD_BENCH=ON, build mpspack direct_load)" >&2; exit 2; }
done
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-load-phases-XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "building the synthetic Linear model, $mib MiB of weights..." >&2
bash "$root/bench/synthetic/make_linear.sh" "$build" "$mib" "$work" >/dev/null
/usr/bin/python3 - "$build" "$work" "$rounds" $layouts <<'PY'
import json, os, statistics, subprocess, sys
build, d, rounds, layouts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
before = os.environ.get("BEFORE")
MPK = ("open_ms", "checks_ms", "library_ms", "weights_ms", "create_ms", "constants_ms", "first_run_ms",
       "load_to_first_result_ms")
AOTI = ("dlopen_ms", "create_ms", "blob_ms", "first_run_ms", "load_to_first_result_ms")

def js(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"load_phases.sh: {' '.join(cmd)} failed:\n{r.stderr}")
    return json.loads(r.stdout)

cpu = open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()
print(f"machine: {cpu}, {os.cpu_count()} cores, kernel {os.uname().release}; warm page cache; ms")
for layout in layouts:
    mpk = f"{d}/{layout}.mpk"
    so = f"{d}/{'blob' if layout == 'pt2' else layout}/model.so"
    blob = [f"{d}/blob/weights.blob"] if layout in ("blob", "pt2") else []
    run = ["run", "--bench", mpk, "--format", "json", "--iterations", "1", "--warmup", "0"]
    cmds = {"mpspack": [f"{build}/bin/mpspack"] + run,
            "aoti": [f"{build}/bin/direct_load", so, f"{d}/input0.bin", "f32", "1x1024"] + (["--blob"] + blob if blob else [])}
    if before:
        cmds["before"] = [before] + run
    envs = {}
    for v in os.environ.get("VARIANTS", "").split():
        cmds[v] = cmds["mpspack"]
        envs[v] = dict(os.environ, **dict([v.split("=", 1)]))
    sides = list(cmds)
    got = {side: [] for side in sides}
    for r in range(rounds):
        subprocess.run(["cat", mpk, so] + blob, stdout=subprocess.DEVNULL, check=True)
        for side in (sides if r % 2 == 0 else sides[::-1]):
            j = js(cmds[side], envs.get(side))
            got[side].append(j if side == "aoti" else j["load_ms"])
    print(f"\n{layout}, {d.split('/')[-1]} ({os.path.getsize(mpk) >> 20} MiB container), {rounds} rounds")
    for side in sides:
        keys = AOTI if side == "aoti" else MPK
        print(f"| {side} | " + " | ".join(k.removesuffix('_ms') for k in keys) + " |")
        print("|---" * (len(keys) + 1) + "|")
        for i, row in enumerate(got[side]):
            print(f"| round {i + 1} | " + " | ".join(f"{row[k]:.3f}" for k in keys) + " |")
        print("| median | " + " | ".join(f"{statistics.median(x[k] for x in got[side]):.3f}" for k in keys) + " |")
PY
