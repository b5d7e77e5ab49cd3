"""The tests' metadata reader (metadata_reader.py, which conftest.rewrite() edits containers with) knows the
schema field by field (a FlatBuffers field's id is its position): compare it with schema/container.fbs, so a field
appended to the schema without the reader fails here."""

from __future__ import annotations

import re

from conftest import SOURCE_DIR
from metadata_reader import IDENTIFIER, ROOT, TABLES

FBS_TYPES = {"byte": "i8", "ubyte": "u8", "bool": "bool", "int": "i32", "uint": "u32", "long": "i64",
             "ulong": "u64", "string": "str", "Flavour": "i8", "SegmentKind": "i8"}


def schema_tables(text: str) -> dict:
    text = re.sub(r"//[^\n]*", "", text)
    tables = {}
    for name, body in re.findall(r"\btable\s+(\w+)\s*\{([^}]*)\}", text):
        fields = []
        for fname, ftype, default in re.findall(r"(\w+)\s*:\s*([\w\[\]]+)\s*(?:=\s*(-?\w+))?\s*;", body):
            inner = ftype.strip("[]")
            t = FBS_TYPES.get(inner, inner)
            fields.append((fname, f"[{t}]" if ftype.startswith("[") else t, default))
        tables[name] = fields
    return tables


def test_reader_tables_match_schema():
    text = (SOURCE_DIR / "schema" / "container.fbs").read_text()
    want = schema_tables(text)
    assert set(want) == set(TABLES)
    for name, fields in want.items():
        got = [(f, t) for f, t, _ in TABLES[name]]
        assert got == [(f, t) for f, t, _ in fields], name
        for (f, _, d), (_, _, gd) in zip(fields, TABLES[name]):
            if d:
                assert int(d) == gd, f"{name}.{f} default"
    assert re.search(rf"root_type\s+{ROOT}\s*;", text)
    assert f'file_identifier "{IDENTIFIER.decode()}"' in text
