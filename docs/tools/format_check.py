#!/usr/bin/env python3
"""Checks that the C, C++ and CUDA sources are formatted as .clang-format says (docs/CODING.md, "Formatting").

Runs `clang-format --dry-run -Werror` over every .c, .cpp, .h, .hpp, .cu, .cuh and .inc file under libpack/,
apps/, tests/, bench/ and examples/ (build folders left out; the tree holds no third-party or generated
sources). clang-format's output differs between major versions, so the check runs only with clang-format 14, the
version Debian 12 ships (clang-format-14, else clang-format if it is 14). Without it the check is skipped (exit
77), except under CI=true, where it fails. Exit status 1 with clang-format's warnings when a file differs.

  docs/tools/format_check.py [ROOT]   (default: the checkout this script sits in)
  to fix: clang-format-14 -i FILE...
"""
import os
import re
import shutil
import subprocess
import sys

VERSION = 14
SOURCES = (".c", ".cpp", ".h", ".hpp", ".cu", ".cuh", ".inc")
FOLDERS = ("libpack", "apps", "tests", "bench", "examples")


def find_clang_format():
    for name in (f"clang-format-{VERSION}", "clang-format"):
        path = shutil.which(name)
        if path:
            out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
            found = re.search(r"version (\d+)\.", out)
            if found and int(found.group(1)) == VERSION:
                return path
    return None


def sources(root):
    for top in FOLDERS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not os.path.exists(os.path.join(folder, d, "CMakeCache.txt")))
            yield from (os.path.join(folder, f) for f in sorted(files) if f.endswith(SOURCES))


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
    tool = find_clang_format()
    if not tool:
        print(f"format_check: clang-format {VERSION} not found (apt-get install clang-format on Debian 12)")
        return 1 if os.environ.get("CI") == "true" else 77
    files = list(sources(root))
    failed = False
    for start in range(0, len(files), 100):
        batch = files[start:start + 100]
        result = subprocess.run([tool, "--dry-run", "-Werror", f"--style=file:{root}/.clang-format"] + batch)
        failed = failed or result.returncode != 0
    print(f"format_check: {len(files)} files, {'some differ from .clang-format' if failed else 'all formatted'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
