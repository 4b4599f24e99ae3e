"""``results:PATH`` — answers produced elsewhere (system-results JSONL, formats.md §3).

``PATH`` is one file, a folder of parts or a glob, parts possibly ``.gz`` / ``.zst``
(:mod:`.batch`). A line that is not a JSON object, has no string ``id``, repeats an id
(in any part: the error names both places) or has a field of the wrong type is a
located error (exit 2, nothing written). Ids that are not in the test set are reported
as warnings; a case with no line becomes that case's ``error``.

``ragtriage run`` scores such a source in one streamed pass (:mod:`..columnar`); the
per-case path (``sweep``, the app, the API with a callback) reads it whole on first use.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import InputError, Problem
from . import CaseError, Context, coerce_result
from .batch import Part, lines, parts_of

if TYPE_CHECKING:
    from ..schema import Case

MAX_PROBLEMS = 50


class Reader:
    """One pass over a results source: each good line as ``(part, line, result)``;
    problems and warnings collected (reading stops after :data:`MAX_PROBLEMS`)."""

    def __init__(self, parts: list[Part], known_ids: Collection[str] | None = None):
        self.parts = parts
        self.known = known_ids
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.first: dict[str, tuple[str, int]] = {}  # id -> (part, line) where it was given

    def _problem(self, name: str, line: int | None, msg: str, **where: Any) -> None:
        self.problems.append(Problem(name, line, msg, **where))

    def take(self, name: str, lineno: int, obj: object) -> dict[str, Any] | None:
        """The result a parsed line holds (None: a problem, a warning or a repeat)."""
        if not isinstance(obj, dict):
            self._problem(name, lineno, f"expected a JSON object, got {type(obj).__name__}")
            return None
        cid = obj.get("id")
        if not isinstance(cid, str) or not cid:
            self._problem(name, lineno, "is required (the case id, a string)", field="id")
            return None
        seen = self.first.get(cid)
        if seen is not None:
            where = f"line {seen[1]}" if seen[0] == name else f"{seen[0]}:{seen[1]}"
            self._problem(name, lineno, f"duplicate id (first at {where})", case=cid, field="id")
            return None
        try:
            res = coerce_result(obj)
        except ValueError as e:
            field, _, msg = str(e).partition(": ")
            self._problem(name, lineno, msg or str(e), case=cid, field=field)
            return None
        self.first[cid] = (name, lineno)
        if self.known is not None and cid not in self.known:
            self.warnings.append(
                Problem(name, lineno, "not in the test set; line ignored", case=cid, severity="warning")
            )
            return None
        return res

    def __iter__(self) -> Iterator[tuple[str, int, dict[str, Any]]]:
        loads = orjson.loads
        for part in self.parts:
            name = part.name
            for lineno, raw in lines(part):
                try:
                    obj = loads(raw)
                except orjson.JSONDecodeError as e:
                    self._problem(name, lineno, f"not valid JSON ({e.args[0] if e.args else e})")
                else:
                    res = self.take(name, lineno, obj)
                    if res is not None and not self.problems:
                        yield name, lineno, res
                if len(self.problems) >= MAX_PROBLEMS:
                    self._problem(name, None, "too many problems; stopped reading")
                    return

    def check(self) -> None:
        if self.problems:
            raise InputError(self.problems)


def read_results(
    path: str | Path, known_ids: Collection[str] | None = None
) -> tuple[dict[str, dict[str, Any]], list[Problem]]:
    """id -> result dict, and warnings (unknown ids). Raises InputError on bad lines."""
    reader = Reader(parts_of(str(path)), known_ids)
    out = {res["id"]: res for _, _, res in reader}
    reader.check()
    return out, reader.warnings


class ResultsSystem:
    def __init__(self, path: str, ctx: Context):
        self.path = path
        self.spec = f"results:{path}"
        self.parts = parts_of(path)  # a missing file, a FIFO, an empty folder: refused now
        self.ids = {c.id for c in ctx.doc.cases}
        self._results: dict[str, dict[str, Any]] | None = None
        self.warnings: list[Problem] = []

    @property
    def results(self) -> dict[str, dict[str, Any]]:
        """Every result, read on first use (the columnar path streams instead)."""
        if self._results is None:
            reader = Reader(self.parts, self.ids)
            self._results = {res["id"]: res for _, _, res in reader}
            reader.check()
            self.warnings.extend(reader.warnings)
        return self._results

    def reader(self, known_ids: Iterable[str] | None = None) -> Reader:
        """A fresh pass over the source (for :mod:`..columnar`)."""
        return Reader(self.parts, self.ids if known_ids is None else set(known_ids))

    def prepare(self) -> None:
        self.results  # noqa: B018  (read now: a bad line is exit 2 before any output is opened)

    def get(self, case: Case) -> dict[str, Any]:
        res = self.results.get(case.id)
        if res is None:
            raise CaseError(f"no result for this case in {self.path}")
        return res

    async def ask(self, case: Case, k: int) -> dict[str, Any]:
        return self.get(case)

    def ask_sync(self, case: Case, k: int) -> dict[str, Any]:
        return self.get(case)

    def estimate_tokens(self, case: Case, k: int) -> int:
        return 0

    async def aclose(self) -> None:
        pass
