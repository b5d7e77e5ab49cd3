#!/usr/bin/env python3
"""Lists the functions of C++/CUDA sources longer than a limit (default 60 lines), longest first.

A function may be longer when the comment just above it gives the reason in a line that starts with "Long:"
(e.g. "// Long: one kernel, its loop nest reads as one piece"); such functions are listed apart.
Exit status 1 when a function over the limit has no reason.

  docs/tools/function_lengths.py [--limit 60] [--all] libpack/src/runtime

A heuristic reader, not a parser: a definition is a line that opens a brace block after a parenthesised
parameter list (not if/for/while/switch/catch, not a lambda inside a body), at namespace or class depth.
"""
import argparse
import os
import re
import sys

CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else|return|namespace|struct|class|enum|union|extern)\b")


def strip_code(line, in_block):
    """The line without comments and string/char literals; whether a /* block */ continues past it."""
    out, i = [], 0
    while i < len(line):
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_block = end + 2, False
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_block, i = True, i + 2
            continue
        if c in "\"'":
            j = i + 1
            while j < len(line) and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out), in_block


def functions(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    depth, in_block, scopes = 0, False, []  # scopes: (kind, start line, name, depth at open)
    header = []  # code lines since the last statement end, for the signature
    for n, raw in enumerate(lines):
        code, in_block = strip_code(raw, in_block)
        if code.lstrip().startswith("#"):
            continue  # preprocessor lines are no part of a signature
        header.append(code)
        for ch in code:
            if ch == "{":
                sig = " ".join(header).strip()
                in_function = any(k == "fn" for k, *_ in scopes)
                is_fn = (not in_function and ")" in sig and not CONTROL.match(sig.split("{")[0].strip().split("\n")[-1])
                         and not re.search(r"=\s*\[|\]\s*\(", sig) and not sig.rstrip("{ ").endswith("="))
                if is_fn:
                    m = re.search(r"([~\w:<>=!+\-*/\[\]]+)\s*\([^()]*(\([^()]*\)[^()]*)*\)[^()]*$", sig.split("{")[0])
                    name = m.group(1) if m else sig[:60]
                    start = n
                    while start > 0 and lines[start - 1].strip() and not lines[start - 1].strip().startswith("//") \
                            and not lines[start - 1].rstrip().endswith((";", "}", "{")):
                        start -= 1
                    scopes.append(("fn", start, name, depth))
                else:
                    scopes.append(("block", n, "", depth))
                depth += 1
                header = []
            elif ch == "}":
                depth -= 1
                if scopes:
                    kind, start, name, _ = scopes.pop()
                    if kind == "fn":
                        yield name, start, n, comment_above(lines, start)
                header = []
            elif ch == ";":
                header = []


def comment_above(lines, start):
    text, i = [], start - 1
    while i >= 0 and (lines[i].strip().startswith("//") or lines[i].strip().startswith("template")):
        text.append(lines[i].strip())
        i -= 1
    return "\n".join(reversed(text))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("--all", action="store_true", help="list every function over the limit, with or without reason")
    ap.add_argument("roots", nargs="+")
    a = ap.parse_args()
    rows = []
    for root in a.roots:
        for dirpath, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith((".cpp", ".hpp", ".cu", ".h", ".cuh", ".inc")):
                    p = os.path.join(dirpath, f)
                    for name, s, e, comment in functions(p):
                        length = e - s + 1
                        if length > a.limit:
                            reason = next((l.split("Long:", 1)[1].strip() for l in comment.split("\n")
                                           if "Long:" in l), "")
                            rows.append((length, p, s + 1, name, reason))
    rows.sort(reverse=True)
    bad = [r for r in rows if not r[4]]
    for length, p, line, name, reason in rows:
        if reason and not a.all:
            continue
        print(f"{length:5d}  {p}:{line}  {name}" + (f"  -- {reason}" if reason else "  -- NO REASON"))
    if not a.all:
        print(f"({len(rows) - len(bad)} over {a.limit} lines with a reason; --all lists them)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
