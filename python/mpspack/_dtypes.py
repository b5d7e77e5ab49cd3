"""Dtypes as the C API names them (c10 ScalarType codes, mpspack_dtype_info) and as NumPy holds them."""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from . import _capi

BF16 = 15
# DLPack's type codes (dlpack.h, DLDataTypeCode).
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_COMPLEX, _DL_BOOL = 0, 1, 2, 4, 5, 6


class DType:
    """One dtype: `code` (c10), `name` as mpspack prints it ("f32", "bf16"), `torch_name` ("float32"),
    `itemsize`, and `numpy`: the NumPy dtype its elements come as. NumPy has no bf16, complex32 or float8 type:
    those come as unsigned integers of their size holding the raw bit patterns (`raw_bits` is True)."""

    __slots__ = ("code", "name", "torch_name", "itemsize", "numpy", "raw_bits")

    def __init__(self, code: int, name: str, torch_name: str, itemsize: int, descr: str):
        self.code, self.name, self.torch_name, self.itemsize = code, name, torch_name, itemsize
        self.raw_bits = descr == ""
        self.numpy = np.dtype(f"<u{itemsize}" if self.raw_bits else ("|" if itemsize == 1 else "<") + descr)

    def __repr__(self) -> str:
        return f"mpspack.DType({self.name})"


@functools.lru_cache(maxsize=None)
def table() -> dict[int, DType]:
    """Every dtype code the C API knows, by code."""
    lib = _capi.library()
    found = {}
    name, torch_name, descr, size = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_uint32()
    for code in range(0, 64):  # c10 codes are small; the API answers INVALID_ARGUMENT for unknown ones
        if lib.mpspack_dtype_info(code, ctypes.byref(name), ctypes.byref(torch_name), ctypes.byref(size),
                                  ctypes.byref(descr)) == _capi.OK:
            found[code] = DType(code, name.value.decode(), torch_name.value.decode(), size.value,
                                descr.value.decode())
    return found


def get(code: int) -> DType | None:
    return table().get(code)


def name(code: int) -> str:
    d = table().get(code)
    return d.name if d is not None else f"dtype{code}"


@functools.lru_cache(maxsize=None)
def _by_numpy() -> dict[np.dtype, int]:
    """NumPy dtype (native byte order) -> the code an array of it is passed as: the type itself, not a raw-bits
    one (a uint16 array is u16, unless the model's input says bf16)."""
    out = {}
    for d in table().values():
        if not d.raw_bits:
            out[d.numpy.newbyteorder("=")] = d.code
    return out


def from_numpy(dtype: np.dtype) -> int | None:
    table = _by_numpy()
    code = table.get(dtype)  # "<f4" and "=f4" are equal dtypes: found without a new one
    return code if code is not None else table.get(dtype.newbyteorder("="))


def from_dlpack(type_code: int, bits: int) -> int | None:
    """The c10 code of a DLPack (code, bits) type with one lane."""
    if type_code == _DL_BFLOAT and bits == 16:
        return BF16
    if type_code == _DL_BOOL and bits == 8:
        return 11
    kind = {_DL_INT: "i", _DL_UINT: "u", _DL_FLOAT: "f", _DL_COMPLEX: "c"}.get(type_code)
    if kind is None:
        return None
    return from_numpy(np.dtype(f"{kind}{bits // 8}")) if bits % 8 == 0 else None


def to_dlpack(code: int) -> tuple[int, int] | None:
    """DLPack's (code, bits) for a c10 code, None where DLPack has none (float8, complex32)."""
    if code == BF16:
        return _DL_BFLOAT, 16
    d = table().get(code)
    if d is None or d.raw_bits:
        return None
    kind = d.numpy.kind
    return {"i": _DL_INT, "u": _DL_UINT, "f": _DL_FLOAT, "c": _DL_COMPLEX, "b": _DL_BOOL}[kind], d.itemsize * 8
