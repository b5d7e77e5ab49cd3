"""The package's own exceptions. Each derives from mpspack.Error, and also from the built-in
exception a caller would otherwise catch (ValueError, LookupError, RuntimeError, MemoryError, ImportError, and the
OSError subclasses for a file that cannot be opened), so either kind of `except` works. Their messages are the C
API's, which are the lines the `mpspack` tool prints for the same problem."""

from __future__ import annotations

import errno


class Error(Exception):
    """Base of the package's own exceptions (the classes below)."""


class FormatError(Error, ValueError):
    """A file that is not a container (or not a model library or .pt2 where one is read), or a damaged one: the
    message, the C library's, names the file and the rule of docs/FORMAT.md it breaks (by its id), or the segment
    whose hash does not match."""


class InvalidArgument(Error, ValueError):
    """An argument the C API refused: a wrong dtype, shape, size or count of a model's inputs, an unknown library
    or device, an option out of its range, or a closed model or container. The message names the argument."""


class UnsupportedError(Error, RuntimeError):
    """A valid container that cannot run here: a library for another device kind or machine, a shim function this
    build lacks, no backend (or no usable device) for the device asked for."""


class ModelError(Error, RuntimeError):
    """The model or its device failed while loading or running (the model's own message went to stderr)."""


class CheckFailed(Error, ValueError):
    """A check ran and said no: a model's outputs did not match their reference (`report` holds the report)."""

    report: dict | None = None


class OutOfMemory(Error, MemoryError):
    """mpspack could not allocate memory."""


class InternalError(Error, RuntimeError):
    """A bug in mpspack (please report it with the message)."""


class LibraryNotFound(Error, ImportError):
    """The C API library (libmpspack_c.so.0) was not found or is not the one this package was written for; the
    message says where it was looked for."""


class NoConstantsTable(Error, LookupError):
    """The container has weights but no constants table (a plain model.so carries no names, shapes
    or dtypes): its bytes are still available through Container.weights_bytes()."""


class CommandError(Error, RuntimeError):
    """The mpspack executable exited non-zero. `returncode` is its exit status (1: the check said
    no, 2: it could not do it), `stderr` what it wrote there (one line per problem), `report` the
    parsed --json report when it printed one (verify and run print one even when they say no)."""

    def __init__(self, argv: list[str], returncode: int, stderr: str, report: dict | None = None):
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr = stderr
        self.report = report
        line = next((l for l in reversed(stderr.splitlines()) if l.strip()), "(nothing on stderr)")
        super().__init__(f"{' '.join(self.argv[:2])} exited with status {returncode}: {line}")


class OpenError(Error, OSError):
    """A file that cannot be opened or read. `errno`, `strerror` and `filename` are set as on any OSError;
    the message is one line naming the file first, as FormatError's ("m.mpk: cannot open: No such file or
    directory")."""

    _text: str | None = None  # the C API's line, when it did not start with the file's name

    def __str__(self) -> str:
        if self._text is not None or self.filename is None:
            return self._text if self._text is not None else str(self.strerror)
        return f"{self.filename}: {self.strerror}"


class NotFoundError(OpenError, FileNotFoundError):
    """The file does not exist (also a FileNotFoundError)."""


class IsAFolderError(OpenError, IsADirectoryError, FormatError):
    """The path is a folder (also an IsADirectoryError; and a FormatError, as a folder is no
    container)."""


class AccessError(OpenError, PermissionError):
    """The file may not be read (also a PermissionError)."""


_BY_ERRNO = {errno.ENOENT: NotFoundError, errno.ENOTDIR: NotFoundError, errno.EISDIR: IsAFolderError,
             errno.EACCES: AccessError, errno.EPERM: AccessError}


def os_error(code: int, filename: str | None, message: str) -> OpenError:
    """The OpenError subclass matching errno `code` (OpenError itself for 0 or another code) for `filename`, with
    `message` (the C API's line, which starts with the file's name) as its text."""
    if filename is not None and message.startswith(f"{filename}: "):
        return _BY_ERRNO.get(code, OpenError)(code, message[len(filename) + 2:], filename)
    err = _BY_ERRNO.get(code, OpenError)(code, message, filename)
    err._text = message
    return err


_BY_STATUS = {1: InvalidArgument, 2: InvalidArgument, 5: FormatError, 6: FormatError, 7: UnsupportedError,
              8: ModelError, 9: CheckFailed, 10: OutOfMemory, 11: InternalError}


def from_status(status: int, message: str) -> Error:
    """The exception for a C API status (mpspack_status) other than the file-opening ones."""
    return _BY_STATUS.get(status, InternalError)(message)
