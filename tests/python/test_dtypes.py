"""The package's dtype table, which it reads from the C API (mpspack_dtype_info), against the C++ one it comes
from, libpack/include/mpspack/dtype.hpp: codes, names, element sizes, and the NumPy dtype each comes as (the raw bits
as an unsigned integer of its size where NumPy has none)."""

from __future__ import annotations

import re

import numpy as np

from conftest import SOURCE_DIR
from mpspack import _dtypes


def cpp_dtypes() -> dict:
    text = (SOURCE_DIR / "libpack" / "include" / "mpspack" / "dtype.hpp").read_text()
    codes = dict(re.findall(r"\b(\w+) = (\d+)\b", text.split("namespace dtype {")[1].split("}")[0]))
    rows = re.findall(r'\{dtype::(\w+), "(\w+)", "(\w+)", (\d+), "(\w*)", (?:true|false)\}', text)
    assert rows, "no rows read from dtype.hpp's kDtypes"
    return {int(codes[c]): (name, torch, int(size), npy) for c, name, torch, size, npy in rows}


def test_dtypes_match_cpp_table():
    want = cpp_dtypes()
    got = _dtypes.table()
    assert set(got) == set(want)
    for code, (name, torch, size, npy) in want.items():
        d = got[code]
        assert (d.name, d.torch_name, d.itemsize) == (name, torch, size), code
        assert d.numpy.itemsize == size, name
        if npy == "":
            assert d.raw_bits and d.numpy.kind == "u"  # NumPy has none: the raw bits as an unsigned integer
        else:
            assert not d.raw_bits and d.numpy.str[1:] == npy, name


def test_numpy_and_dlpack_mapping():
    assert _dtypes.from_numpy(np.dtype("<f4")) == 6 and _dtypes.from_numpy(np.dtype(">f4")) == 6
    assert _dtypes.from_numpy(np.dtype("u2")) == 27  # a uint16 array is u16, unless the model's input says bf16
    assert _dtypes.from_numpy(np.dtype("?")) == 11
    assert _dtypes.from_numpy(np.dtype("U3")) is None
    assert _dtypes.from_dlpack(4, 16) == 15 and _dtypes.to_dlpack(15) == (4, 16)  # bf16
    assert _dtypes.from_dlpack(2, 32) == 6 and _dtypes.to_dlpack(6) == (2, 32)
    assert _dtypes.to_dlpack(24) is None  # float8: DLPack v0.8 has no code for it
