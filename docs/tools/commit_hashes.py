#!/usr/bin/env python3
"""Finds git commit hashes in the docs and in code comments (docs/CODING.md, "Comments say why, not history").

Scanned: every file under docs/ (Markdown whole; the comments of its scripts), README.md, and the comments of
the sources, scripts and CMake files under libpack/, apps/, tests/, bench/ and python/. Exit status 1 when a hash
is found, with one line per hit (file:line: token); 0 otherwise.

  docs/tools/commit_hashes.py [ROOT]        (default: the checkout this script sits in)
  docs/tools/commit_hashes.py --self-test   (the rule against its own cases)

The rule (docs/CODING.md): a hash is a run of 7 to 12 or of 40 lowercase hex digits (git's abbreviations and its
full form) that is not all digits, not one of a few English words spelt in a-f, and has neither a letter, a digit
nor "_" on either side. What it leaves alone:
- runs of other lengths (64-bit values and addresses are 16 digits, SHA-256 digests 64), and runs inside words or
  identifiers (0x1f2e3d4c, v1a2b3c4d);
- all-digit numbers (16777216) and the words of WORDS (defaced);
- UUIDs (8-4-4-4-12 groups joined by "-");
- a line that says what the hex is: it names a digest, a checksum or a hex value (sha, xxh, digest, checksum,
  crc, hash of, hex, uuid), as in FORMAT.md's examples and CLI.md's JSON of invalid UTF-8 bytes.
An abbreviated hash of 7 is all digits about 4% of the time; such a hash is missed.
"""
import os
import re
import sys

CANDIDATE = re.compile(r"(?<![0-9A-Za-z_])(?:[0-9a-f]{40}|[0-9a-f]{7,12})(?![0-9A-Za-z_])")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
WORDS = {"acceded", "defaced", "effaced", "deadbeef", "feedface", "cafebabe", "deadface", "baddcafe", "ed25519"}
NAMES_ITS_HEX = re.compile(r"sha|xxh|digest|checksum|crc|hash of|\bhex\b|uuid", re.IGNORECASE)

CODE_DIRS = ("libpack", "apps", "tests", "bench", "python")
C_LIKE = (".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".cuh", ".inc", ".fbs")
HASH_COMMENTED = (".py", ".sh", ".cmake", ".txt", ".toml", ".supp", ".cfg")
SKIPPED_DIRS = {".git", "build", "__pycache__", "corpus", "regressions", "_build"}


def hashes_in(text):
    """The commit-hash-like tokens of one line of prose, by the rule above."""
    if NAMES_ITS_HEX.search(text):
        return []
    text = UUID.sub(" ", text)
    return [m.group(0) for m in CANDIDATE.finditer(text)
            if re.search(r"[a-f]", m.group(0)) and m.group(0) not in WORDS]


def c_comments(lines):
    """(line number, comment text) of // and /* */ comments, string and char literals skipped."""
    in_block = False
    for number, line in enumerate(lines, 1):
        out, i = [], 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                out.append(line[i:] if end < 0 else line[i:end])
                if end < 0:
                    break
                i, in_block = end + 2, False
            elif line.startswith("//", i):
                out.append(line[i + 2:])
                break
            elif line.startswith("/*", i):
                in_block, i = True, i + 2
            elif line[i] in "\"'":
                j = i + 1
                while j < len(line) and line[j] != line[i]:
                    j += 2 if line[j] == "\\" else 1
                i = j + 1
            else:
                i += 1
        if out:
            yield number, " ".join(out)


def hash_comments(lines):
    """(line number, comment text) of # comments (shell, Python, CMake), quoted strings skipped."""
    for number, line in enumerate(lines, 1):
        quote, i = None, 0
        while i < len(line):
            c = line[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "#":
                yield number, line[i + 1:]
                break
            i += 1


def python_docstrings(lines):
    """(line number, text) of the lines inside triple-quoted strings: a Python file's docstrings are its docs."""
    inside = None
    for number, line in enumerate(lines, 1):
        rest = line
        while True:
            if inside:
                end = rest.find(inside)
                yield number, rest if end < 0 else rest[:end]
                if end < 0:
                    break
                rest, inside = rest[end + 3:], None
            else:
                starts = [(rest.find(q), q) for q in ('"' * 3, "'" * 3) if q in rest]
                if not starts:
                    break
                start, inside = min(starts)
                rest = rest[start + 3:]


def prose_reader(path):
    """How to find the prose of a file (all of a Markdown file, the comments of code), or None: not scanned."""
    name = os.path.basename(path)
    if name.endswith(".md"):
        return lambda lines: enumerate(lines, 1)
    if name.endswith(C_LIKE):
        return c_comments
    if name.endswith(".py"):
        return lambda lines: list(hash_comments(lines)) + list(python_docstrings(lines))
    if name.endswith(HASH_COMMENTED) or "." not in name:
        return hash_comments
    return None


def files_under(root):
    yield os.path.join(root, "README.md")
    for top in ("docs",) + CODE_DIRS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("build"))
            for name in sorted(files):
                yield os.path.join(folder, name)


def scan(root):
    hits = []
    for path in files_under(root):
        reader = prose_reader(path)
        if reader is None:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue  # binary fixtures and corpora carry no prose
        for number, text in reader(lines):
            for token in hashes_in(text):
                hits.append(f"{os.path.relpath(path, root)}:{number}: {token}")
    return hits


def self_test():
    found = {
        "measured with build 9ac8f58 on the VM": ["9ac8f58"],
        "(bffecac; rounds 0.93-1.16x)": ["bffecac"],
        "a full hash 0097f2e4c3b2a1908f7e6d5c4b3a291807f6e5d4 here": ["0097f2e4c3b2a1908f7e6d5c4b3a291807f6e5d4"],
        "`cc14232`, then `ff55279`": ["cc14232", "ff55279"],
    }
    clean = [
        "16777216 bytes and the word defaced",
        "a constant 0x1f2e3d4c5b and v1a2b3c4d",
        "the SHA-256 of it is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        'the JSON holds "hex": "636166e9"',
        "the chunk_xxh3 of segment 0 is 3c1f2a9b44d0e7a1",
        "a request id 123e4567-e89b-12d3-a456-426614174000 in the log",
        "a run of 66 digits " + "a1" * 33,
        "an address 00000000001ba600 in readelf's output",
        "an ed25519 key",
    ]
    failures = [f"{text!r}: {hashes_in(text)} != {want}" for text, want in found.items() if hashes_in(text) != want]
    failures += [f"{text!r}: {hashes_in(text)} != []" for text in clean if hashes_in(text)]
    c_source = ['const char* s = "9ac8f58";  // from 1b335b8', "/* spans", "   cc14232 */ int x = 0;"]
    if [t for _, text in c_comments(c_source) for t in hashes_in(text)] != ["1b335b8", "cc14232"]:
        failures.append("C comments: the literal was read or a comment was missed")
    script = ['echo "#9ac8f58"  # measured with 1b335b8']
    if [t for _, text in hash_comments(script) for t in hashes_in(text)] != ["1b335b8"]:
        failures.append("# comments: the quoted string was read or the comment was missed")
    for line in failures:
        print(f"commit_hashes.py self-test: {line}", file=sys.stderr)
    return 1 if failures else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    hits = scan(root)
    for hit in hits:
        print(hit)
    if hits:
        print(f"{len(hits)} commit hashes in docs or comments: say what the state is and why, not which commit "
              "(docs/CODING.md)", file=sys.stderr)
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
