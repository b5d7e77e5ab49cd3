"""mpspack from Python, in-process, on mpspack's C API (libmpspack_c.so.0, loaded through ctypes).

    import mpspack
    mpspack.build("model.pt2", "model.mpk")          # `mpspack build --json`'s report
    with mpspack.open("model.mpk") as c:            # header, metadata and structure checked by the C library
        c.libraries, c.segments, c.weights          # as `mpspack inspect --json` describes them
        w = c.constants()["fc1_weight"]             # read-only NumPy view of the file's mapping, no copy
        c.verify()                                  # every segment's XXH3-64 and padding, as `mpspack verify`
    with mpspack.load("model.mpk") as model:        # the library loaded on its device, as `mpspack run` does
        y, = model(x)                               # NumPy arrays (or torch tensors, by DLPack) in and out
        model.bench(iterations=100)                 # `mpspack run --bench --json`'s report
    mpspack.run("model.mpk", inputs=[x])            # the mpspack executable's `run --json` report

The GIL is released while the C library works (ctypes.CDLL releases it for every foreign call). docs/PYTHON.md
describes the package; mpspack.library_path() says which C library it loaded.
"""

from ._capi import candidates as library_candidates
from ._capi import library_path
from .builder import build
from .cli import find_executable, installed_executables, run
from .container import Container, open
from .errors import (AccessError, CheckFailed, CommandError, Error, FormatError, InternalError, InvalidArgument,
                     IsAFolderError, LibraryNotFound, ModelError, NoConstantsTable, NotFoundError, OpenError,
                     OutOfMemory, UnsupportedError)
from .model import Model, TensorSpec, load

__version__ = "0.1.0"
__all__ = ["open", "Container", "load", "Model", "TensorSpec", "build", "run", "find_executable",
           "installed_executables", "library_path", "library_candidates", "Error", "FormatError", "InvalidArgument",
           "UnsupportedError", "ModelError", "CheckFailed", "OutOfMemory", "InternalError", "LibraryNotFound",
           "CommandError", "NoConstantsTable", "OpenError", "NotFoundError", "IsAFolderError", "AccessError",
           "__version__"]
