"""Plain data the app needs from files and from the core, without Textual.

Each function here runs in a worker thread: the run file's reasons, the stale
labels (``ragtriage.core.staleness``) and the chunk picker's search index
(``ragtriage.tui.picker_index``: folded, stemmed, with a fuzzy fallback).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from ..core.errors import InputError, Problem
from ..core.staleness import Fix, StaleEntry, StaleReport

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.schema import Case
    from .picker_index import PickerIndex

__all__ = [
    "Proposal",
    "StaleEntry",
    "build_index",
    "find_stale",
    "held_back",
    "point_corpus",
    "preview_cases",
    "proposal",
    "read_reasons",
    "remembered_spans",
]


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


@dataclass(frozen=True)
class Proposal:
    """What the engine proposes for one stale label, as ``ragtriage stale`` prints it.

    ``ids`` take the label's place in the case's ``expected``; ``expect_all`` adds
    ``expect: all`` (a text split over several chunks); ``auto`` is what ``stale --fix``
    applies by itself. A review label with several alternatives has no proposal: a person
    picks one."""

    ids: tuple[str, ...]
    expect_all: bool = False
    auto: bool = False


def proposal(entries: Sequence[StaleEntry], entry: StaleEntry) -> Proposal | None:
    """The engine's proposal for ``entry``, judged with the other stale labels ``entries``.

    An automatic fix is the target :meth:`StaleReport.settle` gives (the one ``--fix``
    writes); settle runs on copies, so the entries shown are not changed. A review label
    proposes every candidate with ``expect: all`` when the engine says so (a split), its
    only candidate when it has one, else nothing."""
    if entry.fix == Fix.AUTO:
        copies = [dataclasses.replace(x) for x in entries]
        if not any(x.case == entry.case and x.label == entry.label for x in copies):
            copies.append(dataclasses.replace(entry))
        target = StaleReport(copies).settle().get((entry.case, entry.label))
        if target is not None:
            return Proposal((target,), auto=True)
    ids = tuple(cid for cid, _ in entry.candidates)
    if entry.expect == "all" and len(ids) > 1:
        return Proposal(ids, expect_all=True)
    if len(ids) == 1:
        return Proposal(ids)
    return None


def held_back(entries: Sequence[StaleEntry], entry: StaleEntry, ids: Sequence[str]) -> list[StaleEntry]:
    """The stale labels that keep ``ids`` from replacing ``entry``'s label.

    A label is keyed by chunk id: while another case still expects one of ``ids`` with its
    old text (a stale label not yet resolved), writing the new text under that id would make
    that case look fine and leave this one stale. The rule of :meth:`StaleReport.settle`,
    which holds such fixes back from ``stale --fix``; the label's own id is exempt (every
    case expecting it has the same verdict). Unlike ``--fix``, which applies every automatic
    fix at once, the app applies one label at a time: another case's automatic fix not yet
    applied holds the id back too."""
    want = set(ids)
    return [x for x in entries if x.label in want and x.label != entry.label]


def point_corpus(doc: TestSetDocument, chunks: str | Path) -> str | None:
    """Point the test set's ``corpus:`` at ``chunks`` (relative to the test set, as
    ``stale --fix`` writes it) when it names another file; returns the new value, else None."""
    chunks = Path(chunks)
    own = doc.corpus_path
    if own is not None and own.resolve() == chunks.resolve():
        return None
    value = Path(os.path.relpath(chunks.resolve(), Path(doc.path).resolve().parent)).as_posix()
    doc.update_settings(corpus=value)
    return value


_TOKEN = re.compile(r"\S+")
_EDGE = re.compile(r"^\W+|\W+$")


def _words(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    keys: list[str] = []
    spans: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        keys.append(_EDGE.sub("", m.group().casefold()) or m.group())
        spans.append(m.span())
    return keys, spans


def remembered_spans(remembered: str, text: str, min_words: int = 3) -> list[tuple[int, int]]:
    """Character spans of ``text`` (a candidate chunk) that hold runs of the ``remembered``
    text, word for word (case and punctuation at word edges ignored, line breaks free), so
    a screen can highlight them: the whole text for a chunk holding it, a head or tail for
    the pieces of a split, the unchanged runs of an edited text. Runs shorter than
    ``min_words`` are left out unless the remembered text is that short."""
    a, _ = _words(remembered)
    b, where = _words(text)
    if not a or not b:
        return []
    least = min(min_words, len(a))
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    spans: list[tuple[int, int]] = []
    for block in matcher.get_matching_blocks():
        if block.size < least:
            continue
        start, end = where[block.b][0], where[block.b + block.size - 1][1]
        if spans and text[spans[-1][1] : start].isspace():
            spans[-1] = (spans[-1][0], end)  # two runs with only whitespace between: one
        else:
            spans.append((start, end))
    return spans


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
