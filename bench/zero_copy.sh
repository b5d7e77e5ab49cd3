#!/usr/bin/env bash
# Warm time to first result of the four layouts (weights embedded in the .so; a plain .so + weights blob; mmap-self,
# the weights appended to the .so, which maps them itself; a .pt2, whose wrapper source gives the constants table),
# side by side in one run on the SYNTHETIC Linear model
# (bench/synthetic/linear.cpp: loads its weights as AOTInductor's generated code does; its Run reads every weight):
#   mpspack      `mpspack run FILE --bench --iterations 1 --warmup 0`: load_to_first_result_ms and the weights mode,
#                every weight byte checked against its hashes before the first result (the default)
#   unverified   the same with --no-verify: the weights' hashes not checked (the library's still are)
#   copying      the same with MPSPACK_LARGE_BLOCKS=libc: the library's malloc and memcpy left alone, so Create or
#                UpdateConstantsFromBlob copies the weights (how mpspack loaded these layouts before)
#   AOTInductor  bench/direct_load: dlopen the .so where it lies, Create, [map the blob, UpdateConstantsFromBlob];
#                its load only, no run (which favours it); for the .pt2 the same as the blob layout (torch's loader
#                extracts the archive first, which is not counted); for mmap-self Create maps the file and copies
#                every constant out of the mapping, as AOTInductor's CPU code does
#   read + run   one read() of the whole container into memory, plus one steady-state run (p50 of 20)
# Every file is read once before (warm page cache). Each figure is the median of RUNS runs.
#
# LAYOUTS="embedded blob mmap pt2" (the default) picks the layouts; one layout at 8 GiB is what 64 GiB of disk holds
# (the weights blob, the layout's library and its container).
#
#   [LAYOUTS="..."] bash bench/zero_copy.sh BUILD_DIR [SIZES_MIB="64 1024 4096"] [RUNS=3]
# BUILD_DIR must be configured with -DMPSPACK_BUILD_BENCH=ON and have built mpspack and direct_load.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
sizes="${2:-64 1024 4096}"
runs="${3:-3}"
for b in mpspack direct_load; do
  [ -x "$build/bin/$b" ] || { echo "zero_copy.sh: $build/bin/$b missing (configure with -DMPSPACK_BUILD_BENCH=ON, build mpspack direct_load)" >&2; exit 2; }
done
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-zero-copy-XXXXXX")"
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$root" "$build" "$work" "$runs" $sizes <<'PY'
import json, mmap, os, statistics, subprocess, sys, time
root, build, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
mpspack, direct = f"{build}/bin/mpspack", f"{build}/bin/direct_load"

def js(cmd, env={}):
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env))
    if r.returncode != 0:
        sys.exit(f"zero_copy.sh: {' '.join(cmd)} failed:\n{r.stderr}")
    return json.loads(r.stdout)

def warm(files):
    for f in files:
        subprocess.run(["cat", f], stdout=subprocess.DEVNULL, check=True)

def read_all(path):  # read() into a buffer of the file's size, as a host that reads the file would, its pages
    t0 = time.perf_counter()  # faulted in up front (MAP_POPULATE: the fastest such buffer measured here)
    with open(path, "rb", buffering=0) as f:
        n = os.fstat(f.fileno()).st_size
        buf = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
        view, got = memoryview(buf), 0
        while got < n:
            got += f.readinto(view[got:])
        view.release()
        buf.close()
    return (time.perf_counter() - t0) * 1e3

cpu = open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()
print(f"machine: {cpu}, {os.cpu_count()} cores, kernel {os.uname().release}; warm page cache; median of {runs} runs; "
      "ms to the first result (AOTInductor: to the end of its load)")
print()
print("| layout | weights | mpspack ms (mode) | unverified ms | copying ms | AOTInductor's own path ms | "
      "read + run ms | mpspack / (read + run) | AOTInductor / mpspack | mpspack / unverified |")
print("|---|---|---|---|---|---|---|---|---|---|")
for mib in sys.argv[5:]:
    d = f"{work}/linear_{mib}"
    print(f"building the synthetic Linear model, {mib} MiB of weights...", file=sys.stderr, flush=True)
    subprocess.run(["bash", f"{root}/bench/synthetic/make_linear.sh", build, mib, d], check=True)
    if os.path.exists(f"{d}/model.pt2"):
        os.remove(f"{d}/model.pt2")  # packed into pt2.mpk; the disk holds the rest
    for layout in os.environ.get("LAYOUTS", "embedded blob mmap pt2").split():
        mpk, so = f"{d}/{layout}.mpk", f"{d}/{'blob' if layout == 'pt2' else layout}/model.so"
        blob = f"{d}/blob/weights.blob" if layout in ("blob", "pt2") else None
        files = [mpk, so] + ([blob] if blob else [])
        bench = [mpspack, "run", "--bench", mpk, "--format", "json"]
        res = {"mpspack": [], "unverified": [], "copying": [], "aoti": [], "read": []}
        mode = ""
        for _ in range(runs):
            warm(files)
            j = js(bench + ["--iterations", "1", "--warmup", "0"])
            res["mpspack"].append(j["load_ms"]["load_to_first_result_ms"])
            mode = j["weights_mode"]
            j = js(bench + ["--iterations", "1", "--warmup", "0", "--no-verify"])
            res["unverified"].append(j["load_ms"]["load_to_first_result_ms"])
            j = js(bench + ["--iterations", "1", "--warmup", "0"], env={"MPSPACK_LARGE_BLOCKS": "libc"})
            res["copying"].append(j["load_ms"]["load_to_first_result_ms"])
            j = js([direct, so, f"{d}/input0.bin", "f32", "1x1024"] + (["--blob", blob] if blob else []))
            res["aoti"].append(j["load_to_first_result_ms"] - j["first_run_ms"])
            res["read"].append(read_all(mpk))
        steady = js(bench + ["--iterations", "20", "--warmup", "2"])["latency_ms"]["p50"]
        m = {k: statistics.median(v) for k, v in res.items()}
        rr = m["read"] + steady
        short = ("in place" if "in place" in mode else "mapped" if "no copy" in mode else "copied" if "cop" in mode
                 else mode)
        print(f"| {layout} | {int(mib)} MiB | {m['mpspack']:.1f} ({short}) | {m['unverified']:.1f} | {m['copying']:.1f} | "
              f"{m['aoti']:.1f} | {m['read']:.1f} + {steady:.1f} | {m['mpspack'] / rr:.2f} | "
              f"{m['aoti'] / m['mpspack']:.2f} | {m['mpspack'] / m['unverified']:.2f} |", flush=True)
    subprocess.run(["rm", "-rf", d], check=True)
PY
