"""Plain data the app needs from files and from the core, without Textual.

Each function here runs in a worker thread: the run file's reasons, the stale
labels (``ragtriage.core.staleness``) and the chunk picker's search index
(``ragtriage.tui.picker_index``: folded, stemmed, with a fuzzy fallback).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from ..core.errors import InputError, Problem
from ..core.staleness import StaleEntry

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.schema import Case
    from .picker_index import PickerIndex

__all__ = ["StaleEntry", "build_index", "find_stale", "preview_cases", "read_reasons"]


def read_reasons(path: str | Path) -> dict[str, str]:
    """case id -> diagnosis reason, from a run file (formats.md §4)."""
    path = Path(path)
    reasons: dict[str, str] = {}
    try:
        f = open(path, "rb")
    except OSError as e:
        raise InputError(Problem(str(path), None, f"run file not readable ({e.strerror or e})")) from None
    with f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise InputError(
                    Problem(str(path), lineno, "not valid JSON (a run file has one JSON object per line)")
                ) from None
            if isinstance(obj, dict) and obj.get("type", "case") == "case" and "id" in obj:
                reason = obj.get("reason")
                if isinstance(reason, str):
                    reasons[str(obj["id"])] = reason
    return reasons


def find_stale(doc: TestSetDocument, corpus: Corpus) -> list[StaleEntry]:
    """Every label of ``doc`` that is stale against the loaded ``corpus`` (staleness.md).

    ``unrecorded`` labels (no remembered text yet) are not stale: a save records them."""
    from ..core import staleness

    report = staleness.check(doc, corpus)  # the loaded corpus: no second read of the file
    return [e for e in report.stale if e.status != "unrecorded"]


def build_index(corpus: Corpus, language: str | None = None) -> PickerIndex:
    """The picker's search index over every chunk of ``corpus``, stemmed for ``language``
    (the test set's; slow on big corpora: call in a worker)."""
    from .picker_index import PickerIndex  # numpy, bm25s: imported by the worker that needs them

    return PickerIndex.build(corpus, language=language)


def preview_cases(path: str | Path, limit: int = 400, max_bytes: int = 1 << 18) -> list[Case]:
    """The first cases of a big test set, read from its first bytes only.

    Lets the app paint rows at once while the whole document loads in the
    background (seconds at 100k cases). Best effort: any surprise -> []."""
    import yaml

    from ..core.schema import Case

    try:
        with open(path, "rb") as f:
            head = f.read(max_bytes).decode("utf-8", errors="ignore").lstrip("\ufeff")
        m = re.search(r"(?m)^cases:[ \t]*(#.*)?\n", head)
        if not m:
            return []
        body = head[m.end() :]
        first = re.match(r"([ \t]*)- ", body)
        if not first:
            return []
        starts = [x.start() for x in re.finditer(rf"(?m)^{re.escape(first.group(1))}- ", body)]
        if len(starts) < 2:
            return []
        cut = starts[min(limit, len(starts) - 1)]  # the last item may be cut off: leave it out
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        items = yaml.load(body[:cut], Loader=loader)
        out = []
        for item in items or ():
            if not isinstance(item, dict):
                return []
            out.append(Case(**item))
        return out
    except Exception:
        return []
