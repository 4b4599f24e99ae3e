"""Problems found in user files, and the exceptions that carry them.

Every reader reports bad input as a list of :class:`Problem` — file, line, case,
field and a message written for a person — never as a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    message: str
    case: str | None = None
    field: str | None = None
    severity: str = "error"  # "error" | "warning"

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [where]
        if self.case is not None:
            parts.append(f"case {self.case!r}")
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "case": self.case,
            "field": self.field,
            "message": self.message,
            "severity": self.severity,
        }


class InputError(Exception):
    """Bad input: carries every problem found, located."""

    def __init__(self, problems: list[Problem] | Problem):
        if isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class TestSetError(InputError):
    """A test set that cannot be loaded or saved; ``.problems`` says where and why."""

    __test__ = False  # not a pytest test class


class CorpusError(InputError):
    """A chunks file that cannot be read."""


class ConflictError(Exception):
    """The file changed on disk since it was loaded; saving would overwrite someone's work."""

    def __init__(self, path: str, message: str | None = None):
        self.path = path
        super().__init__(
            message
            or f"{path}: changed on disk since it was opened; not overwritten (reload it, or save elsewhere)"
        )
