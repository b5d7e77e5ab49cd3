"""The package's dtype table (code, printed name, element size) against the C++ one it mirrors,
libpack/include/mpspack/dtype.hpp, so a dtype added there without the reader fails here."""

from __future__ import annotations

import re

from conftest import SOURCE_DIR
from mpspack.container import DTYPES, RAW_BITS


def cpp_dtypes() -> dict:
    text = (SOURCE_DIR / "libpack" / "include" / "mpspack" / "dtype.hpp").read_text()
    codes = dict(re.findall(r"\b(\w+) = (\d+)\b", text.split("namespace dtype {")[1].split("}")[0]))
    rows = re.findall(r'\{dtype::(\w+), "(\w+)", "(\w+)", (\d+), "(\w*)", (?:true|false)\}', text)
    assert rows, "no rows read from dtype.hpp's kDtypes"
    return {int(codes[c]): (name, int(size), npy) for c, name, _torch, size, npy in rows}


def test_dtypes_match_cpp_table():
    want = cpp_dtypes()
    assert set(DTYPES) == set(want)
    for code, (name, size, npy) in want.items():
        got_name, np_dtype = DTYPES[code]
        assert got_name == name, code
        assert np_dtype.itemsize == size, name
        if code in RAW_BITS:
            assert npy == ""  # NumPy has none: the reader gives its raw bits as an unsigned integer
        else:
            assert np_dtype.str[1:] == npy, name
