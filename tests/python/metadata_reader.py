"""The tests' own reader of the metadata block (schema/container.fbs): conftest.rewrite() uses it to find where
each metadata scalar lies, to make damaged containers that pass the header checks and reach the C library's
metadata and structural rules. The package reads containers only through the C API; this is test tooling.

A bounds-checked reader. Why not `flatc --python`: the generated code reads with `struct.unpack_from` on whatever offsets
the buffer holds. Python's FlatBuffers runtime has no Verifier, and `unpack_from` accepts a
negative offset (it counts from the end of the buffer), so a damaged block would be read from the
wrong place without any error, or fail with IndexError/struct.error deep inside the generated code.
This reader does what the C++ reader does with the FlatBuffers Verifier (docs/FORMAT.md, rules
M2..M5): every offset is checked against the block before it is followed, every list and string is
charged against the limits before it is decoded, and every failure is one FormatError naming the
file and the rule. TABLES below is the schema, field by field in declaration order (a FlatBuffers
field's id is its position); tests/python/test_schema.py compares it with schema/container.fbs.
"""

from __future__ import annotations

import struct



class FormatError(ValueError):
    """A block this reader refuses."""

# Field types: scalars ("i8", "u8", "bool", "i32", "u32", "i64", "u64"), "str", a table name, or
# a list of one of those ("[...]"). Scalars absent from the buffer take the schema's default.
TABLES: dict[str, list[tuple[str, str, object]]] = {
    "Segment": [("kind", "i8", 0), ("name", "str", ""), ("offset", "u64", 0), ("size", "u64", 0),
                ("alignment", "u64", 0), ("xxh3", "u64", 0), ("chunk_xxh3", "[u64]", None)],
    "Source": [("name", "str", ""), ("size", "u64", 0), ("sha256", "str", ""), ("kind", "str", ""),
               ("flavour", "str", ""), ("mode", "u32", 0)],
    "Patch": [("offset", "u64", 0), ("bytes", "[u8]", None)],
    "ConstantsRegion": [("start_vaddr", "u64", 0), ("end_vaddr", "u64", 0), ("file_offset", "u64", 0),
                        ("section", "str", ""), ("writable", "bool", False)],
    "Library": [("name", "str", ""), ("device", "str", ""), ("abi", "str", ""), ("machine", "str", ""),
                ("flavour", "i8", 0), ("segment", "u32", 0), ("needed", "[str]", None),
                ("dropped_needed", "[str]", None), ("imports", "[str]", None),
                ("region", "ConstantsRegion", None), ("weights", "i32", -1), ("cubins", "[u32]", None),
                ("original_size", "u64", 0), ("original_sha256", "str", ""), ("removed_offset", "u64", 0),
                ("removed_size", "u64", 0), ("restore", "[Patch]", None)],
    "Constant": [("name", "str", ""), ("fqn", "str", ""), ("dtype", "i32", 0), ("shape", "[i64]", None),
                 ("stride", "[i64]", None), ("storage_offset", "i64", 0), ("offset", "u64", 0),
                 ("size", "u64", 0), ("type", "i32", 0), ("from_folded", "bool", False)],
    "Weights": [("segment", "u32", 0), ("constants", "[Constant]", None)],
    "Tensor": [("dtype", "i32", 0), ("shape", "[i64]", None), ("segment", "u32", 0)],
    "Example": [("library", "u32", 0), ("inputs", "[Tensor]", None), ("outputs", "[Tensor]", None)],
    "Metadata": [("producer", "str", ""), ("producer_version", "str", ""), ("sources", "[Source]", None),
                 ("segments", "[Segment]", None), ("libraries", "[Library]", None),
                 ("weights", "[Weights]", None), ("examples", "[Example]", None)],
}
ROOT = "Metadata"
IDENTIFIER = b"MPKM"

_SCALARS = {"i8": struct.Struct("<b"), "u8": struct.Struct("<B"), "bool": struct.Struct("<B"),
            "i32": struct.Struct("<i"), "u32": struct.Struct("<I"), "i64": struct.Struct("<q"),
            "u64": struct.Struct("<Q")}
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")

# docs/FORMAT.md, "Limits".
MAX_BLOCK = 64 << 20
MAX_LIST = 1 << 20
MAX_DIMS = 64
MAX_PATCHES = 4096
MAX_PATCH_BYTES = 1 << 20
MAX_TOTAL_ENTRIES = 1 << 22
MAX_DECODED = 64 << 20
MAX_STRING = 4096
_TABLE_COST = 128
_STRING_COST = 32
_INT_COST = 8


class _Reader:
    def __init__(self, block: bytes, what: str, positions: dict | None = None):
        self.positions = positions
        self.b = block
        self.n = len(block)
        self.what = what
        self.entries = 0
        self.decoded = 0
        self.depth = 0

    def fail(self, rule: str, message: str) -> FormatError:
        return FormatError(f"{self.what}: rule {rule}: {message}")

    def malformed(self, why: str) -> FormatError:
        return self.fail("M2", f"metadata block ({self.n} bytes) fails FlatBuffers verification: {why}")

    def check(self, pos: int, size: int, what: str) -> None:
        if pos < 0 or size < 0 or pos + size > self.n:
            raise self.malformed(f"{what} at {pos:#x} + {size} lies outside the block")

    def get(self, s: struct.Struct, pos: int, what: str):
        self.check(pos, s.size, what)
        return s.unpack_from(self.b, pos)[0]

    def charge(self, entries: int, size: int) -> None:
        self.entries += entries
        self.decoded += size
        if self.entries > MAX_TOTAL_ENTRIES or self.decoded > MAX_DECODED:
            raise self.fail("M4", f"metadata decodes to more than {MAX_TOTAL_ENTRIES} list entries or "
                                  f"{MAX_DECODED} bytes (each shared string, list or table counts once per reference)")

    def follow(self, pos: int, what: str) -> int:
        off = self.get(_U32, pos, what)
        target = pos + off
        if off == 0 or target >= self.n:
            raise self.malformed(f"{what} at {pos:#x} points outside the block")
        return target

    def string(self, pos: int, path: str) -> str:
        length = self.get(_U32, pos, path)
        if length > MAX_STRING:
            raise self.fail("M5", f"metadata {path} is {length} bytes long (limit {MAX_STRING})")
        self.check(pos + 4, length + 1, path)  # the bytes and the terminating NUL
        if self.b[pos + 4 + length] != 0:
            raise self.malformed(f"{path} is not NUL-terminated")
        self.charge(0, _STRING_COST + length)
        return self.b[pos + 4:pos + 4 + length].decode("utf-8", errors="replace")

    def vector(self, pos: int, elem: str, path: str) -> list:
        count = self.get(_U32, pos, path)
        limit = MAX_LIST
        if path.endswith((".shape", ".stride")):
            limit = MAX_DIMS
        elif path.endswith(".restore"):
            limit = MAX_PATCHES
        elif path.endswith(".bytes"):
            limit = MAX_PATCH_BYTES
        if count > limit:
            raise self.fail("M3", f"metadata {path} has {count} entries (limit {limit})")
        start = pos + 4
        if elem in _SCALARS:
            s = _SCALARS[elem]
            self.check(start, count * s.size, path)
            self.charge(count, count * (1 if elem == "u8" else _INT_COST))
            if self.positions is not None:
                for i in range(count):
                    self.positions[f"{path}[{i}]"] = (start + i * s.size, s)
            if elem == "u8":
                return list(self.b[start:start + count])
            return [v[0] for v in s.iter_unpack(self.b[start:start + count * s.size])]
        self.check(start, count * 4, path)
        self.charge(count, 0)
        out = []
        for i in range(count):
            target = self.follow(start + 4 * i, f"{path}[{i}]")
            if elem == "str":
                out.append(self.string(target, f"{path}[{i}]"))
            else:
                out.append(self.table(target, elem, f"{path}[{i}]"))
        return out

    def table(self, pos: int, name: str, path: str) -> dict:
        self.depth += 1
        if self.depth > 16:
            raise self.malformed("tables nested too deep")
        self.charge(0, _TABLE_COST)
        soff = self.get(_I32, pos, f"{path} table")
        vt = pos - soff
        vt_size = self.get(_U16, vt, f"{path} vtable")
        tbl_size = self.get(_U16, vt + 2, f"{path} vtable")
        if vt_size < 4 or vt_size % 2:
            raise self.malformed(f"{path} has a vtable of {vt_size} bytes")
        self.check(vt, vt_size, f"{path} vtable")
        self.check(pos, tbl_size, f"{path} table")
        out = {}
        for i, (field, kind, default) in enumerate(TABLES[name]):
            fpath = f"{path}.{field}"
            voff = 4 + 2 * i
            o = self.get(_U16, vt + voff, fpath) if voff < vt_size else 0
            if o == 0:
                out[field] = [] if kind.startswith("[") else default
                continue
            fpos = pos + o
            if kind in _SCALARS:
                s = _SCALARS[kind]
                if o + s.size > tbl_size:
                    raise self.malformed(f"{fpath} lies outside its table")
                v = self.get(s, fpos, fpath)
                if self.positions is not None:
                    self.positions[fpath] = (fpos, s)
                out[field] = bool(v) if kind == "bool" else v
                continue
            if o + 4 > tbl_size:
                raise self.malformed(f"{fpath} lies outside its table")
            target = self.follow(fpos, fpath)
            if kind == "str":
                out[field] = self.string(target, fpath)
            elif kind.startswith("["):
                out[field] = self.vector(target, kind[1:-1], fpath)
            else:
                out[field] = self.table(target, kind, fpath)
        self.depth -= 1
        return out


def decode_metadata(block: bytes, what: str, positions: dict | None = None) -> dict:
    """Decodes the metadata block into plain dicts and lists (field names as in the schema).
    `positions`, when given, receives each scalar's place in the block, as path -> (offset, struct):
    ".segments[1].size", ".weights[0].constants[0].shape[1]" (tests edit containers with it)."""
    if len(block) > MAX_BLOCK:
        raise FormatError(f"{what}: rule M1: metadata block is {len(block)} bytes (limit {MAX_BLOCK})")
    r = _Reader(block, what, positions)
    if len(block) < 8 or block[4:8] != IDENTIFIER:
        raise r.fail("M2", f'metadata block ({len(block)} bytes) has no "MPKM" FlatBuffers identifier')
    root = r.follow(0, "root offset")
    return r.table(root, ROOT, "")
