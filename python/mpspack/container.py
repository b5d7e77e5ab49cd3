"""An opened container, read through the C API: the header, metadata and structural checks are the C library's
(the validator `mpspack inspect` and `run` use, so its errors carry the same messages and rule ids), and constants
are NumPy views of the file the library mapped, without a copy."""

from __future__ import annotations

import ctypes
import json
import os
import warnings

import numpy as np

from . import _capi, _dtypes
from .errors import FormatError, InvalidArgument, NoConstantsTable


class _Handle:
    """Owns one mpspack_container handle and closes it when the last reference goes: the Container while it is
    open, and every array viewing the mapping (through the buffer's `owner` attribute), so a view stays readable
    after Container.close()."""

    __slots__ = ("ptr", "__weakref__")

    def __init__(self, ptr: int):
        self.ptr = ptr

    def __del__(self) -> None:
        ptr, self.ptr = self.ptr, None
        if ptr:
            lib = _capi._lib
            if lib is not None:
                lib.mpspack_container_close(ptr)


def _hex(v: int) -> str:
    return f"{v:016x}"


class Container:
    """An opened container. `header` and `format` hold the header's fields; `producer`, `sources`, `segments`,
    `libraries`, `weights` and `examples` what `mpspack inspect --json` prints under those keys (to_dict() is that
    whole report, `missing_shim_imports` of this build's shim included). `path` is the path it was opened from."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.name = os.fsdecode(self.path)
        lib = _capi.library()
        ptr = ctypes.c_void_p()
        status = lib.mpspack_container_open(os.fsencode(self.path), ctypes.byref(ptr))
        if status == _capi.ERR_UNSUPPORTED:
            # A container of a format version this mpspack does not read: for open(), a file it cannot read.
            raise FormatError(_capi.message())
        if status != _capi.OK:
            raise _capi.error(status, self.name, opening=True)
        self._handle: _Handle | None = _Handle(ptr.value)
        try:
            self._describe(lib, ptr)
        except BaseException:
            self.close()
            raise

    def _describe(self, lib, ptr) -> None:
        h = _capi.HeaderInfo()
        _capi.check(lib.mpspack_container_header(ptr, ctypes.byref(h)))
        self.format = {"major": h.version_major, "minor": h.version_minor}
        self.header = {"header_size": h.header_size, "metadata_offset": h.metadata_offset,
                       "metadata_size": h.metadata_size, "data_offset": h.data_offset, "data_size": h.data_size,
                       "file_size": h.file_size, "checksum": _hex(h.checksum)}
        self.size = h.file_size
        report = ctypes.c_void_p()
        _capi.check(lib.mpspack_container_manifest_json(ptr, ctypes.byref(report)), what=self.name)
        self._report = json.loads(_capi.take_string(report))
        r = self._report
        self.producer, self.sources, self.segments = r["producer"], r["sources"], r["segments"]
        self.libraries, self.weights, self.examples = r["libraries"], r["weights"], r["examples"]
        # The whole file as one read-only uint8 array: every view below is a view of it (its base), and through
        # its buffer it holds the handle open.
        data, size = ctypes.c_void_p(), ctypes.c_uint64()
        _capi.check(lib.mpspack_container_bytes(ptr, ctypes.byref(data), ctypes.byref(size)), what=self.name)
        buffer = (ctypes.c_char * size.value).from_address(data.value)
        buffer.owner = self._handle
        self._base = data.value
        self._map: np.ndarray | None = np.frombuffer(memoryview(buffer).toreadonly(), np.uint8)

    def to_dict(self) -> dict:
        """What `mpspack inspect --json` prints for this file."""
        return json.loads(json.dumps(self._report))

    # ---- data ------------------------------------------------------------------------------

    def _ptr(self) -> int:
        if self._handle is None:
            raise InvalidArgument(f"{self.name}: the container is closed")
        return self._handle.ptr

    def _mapping(self) -> np.ndarray:
        self._ptr()
        assert self._map is not None
        return self._map

    def segment_bytes(self, index: int) -> memoryview:
        """A read-only view of segment `index`'s bytes in the file's mapping (no copy)."""
        info = _capi.SegmentInfo()
        _capi.check(_capi.library().mpspack_container_segment(self._ptr(), index, ctypes.byref(info)),
                    what=self.name)
        begin = info.data - self._base if info.size else 0
        return memoryview(self._mapping())[begin:begin + info.size]

    def _weights_index(self, library) -> int:
        """The weights entry of `library` (name or index), or of the only one when None."""
        ptr = self._ptr()
        lib = _capi.library()
        if library is None:
            if len(self.weights) == 1:
                return 0
            if not self.weights:
                raise NoConstantsTable(f"{self.name}: the container holds no weights")
            raise InvalidArgument(f"{self.name}: the container holds {len(self.weights)} weights entries; "
                                  f"say which library's with library=NAME or INDEX")
        index = ctypes.c_size_t()
        status = lib.mpspack_container_find_library(ptr, str(library).encode(), ctypes.byref(index))
        if status != _capi.OK:
            raise _capi.error(status, what=self.name)
        info = _capi.LibraryInfo()
        _capi.check(lib.mpspack_container_library(ptr, index.value, ctypes.byref(info)), what=self.name)
        if info.weights < 0:
            raise NoConstantsTable(f"{self.name}: library '{_capi.text(info.name)}' has no weights")
        return info.weights

    def _weights_segment(self, wi: int) -> tuple[int, int, int]:
        """(segment index, offset in the mapping, size) of weights entry `wi`, and its constants count."""
        lib = _capi.library()
        w = _capi.WeightsInfo()
        _capi.check(lib.mpspack_container_weights(self._ptr(), wi, ctypes.byref(w)), what=self.name)
        seg = _capi.SegmentInfo()
        _capi.check(lib.mpspack_container_segment(self._ptr(), w.segment, ctypes.byref(seg)), what=self.name)
        return (seg.data - self._base if seg.size else 0), seg.size, w.n_constants

    def weights_bytes(self, library=None) -> np.ndarray:
        """The whole weights segment of `library` (name or index; optional when there is one set of
        weights) as a read-only uint8 array over the file's mapping (no copy). Works with or
        without a constants table."""
        begin, size, _ = self._weights_segment(self._weights_index(library))
        return np.ndarray((size,), np.uint8, buffer=self._mapping(), offset=begin)

    def has_constants_table(self, library=None) -> bool:
        return self._weights_segment(self._weights_index(library))[2] > 0

    def _table(self, library, torch: bool):
        wi = self._weights_index(library)
        _, size, count = self._weights_segment(wi)
        if count == 0:
            raise NoConstantsTable(
                f"{self.name}: weights {wi} has no constants table (the input did not carry names, shapes and "
                f"dtypes; a .pt2 does, a plain model.so does not): its {size} bytes are "
                f"available as weights_bytes()")
        torch_module = None
        if torch:
            try:
                import torch as torch_module
            except ImportError as e:
                raise ImportError("constants(torch=True) needs torch, which cannot be imported here; "
                                  "constants() gives numpy arrays without it") from e
        return wi, count, torch_module

    def _constants(self, wi: int, count: int):
        """(info, array or None) of each constant of weights `wi`: None for one without storage (folded)."""
        lib = _capi.library()
        ptr = self._ptr()
        mapping = self._mapping()
        info = _capi.ConstantInfo()
        for k in range(count):
            _capi.check(lib.mpspack_container_constant(ptr, wi, k, ctypes.byref(info)), what=self.name)
            name = _capi.text(info.name)
            if info.from_folded or not info.data:
                yield name, None, info.dtype
                continue
            dt = _dtypes.get(info.dtype)
            if dt is None:  # the C library's validator refuses unknown dtypes on open: not reached
                raise FormatError(f"{self.name}: constant '{name}' has dtype {info.dtype}, which mpspack does not know")
            size = dt.itemsize
            shape = tuple(info.shape[i] for i in range(info.ndim))
            strides = tuple(info.stride[i] * size for i in range(info.ndim))
            offset = info.data - self._base + info.storage_offset * size
            yield name, np.ndarray(shape, dt.numpy, buffer=mapping, offset=offset, strides=strides), info.dtype

    def constants(self, library=None, *, torch: bool = False) -> dict:
        """name -> read-only array viewing the file's mapping (no copy), shaped by the constants
        table (dtype, shape, strides, storage offset). bf16 comes as its raw uint16 bit pattern.
        With torch=True, torch tensors over the same memory (bf16 as torch.bfloat16); the tensors
        must not be written to. Folded constants (no storage) are left out. `library` (name or
        index) picks the weights when the container holds several. Raises NoConstantsTable when
        the input carried no table (a plain model.so): the segment's bytes are then available
        from weights_bytes(). The arrays keep the file mapped after close()."""
        wi, count, torch_module = self._table(library, torch)
        return {name: (_as_torch(a, code, torch_module) if torch_module is not None else a)
                for name, a, code in self._constants(wi, count) if a is not None}

    def constant(self, name: str, library=None, *, torch: bool = False):
        """One constant by name (see constants())."""
        wi, count, torch_module = self._table(library, torch)
        for n, a, code in self._constants(wi, count):
            if n == name and a is not None:
                return _as_torch(a, code, torch_module) if torch_module is not None else a
        raise KeyError(f"{self.name}: no constant named '{name}' with storage")

    # ---- integrity -------------------------------------------------------------------------

    def verify(self, *, check: bool = True) -> dict:
        """`mpspack verify --json`'s report, from the same check: every segment's XXH3-64 (and its
        chunks') and every padding byte (the header checksum and the structure were checked on open).
        When the file is damaged raises FormatError listing the problems, with the report as its
        `report`, unless check=False (then the report says "ok": false)."""
        report = ctypes.c_void_p()
        status = _capi.library().mpspack_container_verify(self._ptr(), ctypes.byref(report))
        if status not in (_capi.OK, _capi.ERR_CHECK_FAILED):
            err = _capi.error(status, self.name)
            _capi.take_string(report)
            raise err
        parsed = json.loads(_capi.take_string(report))
        if status == _capi.ERR_CHECK_FAILED and check:
            err = FormatError("; ".join(parsed.get("problems") or [f"{self.name}: damaged"]))
            err.report = parsed
            raise err
        return parsed

    # ---- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Drops this object's hold on the file. The C handle is closed when the last array viewing
        its mapping is gone too (each holds it), so views taken before stay readable."""
        self._handle = None
        self._map = None

    def __enter__(self) -> Container:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<mpspack.Container {self.name!r}: {len(self.segments)} segments, {len(self.libraries)} libraries, "
                f"{len(self.weights)} weights>") if self._handle is not None else f"<mpspack.Container {self.name!r} closed>"


def _as_torch(arr: np.ndarray, code: int, torch):
    with warnings.catch_warnings():
        # The mapping is read-only; torch warns that it cannot express that. The tensors must not be written.
        warnings.simplefilter("ignore", UserWarning)
        if code == _dtypes.BF16:
            return torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(arr)


def open(path: str | os.PathLike) -> Container:  # noqa: A001 - mpspack.open, as the README says
    """Opens a container through the C API: checks its header, metadata and structure (not the
    segments' hashes: see Container.verify()) and maps it read-only. Raises FormatError for a file
    that is not a container or is damaged (the message names the file and the rule, as `mpspack
    inspect` prints it); a path that cannot be opened raises the matching OSError, which is also an
    mpspack.OpenError: FileNotFoundError (mpspack.NotFoundError), IsADirectoryError for a folder
    (mpspack.IsAFolderError, also a FormatError), PermissionError (mpspack.AccessError)."""
    return Container(path)
