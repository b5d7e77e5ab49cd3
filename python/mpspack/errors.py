"""The package's own exceptions. Each derives from mpspack.Error, and also from the built-in
exception a caller would otherwise catch (ValueError, LookupError, RuntimeError, and the OSError
subclasses for a file that cannot be opened), so either kind of `except` works."""

from __future__ import annotations

import errno
import os


class Error(Exception):
    """Base of the package's own exceptions (the classes below)."""


class FormatError(Error, ValueError):
    """A file that is not a container, or a damaged one: the message names the file and the rule
    of docs/FORMAT.md it breaks ("m.mpk: rule H6: file is ... bytes but the header records ...")."""


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
    """A file that cannot be opened. `errno`, `strerror` and `filename` are set as on any OSError;
    the message is one line naming the file first, as FormatError's ("m.mpk: no such file")."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class NotFoundError(OpenError, FileNotFoundError):
    """The file does not exist (also a FileNotFoundError)."""


class IsAFolderError(OpenError, IsADirectoryError, FormatError):
    """The path is a folder (also an IsADirectoryError; and a FormatError, as a folder is no
    container, which is what mpspack.open raised for it before)."""


class AccessError(OpenError, PermissionError):
    """The file may not be read (also a PermissionError)."""


_BY_ERRNO = {errno.ENOENT: NotFoundError, errno.ENOTDIR: NotFoundError, errno.EISDIR: IsAFolderError,
             errno.EACCES: AccessError, errno.EPERM: AccessError}


def open_error(code: int, filename: str, message: str | None = None) -> OpenError:
    """The OpenError subclass matching errno `code`, for `filename`."""
    return _BY_ERRNO.get(code, OpenError)(code, message or os.strerror(code), filename)
