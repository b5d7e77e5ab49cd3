"""mpspack: read mpspack containers (.mpk) from Python, and drive the mpspack executable.

    import mpspack
    with mpspack.open("model.mpk") as c:
        c.libraries, c.segments, c.weights    # as `mpspack inspect --json` describes them
        w = c.constants()["fc1_weight"]        # read-only numpy view of the file, no copy
        c.verify()                              # every segment's XXH3-64 and padding
    mpspack.build("model.so", "model.mpk")     # `mpspack build --json`'s report
    mpspack.run("model.mpk", inputs=[x])        # `mpspack run --json`'s report; x a path or numpy array

Pure Python on numpy, xxhash and flatbuffers' wire format (docs/FORMAT.md).
"""

from .cli import build, find_executable, installed_executables, run
from .container import Container, open
from .errors import (AccessError, CommandError, Error, FormatError, IsAFolderError, NoConstantsTable, NotFoundError,
                     OpenError)

__version__ = "0.1.0"
__all__ = ["open", "Container", "build", "run", "find_executable", "installed_executables", "Error", "FormatError",
           "CommandError", "NoConstantsTable", "OpenError", "NotFoundError", "IsAFolderError", "AccessError",
           "__version__"]
