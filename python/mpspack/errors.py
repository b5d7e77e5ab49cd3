"""The package's exceptions."""

from __future__ import annotations


class FormatError(ValueError):
    """A file that is not a container, or a damaged one: the message names the file and the rule
    of docs/FORMAT.md it breaks ("m.mpk: rule H6: file is ... bytes but the header records ...")."""


class NoConstantsTable(LookupError):
    """The container has weights but no constants table (a plain model.so carries no names, shapes
    or dtypes): its bytes are still available through Container.weights_bytes()."""


class CommandError(RuntimeError):
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
