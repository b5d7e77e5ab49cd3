#!/usr/bin/env bash
# Peak memory and time of every command on the crafted inputs of the hostile round (bench/hostile/make_inputs.cpp,
# plus a .pt2 whose metadata JSON nests 100,000 deep, a FIFO, and a container named with a Latin-1 byte), against the bounds docs/SECURITY.md states: peak RSS under
# 256 MiB plus the input's size (what a command may legitimately map) and 10 s of wall time. Each command runs
# under `timeout 60` and GNU time; the exit code is what the user sees (2: refused with one line).
#   bash bench/hostile/run.sh BUILD_DIR
# BUILD_DIR must be configured with -DMPSPACK_BUILD_BENCH=ON and have built mpspack and hostile_make_inputs.
set -euo pipefail
build="$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)"
for b in mpspack hostile_make_inputs; do
  [ -x "$build/bin/$b" ] || { echo "run.sh: $build/bin/$b missing (configure with -DMPSPACK_BUILD_BENCH=ON)" >&2; exit 2; }
done
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-hostile-XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$build/bin/hostile_make_inputs" "$work"
/usr/bin/python3 - "$work/deep.pt2" <<'PY'
import sys, zipfile
depth = 100000
nested = '{"AOTI_DEVICE_KEY": "cpu", "x": ' + '{"a":' * depth + "1" + "}" * (depth + 1)
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("deep/archive_format", "pt2")
    z.writestr("deep/data/aotinductor/m/h.wrapper.so", b"\x7fELF")
    z.writestr("deep/data/aotinductor/m/h.wrapper_metadata.json", nested, zipfile.ZIP_DEFLATED)
PY
mkfifo "$work/fifo.mpk"                                   # a FIFO: must not block any command
cp "$work/shared_segment.mpk" "$work/$(printf 'caf\xe9.mpk')"  # a Latin-1 byte in the name, for --json
/usr/bin/python3 - "$build/bin/mpspack" "$work" <<'PY'
import os, subprocess, sys
mpspack, work = sys.argv[1], sys.argv[2]
containers = ["shared_strings.mpk", "shared_library.mpk", "shared_segment.mpk", "shared_weights.mpk", "weights_256m.mpk",
              "fifo.mpk", os.fsdecode(b"caf\xe9.mpk")]
commands = {
    "inspect": lambda f: ["inspect", f],
    "inspect --json": lambda f: ["inspect", "--json", f],
    "verify": lambda f: ["verify", f],
    "verify --json": lambda f: ["verify", "--json", f],
    "unpack": lambda f: ["unpack", f, "-o", f"{work}/out"],
    "diff": lambda f: ["diff", f, f],
    "run": lambda f: ["run", f],
}
cases = [(c, name) for c in containers for name in commands]
cases += [("long_names.so", "inspect"), ("long_names.so", "build"), ("deep.pt2", "inspect"), ("deep.pt2", "build"),
          ("fifo.mpk", "build")]
print(f"machine: {os.cpu_count()} cores; limits: peak RSS <= 256 MiB + input size, wall <= 10 s")
print()
print("| input | size | command | exit | wall s | peak RSS MiB | limit MiB | within | what it said (first line, cut) |")
print("|---|---|---|---|---|---|---|---|---|")
failed = 0
for f, name in cases:
    path = f"{work}/{f}"
    args = commands[name](path) if name in commands else ["build", path, "-o", f"{work}/built.mpk"]
    subprocess.run(["rm", "-rf", f"{work}/out", f"{work}/built.mpk"])
    os.makedirs(f"{work}/out")
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", "timeout", "60", mpspack, "-q"] + args,
                       capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    wall, rss_kb = lines[-1].split()
    said = (lines[0] if len(lines) > 1 else r.stdout.strip().splitlines()[0] if r.stdout.strip() else "")
    said = said.replace(work + "/", "").replace("|", "\\|")
    said = said if len(said) <= 110 else said[:107] + "..."
    size = os.stat(path).st_size if not f.startswith("fifo") else 0
    rss, limit = int(rss_kb) / 1024, 256 + size / 2**20
    ok = float(wall) <= 10 and rss <= limit and r.returncode in (0, 1, 2)
    failed += not ok
    shown = os.fsencode(f).decode("ascii", "backslashreplace")  # the table stays ASCII whatever the name holds
    print(f"| {shown} | {size / 2**20:.1f} MiB | {name} | {r.returncode} | {wall} | {rss:.0f} | {limit:.0f} | "
          f"{'yes' if ok else '**no**'} | {said} |", flush=True)
print()
print("every command within its bounds" if failed == 0 else f"{failed} outside their bounds")
sys.exit(1 if failed else 0)
PY
