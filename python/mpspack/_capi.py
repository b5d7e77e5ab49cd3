"""The C API (libpack/include/mpspack/mpspack.h) through ctypes: finding and loading libmpspack_c.so.0, its
structs and prototypes, and turning a failed call into the package's exception.

The library is loaded on first use (library()), not at import, so `import mpspack` works where it is missing and
the error then lists where it was looked for. _MODE says with which dlopen flags, and why.

ctypes.CDLL releases the GIL for the duration of every foreign call, so a model running in one Python thread does
not stop the others.
"""

from __future__ import annotations

import ctypes
import errno as _errno
import os
import pathlib
import threading
from ctypes import (POINTER, Structure, c_char_p, c_double, c_int32, c_int64, c_size_t, c_uint16, c_uint32,
                    c_uint64, c_void_p)

from . import errors

SONAME = "libmpspack_c.so.0"
API_VERSION = 1  # MPSPACK_C_API_VERSION this package was written against

# mpspack_status
OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_INVALID_HANDLE = 2
ERR_NOT_FOUND = 3
ERR_IO = 4
ERR_NOT_CONTAINER = 5
ERR_CORRUPT = 6
ERR_UNSUPPORTED = 7
ERR_RUNTIME = 8
ERR_CHECK_FAILED = 9
ERR_OUT_OF_MEMORY = 10
ERR_INTERNAL = 11

MEMORY_HOST = 0
MEMORY_DEVICE = 1

_size_t_p = POINTER(c_size_t)
_char_pp = POINTER(c_char_p)


class HeaderInfo(Structure):
    _fields_ = [("version_major", c_uint16), ("version_minor", c_uint16), ("header_size", c_uint32),
                ("flags", c_uint32), ("metadata_offset", c_uint64), ("metadata_size", c_uint64),
                ("data_offset", c_uint64), ("data_size", c_uint64), ("file_size", c_uint64), ("checksum", c_uint64)]


class Counts(Structure):
    _fields_ = [("sources", c_size_t), ("segments", c_size_t), ("libraries", c_size_t), ("weights", c_size_t),
                ("examples", c_size_t)]


class SegmentInfo(Structure):
    _fields_ = [("kind", c_int32), ("kind_name", c_char_p), ("name", c_char_p), ("offset", c_uint64),
                ("size", c_uint64), ("alignment", c_uint64), ("xxh3", c_uint64), ("data", c_void_p)]


class LibraryInfo(Structure):
    _fields_ = [("name", c_char_p), ("device", c_char_p), ("abi", c_char_p), ("machine", c_char_p),
                ("flavour", c_int32), ("flavour_name", c_char_p), ("segment", c_uint32), ("weights", c_int32),
                ("cubins", POINTER(c_uint32)), ("n_cubins", c_size_t), ("needed", _char_pp), ("n_needed", c_size_t),
                ("dropped_needed", _char_pp), ("n_dropped_needed", c_size_t), ("imports", _char_pp),
                ("n_imports", c_size_t), ("original_size", c_uint64), ("original_sha256", c_char_p)]


class WeightsInfo(Structure):
    _fields_ = [("segment", c_uint32), ("n_constants", c_size_t)]


class ConstantInfo(Structure):
    _fields_ = [("name", c_char_p), ("fqn", c_char_p), ("dtype", c_int32), ("dtype_name", c_char_p),
                ("ndim", c_size_t), ("shape", POINTER(c_int64)), ("stride", POINTER(c_int64)),
                ("storage_offset", c_int64), ("offset", c_uint64), ("nbytes", c_uint64), ("type", c_int32),
                ("from_folded", c_int32), ("data", c_void_p)]


class Tensor(Structure):
    _fields_ = [("dtype", c_int32), ("ndim", c_int32), ("shape", POINTER(c_int64)), ("data", c_void_p),
                ("nbytes", c_uint64), ("memory", c_int32), ("name", c_char_p)]


class ExampleInfo(Structure):
    _fields_ = [("library", c_size_t), ("n_inputs", c_size_t), ("n_outputs", c_size_t)]


class BuildOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("weights", _char_pp), ("n_weights", c_size_t),
                ("keep_libtorch", c_int32), ("example_inputs", _char_pp), ("n_example_inputs", c_size_t),
                ("example_outputs", _char_pp), ("n_example_outputs", c_size_t), ("fsync", c_int32)]


class LoadOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("library", c_char_p), ("device", c_char_p),
                ("verify_weights", c_int32), ("copy_weights", c_int32), ("threads", c_uint32),
                ("tf32_convolutions", c_int32)]


class BenchOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("warmup", c_uint64), ("warmup_ms", c_double), ("iterations", c_uint64),
                ("duration_s", c_double), ("repetitions", c_uint64), ("percentiles", POINTER(c_double)),
                ("n_percentiles", c_size_t), ("cold", c_int32), ("include_transfers", c_int32),
                ("cuda_graph", c_int32), ("inputs", _char_pp), ("n_inputs", c_size_t), ("has_seed", c_int32),
                ("seed", c_uint64), ("expects", _char_pp), ("n_expects", c_size_t)]


_c = c_void_p  # an opaque handle
# name: (argument types); every call returns mpspack_status except those in _RESTYPES.
_PROTOTYPES = {
    "mpspack_last_error": (),
    "mpspack_last_errno": (),
    "mpspack_status_name": (c_int32,),
    "mpspack_version": (POINTER(c_char_p),),
    "mpspack_api_version": (POINTER(c_int32),),
    "mpspack_string_free": (c_void_p,),
    "mpspack_dtype_info": (c_int32, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_uint32), POINTER(c_char_p)),
    "mpspack_build_options_init": (POINTER(BuildOptions),),
    "mpspack_build": (_char_pp, c_size_t, c_char_p, POINTER(BuildOptions)),
    "mpspack_container_open": (c_char_p, POINTER(_c)),
    "mpspack_container_close": (_c,),
    "mpspack_container_header": (_c, POINTER(HeaderInfo)),
    "mpspack_container_info": (_c, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_char_p)),
    "mpspack_container_bytes": (_c, POINTER(c_void_p), POINTER(c_uint64)),
    "mpspack_container_counts": (_c, POINTER(Counts)),
    "mpspack_container_segment": (_c, c_size_t, POINTER(SegmentInfo)),
    "mpspack_container_library": (_c, c_size_t, POINTER(LibraryInfo)),
    "mpspack_container_find_library": (_c, c_char_p, _size_t_p),
    "mpspack_container_weights": (_c, c_size_t, POINTER(WeightsInfo)),
    "mpspack_container_constant": (_c, c_size_t, c_size_t, POINTER(ConstantInfo)),
    "mpspack_container_example": (_c, c_size_t, POINTER(ExampleInfo)),
    "mpspack_container_example_tensor": (_c, c_size_t, c_int32, c_size_t, POINTER(Tensor)),
    "mpspack_container_manifest_json": (_c, POINTER(c_void_p)),
    "mpspack_container_verify": (_c, POINTER(c_void_p)),
    "mpspack_verify": (c_char_p, POINTER(c_void_p)),
    "mpspack_load_options_init": (POINTER(LoadOptions),),
    "mpspack_model_load": (_c, POINTER(LoadOptions), POINTER(_c)),
    "mpspack_model_load_file": (c_char_p, POINTER(LoadOptions), POINTER(_c)),
    "mpspack_model_close": (_c,),
    "mpspack_model_io_count": (_c, _size_t_p, _size_t_p),
    "mpspack_model_input": (_c, c_size_t, POINTER(Tensor)),
    "mpspack_model_output": (_c, c_size_t, POINTER(Tensor)),
    "mpspack_model_info": (_c, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_char_p)),
    "mpspack_model_run": (_c, POINTER(Tensor), c_size_t, POINTER(_c)),
    "mpspack_model_run_into": (_c, POINTER(Tensor), c_size_t, POINTER(Tensor), c_size_t),
    "mpspack_model_run_device": (_c, POINTER(Tensor), c_size_t, POINTER(_c)),
    "mpspack_outputs_count": (_c, _size_t_p),
    "mpspack_outputs_get": (_c, c_size_t, POINTER(Tensor)),
    "mpspack_outputs_free": (_c,),
    "mpspack_bench_options_init": (POINTER(BenchOptions),),
    "mpspack_bench": (c_char_p, POINTER(LoadOptions), POINTER(BenchOptions), POINTER(c_void_p)),
    "mpspack_model_bench": (_c, POINTER(BenchOptions), POINTER(c_void_p)),
}
_RESTYPES = {"mpspack_last_error": c_char_p, "mpspack_status_name": c_char_p, "mpspack_string_free": None}


def candidates() -> list[str]:
    """Where the C API's library is looked for, in order: $MPSPACK_LIBRARY; beside the package
    (<package>/_lib/libmpspack_c.so.0, for a copy that carries it); lib/ of the prefix the package is installed
    in (P/lib for the package under P/lib/python/mpspack or P/lib/python3.X/site-packages/mpspack: the tree of
    `cmake --install` and the .deb); the build tree of a source checkout (build/lib, build/ beside python/); then the
    bare name, which the system's loader resolves (LD_LIBRARY_PATH, ld.so.cache)."""
    found: list[str] = []
    env = os.environ.get("MPSPACK_LIBRARY")
    if env:
        found.append(env)
    # resolve(): the .deb links the package from where Python looks to its place in the tree (/opt/mpspack).
    package = pathlib.Path(__file__).resolve().parent
    found.append(str(package / "_lib" / SONAME))
    for folder in list(package.parents)[1:3]:
        if folder.name in ("lib", "lib64"):
            found.append(str(folder / SONAME))
            break
    checkout = package.parent.parent
    if (checkout / "libpack" / "include" / "mpspack" / "mpspack.h").is_file():
        found += [str(checkout / "build" / "lib" / SONAME), str(checkout / "build" / SONAME)]
    found.append(SONAME)
    return found


# How the library is opened: RTLD_LOCAL, ctypes' default. Nothing of it enters the process's global scope: the C
# API binds the model libraries it loads to its own shim itself (their aoti_torch_* slots written, their
# constructors run after that), so it needs no global symbols, and a library another runtime loads later (torch's
# AOTInductor models, bound to libtorch's aoti_torch_* through the global scope) cannot be bound to mpspack's.
_MODE = os.RTLD_NOW | os.RTLD_LOCAL
_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_path: str | None = None


def library() -> ctypes.CDLL:
    """The loaded C API library (loaded on the first call; candidates() says where from)."""
    global _lib, _path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        env = os.environ.get("MPSPACK_LIBRARY")
        for c in candidates():
            if os.sep in c and not os.path.exists(c):
                if c == env:  # named explicitly: not there is an error, not a reason to look elsewhere
                    raise errors.LibraryNotFound(f"MPSPACK_LIBRARY={env}: no such file")
                continue
            try:
                lib = ctypes.CDLL(c, mode=_MODE)
            except OSError as e:
                if c == env:
                    raise errors.LibraryNotFound(f"MPSPACK_LIBRARY={env}: {e}") from None
                tried.append(f"{c} ({e})")
                continue
            _bind(lib, c)
            _path = c
            _lib = lib
            return lib
        raise errors.LibraryNotFound(
            f"the mpspack C API library {SONAME} was not found: set MPSPACK_LIBRARY, install it beside this package "
            f"or in its prefix's lib/ (looked in: {', '.join(candidates())})")


def library_path() -> str:
    """The file the C API library was loaded from (loading it if needed)."""
    library()
    assert _path is not None
    return _path


def _bind(lib: ctypes.CDLL, where: str) -> None:
    for name, argtypes in _PROTOTYPES.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise errors.LibraryNotFound(f"{where} lacks {name}: not the C API this package was written for") from None
        f.argtypes = argtypes
        f.restype = _RESTYPES.get(name, c_int32)
    v = c_int32()
    lib.mpspack_api_version(ctypes.byref(v))
    if v.value != API_VERSION:
        raise errors.LibraryNotFound(f"{where} implements C API version {v.value}; this package was written for "
                                     f"version {API_VERSION}")


def last_errno() -> int:
    """The OS error (errno) behind this thread's last failed call on a file, 0 when it was no OS error."""
    return int(library().mpspack_last_errno())


def message() -> str:
    """The calling thread's last error message from the library."""
    m = library().mpspack_last_error()
    return m.decode("utf-8", errors="replace") if m else ""


def status_name(status: int) -> str:
    return library().mpspack_status_name(status).decode()


def error(status: int, filename: str | None = None, what: str | None = None, opening: bool = False) -> errors.Error:
    """The package's exception for a failed call's status and this thread's message. `filename`: the file the
    call opened, for the OSError subclasses; `what`: a prefix for a message that would not say what it is
    about; `opening`: the call's only argument was that file (mpspack_container_open), so a refusal of the
    argument is a refusal of the file: a FIFO, a socket or a device is no container (FormatError)."""
    msg = message() or status_name(status)
    if what and not msg.startswith(what):
        msg = f"{what}: {msg}"
    if status in (ERR_NOT_FOUND, ERR_IO):
        code = last_errno() or (_errno.ENOENT if status == ERR_NOT_FOUND else 0)
        about_file = filename is not None and msg.startswith(f"{filename}: ")
        return errors.os_error(code, filename if about_file else None, msg)
    if opening and status == ERR_INVALID_ARGUMENT:
        return errors.FormatError(msg)
    return errors.from_status(status, msg)


def check(status: int, filename: str | None = None, what: str | None = None) -> None:
    if status != OK:
        raise error(status, filename, what)


def take_string(p: c_void_p) -> str:
    """The text of a char* the API returned for the caller to free, freed."""
    if not p.value:
        return ""
    try:
        return ctypes.string_at(p.value).decode("utf-8", errors="replace")
    finally:
        library().mpspack_string_free(p)


def strings(values) -> tuple[ctypes.Array | None, int]:
    """A const char* const* array of `values` (str or path), and its length; (None, 0) when empty."""
    values = [os.fsencode(v) for v in values]
    if not values:
        return None, 0
    return (c_char_p * len(values))(*values), len(values)


def text(p: bytes | None) -> str:
    return p.decode("utf-8", errors="surrogateescape") if p is not None else ""


def string_list(p, n: int) -> list[str]:
    return [text(p[i]) for i in range(n)]
