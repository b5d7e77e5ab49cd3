#!/usr/bin/env python3
"""Checks that libpack's private headers are included by intent (docs/CODING.md, "Headers by path").

Two rules, over the C, C++ and CUDA sources under libpack/, apps/, tests/, bench/ and examples/:
- a quoted include of a header of libpack/src names it by its path from libpack/src ("runtime/shim/tensor.hpp"),
  unless the header sits in the including file's own folder ("tensor.hpp" from runtime/shim/); so no include
  reaches a private header by bare name through an include path;
- no two headers of libpack (src/ and include/) share a file name, so a bare name in an error message, a comment
  or a search means one file.
Exit status 1 with one line per breach (file:line: what), 0 otherwise.

  docs/tools/include_paths.py [ROOT]   (default: the checkout this script sits in)
"""
import os
import re
import sys

SOURCES = (".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def files_under(root, top):
    for folder, dirs, files in os.walk(os.path.join(root, top)):
        dirs[:] = [d for d in dirs if d != "build"]
        for name in sorted(files):
            if name.endswith(SOURCES):
                yield os.path.join(folder, name)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
    private = os.path.join(root, "libpack", "src")
    by_name = {}
    for path in files_under(root, "libpack"):
        if not path.endswith((".c", ".cc", ".cpp", ".cu")):
            by_name.setdefault(os.path.basename(path), []).append(os.path.relpath(path, root))
    problems = [f"{paths[0]}: header name also used by {', '.join(paths[1:])}"
                for name, paths in sorted(by_name.items()) if len(paths) > 1]
    for top in ("libpack", "apps", "tests", "bench", "examples"):
        for path in files_under(root, top):
            text = open(path, encoding="utf-8", errors="replace").read()
            for match in INCLUDE.finditer(text):
                name = match.group(1)
                if name.startswith("mpspack/") or os.path.exists(os.path.join(os.path.dirname(path), name)):
                    continue  # libpack's own include folder; beside the including file, or a path from it
                if os.path.isfile(os.path.join(private, name)) or os.path.basename(name) not in by_name:
                    continue  # a path from libpack/src, or not a libpack header
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{os.path.relpath(path, root)}:{line}: \"{name}\" is a private header reached by "
                                f"an include path: name it by its path from libpack/src")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
