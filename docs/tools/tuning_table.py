#!/usr/bin/env python3
"""Checks that the MPSPACK_* environment switches the code reads are the ones docs/CLI.md documents.

The code's switches: every "MPSPACK_..." string literal in libpack/src/runtime/tuning/tuning.cpp, the one place
they are read (runtime/tuning/tuning.hpp). The documented ones: every `MPSPACK_...` name in the first column of
the table under docs/CLI.md's "## Environment". Each must be in the other. Also checks that no other source in
libpack/src or apps reads or sets an MPSPACK_* variable itself (getenv/setenv/unsetenv with such a literal).
Exit status 1 with one line per difference.

  docs/tools/tuning_table.py [--root .]
"""
import argparse
import os
import re
import sys

TUNING = "libpack/src/runtime/tuning/tuning.cpp"
CLI_DOC = "docs/CLI.md"
NAME = re.compile(r"MPSPACK_[A-Z0-9_]+")
ENV_CALL = re.compile(r"\b(?:std::|::)?(getenv|setenv|unsetenv|secure_getenv)\s*\(\s*\"MPSPACK_")
SOURCES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".inc")


def code_switches(root):
    with open(os.path.join(root, TUNING), encoding="utf-8") as f:
        return set(re.findall(r"\"(MPSPACK_[A-Z0-9_]+)\"", f.read()))


def documented_switches(root):
    """The names in the first cell of each row of the Environment section's table."""
    names, in_section = set(), False
    with open(os.path.join(root, CLI_DOC), encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_section = line.strip() == "## Environment"
                continue
            if in_section and line.startswith("|") and not line.startswith("|---"):
                first = line.split("|")[1]
                names.update(re.findall(r"`(MPSPACK_[A-Z0-9_]+)`", first))
    return names


def stray_reads(root):
    """file:line of each getenv/setenv of an MPSPACK_* literal outside tuning.cpp."""
    found = []
    for top in ("libpack/src", "apps"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                if not name.endswith(SOURCES) or rel == TUNING:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        if ENV_CALL.search(line):
                            found.append(f"{rel}:{n}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    root = parser.parse_args().root
    code, doc = code_switches(root), documented_switches(root)
    problems = [f"{TUNING} reads {n}, which {CLI_DOC}'s Environment table lacks" for n in sorted(code - doc)]
    problems += [f"{CLI_DOC}'s Environment table lists {n}, which {TUNING} does not read" for n in sorted(doc - code)]
    problems += [f"{where}: reads or sets an MPSPACK_* variable itself; read it through tuning() ({TUNING})"
                 for where in stray_reads(root)]
    if not code:
        problems.append(f"{TUNING}: no MPSPACK_* switch found")
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"{len(code)} switches, each read in {TUNING} and listed in {CLI_DOC}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
