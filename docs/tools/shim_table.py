#!/usr/bin/python3
"""Writes docs/SHIM.md: every function torch 2.11's AOTInductor shim headers declare, whether mpspack provides
it, and the tests that name it.

Inputs:
  - the names the headers declare, one per line: ../shared/reference/aoti-shim-2.11/{shim,c_shim_cpu,
    c_shim_cuda,c_shim_aten,c_shim_mps}.names beside the checkout (--names);
  - the names mpspack provides: the aoti_torch_* string literals of the shim's provided-name lists
    (libpack/src/runtime/shim/provided.cpp, shim_cuda/cuda_provided.cpp), the lists `inspect` and the loader
    consult. With --built-tool EXE (the test helper shim_provided_names, which prints what a build reports),
    those lists are first checked against the build, so a table from sources that disagree with it is refused;
  - the tests: every test file under tests/ (test_*; not the stub shims other tests use) is searched for
    each name as a whole word;
  - docs/tools/shim_not_provided.json: {"function name": "reason"} for the functions mpspack cannot provide
    (they need torch itself); the table prints the reason. A listed function that is provided, or that no
    header declares, is an error: the list must say what is true;
  - the op conformance cases per function (tests/ops/make_cases.py --count, which needs torch: Debian's
    python3-torch here and in CI).

--check compares the result with docs/SHIM.md instead of writing it (exit 1 when stale). When the reference
names are missing it exits 77 (a CTest skip), or 1 when the environment variable CI is set, since CI has them.
Standard library only, besides the torch make_cases.py imports.
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SKIP = 77

# The headers, in the order of the table, with what each one is.
HEADERS = [
    ("shim", "torch/csrc/inductor/aoti_torch/c/shim.h", "tensors, dtypes, devices, copies: every backend"),
    ("c_shim_cpu", "generated/c_shim_cpu.h", "CPU fallback ops"),
    ("c_shim_cuda", "generated/c_shim_cuda.h", "CUDA fallback ops"),
    ("c_shim_aten", "generated/c_shim_aten.h", "device-generic ATen ops"),
]
MPS_NOTE = ("mpspack has no MPS (Apple Metal) backend: its containers run on CPU and CUDA, so none of the "
            "aoti_torch_mps_* functions of generated/c_shim_mps.h is provided or listed here")
PROVIDED_SOURCES = [
    "libpack/src/runtime/shim/provided.cpp",
    "libpack/src/runtime/shim_cuda/cuda_provided.cpp",
]
TEST_SUFFIXES = {".cpp", ".hpp", ".py", ".sh"}
NOT_PROVIDED = "docs/tools/shim_not_provided.json"


def read_names(path):
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


BRIDGE_GENERATOR = "libpack/src/runtime/shim_cuda/host_bridge_gen.py"


def host_bridged():
    """The CUDA functions that run the CPU shim's function on host copies (generated at build time)."""
    run = subprocess.run(["/usr/bin/python3", str(REPO / BRIDGE_GENERATOR), "--list"], capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return set(run.stdout.split())


def provided_lists():
    """The aoti_torch_* names of each provided-name list, by source file (the host-bridged CUDA functions with
    the CUDA list: the CUDA plugin registers both)."""
    lists = {rel: set(re.findall(r'"(aoti_torch_[A-Za-z0-9_]+)"', (REPO / rel).read_text()))
             for rel in PROVIDED_SOURCES}
    lists["libpack/src/runtime/shim_cuda/cuda_provided.cpp"] |= host_bridged()
    return lists


def check_against_build(lists, built_tool):
    """The built code must report exactly the listed names, less a device part the build left out (CPU only)."""
    run = subprocess.run([str(built_tool)], capture_output=True, text=True, check=True)
    built = {n for n in run.stdout.split() if n.startswith("aoti_torch_")}
    listed = set().union(*lists.values())
    expected = set()
    for names in lists.values():
        if names & built:
            expected |= names
    if built != expected or not built:
        sys.exit("shim_table.py: the provided-name lists and the build disagree: built but not listed: "
                 f"{sorted(built - listed) or 'none'}; listed but not built: {sorted(expected - built) or 'none'}")


def test_files():
    files = []
    for p in sorted((REPO / "tests").rglob("*")):
        if p.is_file() and p.name.startswith("test_") and p.suffix in TEST_SUFFIXES:
            files.append((p.relative_to(REPO).as_posix(), p.read_text(errors="replace")))
    return files


def tests_naming(name, files):
    pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])")
    return [rel for rel, text in files if pattern.search(text)]


def not_provided_reasons(provided, declared_all):
    """The reasons of shim_not_provided.json, checked: none of its functions provided, each one declared."""
    reasons = json.loads((REPO / NOT_PROVIDED).read_text())
    wrong = sorted(set(reasons) & provided)
    if wrong:
        sys.exit(f"shim_table.py: {NOT_PROVIDED} lists functions mpspack provides: {wrong}")
    unknown = sorted(set(reasons) - declared_all)
    if unknown:
        sys.exit(f"shim_table.py: {NOT_PROVIDED} lists functions no header declares: {unknown}")
    return reasons


def provided_cell(name, provided, reasons):
    if name in provided:
        return "yes"
    return f"no: {reasons[name]}" if name in reasons else "no"


def case_counts():
    """Conformance cases per C function: each op's cases apply to its CPU and its CUDA function."""
    run = subprocess.run(["/usr/bin/python3", str(REPO / "tests" / "ops" / "make_cases.py"), "--count"],
                         capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    if run.returncode != 0:
        sys.exit(f"shim_table.py: tests/ops/make_cases.py --count failed: {run.stderr.strip()}")
    counts = {}
    for function, n in json.loads(run.stdout).items():
        for device in ("cpu", "cuda"):
            counts[function.replace("{device}", device)] = n
    return counts


def table(declared, provided, files, cases, bridged, reasons):
    rows = ["| function | provided | conformance cases | tests naming it |", "|---|---|---|---|"]
    for name in declared:
        tests = tests_naming(name, files)
        how = "host" if name in bridged else provided_cell(name, provided, reasons)
        rows.append(f"| `{name}` | {how} | {cases.get(name, 0)} | "
                    f"{', '.join(f'`{t}`' for t in tests) if tests else 'none'} |")
    return rows


def render(names_dir, provided):
    files = test_files()
    cases = case_counts()
    bridged = host_bridged()
    out = [
        "# The AOTInductor C shim: what mpspack provides",
        "",
        "<!-- Generated by docs/tools/shim_table.py; do not edit. The ctest \"docs/SHIM.md is current\" fails when",
        "     it is stale: run /usr/bin/python3 docs/tools/shim_table.py to rewrite it. -->",
        "",
        "A model library AOTInductor compiles imports `aoti_torch_*` functions from the process that loads it;",
        "mpspack runs it only when its shim provides every one (`mpspack inspect` names the ones it lacks). This",
        "table lists every function torch 2.11's shim headers declare, whether mpspack provides it, and the",
        "files under `tests/` that name it (\"none\": no test names it; a function can still be exercised by",
        "the real model fixtures that import it, which `test_shim_models.cpp` runs), and its cases in the op",
        "conformance suite (`tests/ops/`: each case is called here and compared with what torch gave for it).",
        "\"host\": a CUDA function without a kernel of its own, which runs the CPU shim's function on host copies",
        "of its tensors and puts the results back on the GPU (`libpack/src/runtime/shim_cuda/host_bridge.hpp`):",
        "torch's results, at the cost of the copies and a synchronised stream.",
        f"A function mpspack cannot provide, because it needs torch itself, says why (`{NOT_PROVIDED}`).",
        "",
        "The random ops (`rand`, `randn`, `randint`, `randperm`, `normal_functional`, `uniform`, `exponential`,",
        "`bernoulli_`, `native_dropout`) draw torch's distributions from one engine per process, seeded from",
        "`std::random_device`, not torch's values: torch's generators cannot be reproduced outside torch, so",
        "their `generator` arguments are accepted and ignored, and their cases compare the distribution.",
        "",
        "| header | what | declared | provided | provided and named by a test | provided with conformance cases |",
        "|---|---|---|---|---|---|",
    ]
    sections = []
    declared_by = {stem: read_names(names_dir / f"{stem}.names") for stem, _, _ in HEADERS}
    declared_all = set().union(*declared_by.values())
    reasons = not_provided_reasons(provided, declared_all)
    for stem, header, what in HEADERS:
        declared = declared_by[stem]
        have = [n for n in declared if n in provided]
        tested = [n for n in have if tests_naming(n, files)]
        with_cases = [n for n in have if cases.get(n, 0) > 0]
        out.append(f"| `{header}` | {what} | {len(declared)} | {len(have)} | {len(tested)} | {len(with_cases)} |")
        sections += ["", f"## `{header}`", ""] + table(declared, provided, files, cases, bridged, reasons)
    mps = names_dir / "c_shim_mps.names"
    mps_count = len(read_names(mps)) if mps.exists() else 0
    out.append(f"| `generated/c_shim_mps.h` | MPS fallback ops | {mps_count} | 0 | 0 | 0 |")
    out += ["", f"Not listed: {MPS_NOTE}."]
    out += sections
    extra = sorted(provided - declared_all)
    out += ["", "## Beyond the reference lists", "",
            "Functions mpspack provides that the name lists above do not hold: torch 2.11's generated headers",
            "declare some of them all the same (mul.Tensor, slice.Tensor and others the lists missed).", ""]
    if extra:
        out += table(extra, provided, files, cases, bridged, reasons)
    else:
        out.append("None.")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", type=Path, default=REPO.parent / "shared" / "reference" / "aoti-shim-2.11",
                    help="folder of the .names files")
    ap.add_argument("--built-tool", type=Path, help="a program printing the names the built shim provides")
    ap.add_argument("--output", type=Path, default=REPO / "docs" / "SHIM.md")
    ap.add_argument("--check", action="store_true", help="fail if --output differs instead of writing it")
    args = ap.parse_args()

    if not (args.names / "shim.names").exists():
        msg = f"shim_table.py: the reference names are missing: {args.names}"
        if os.environ.get("CI"):
            sys.exit(msg + " (CI has ../shared: failing)")
        print("skipped: " + msg)
        return SKIP
    lists = provided_lists()
    if args.built_tool:
        check_against_build(lists, args.built_tool)
    provided = set().union(*lists.values())
    text = render(args.names, provided)
    if not args.check:
        args.output.write_text(text)
        return 0
    current = args.output.read_text() if args.output.exists() else ""
    if current == text:
        return 0
    sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                               str(args.output), "regenerated", n=1))
    print(f"{args.output} is stale: run /usr/bin/python3 docs/tools/shim_table.py")
    return 1


if __name__ == "__main__":
    sys.exit(main())
