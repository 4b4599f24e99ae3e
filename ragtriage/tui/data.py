"""Plain data the app needs from files and from the core, without Textual.

The first cases of a big test set read from its head, the chunk picker's search
index (built in a worker), and the stale review's proposals: what the engine
(``ragtriage.core.staleness``) proposes for a label, the hold-back rule, the
highlight of the remembered text, and what ``corpus:`` becomes on save.
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

from ..core.staleness import Fix, StaleEntry, StaleReport

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.schema import Case
    from ..core.search import LexicalIndex
    from .edits import Batch

__all__ = [
    "Proposal",
    "StaleEntry",
    "build_index",
    "LabelFix",
    "corpus_value",
    "fix_edits",
    "held_back",
    "preview_cases",
    "proposal",
    "remembered_spans",
    "settled",
]


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


def settled(entries: Sequence[StaleEntry]) -> dict[tuple[str, str], str]:
    """(case, label) -> target of the automatic fixes that are safe together, as
    :meth:`StaleReport.settle` gives them (on copies: the entries shown are not changed)."""
    return StaleReport([dataclasses.replace(x) for x in entries]).settle()


def proposal(
    entries: Sequence[StaleEntry], entry: StaleEntry, targets: dict[tuple[str, str], str] | None = None
) -> Proposal | None:
    """The engine's proposal for ``entry``, judged with the other stale labels ``entries``
    (``targets``: :func:`settled` of them, when the caller has it already).

    An automatic fix is the target :meth:`StaleReport.settle` gives (the one ``--fix``
    writes). A review label proposes every candidate with ``expect: all`` when the engine
    says so (a split), its only candidate when it has one, else nothing."""
    if entry.fix == Fix.AUTO:
        if targets is None:
            targets = settled(entries if entry in entries else [*entries, entry])
        target = targets.get((entry.case, entry.label))
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


@dataclass(frozen=True)
class LabelFix:
    """One stale label to resolve: put ``ids`` where ``entry.label`` was in its case."""

    entry: StaleEntry
    ids: tuple[str, ...]
    expect_all: bool = False


def fix_edits(doc: TestSetDocument, fixes: Sequence[LabelFix], what: str) -> Batch:
    """The edits that resolve ``fixes`` (one undo step): each case's ``expected`` with the
    new ids in the stale label's place, and the remembered text of an id forgotten when
    no other case needs it (the save records the chunk's text now)."""
    from .edits import Batch, SetLabel, UpdateCase

    by_case: dict[str, list[LabelFix]] = {}
    for f in fixes:
        by_case.setdefault(f.entry.case, []).append(f)
    fixed_cases = set(by_case)
    needed = {c for other in doc.cases if other.id not in fixed_cases for c in other.expected}
    edits: list[UpdateCase | SetLabel] = []
    forget: set[str] = set()
    for case_id, mine in by_case.items():
        if case_id not in doc:
            continue
        case = doc.case(case_id)
        expected: list[str] = []
        by_label = {x.entry.label: x for x in mine}
        for cid in case.expected:
            hit = by_label.get(cid)
            expected.extend(hit.ids if hit is not None else [cid])
        expected = list(dict.fromkeys(expected))  # a candidate may already be expected
        fields: dict[str, object] = {"expected": expected or None}
        if any(f.expect_all for f in mine) and len(expected) > 1:
            fields["expect"] = "all"
        edits.append(UpdateCase(case_id, fields))
        for f in mine:
            for cid in f.ids:
                if cid in doc.labels and (cid == f.entry.label or cid not in needed):
                    forget.add(cid)
    edits[:0] = [SetLabel(cid, None) for cid in sorted(forget)]
    return Batch(tuple(edits), what)


def corpus_value(doc: TestSetDocument, chunks: str | Path) -> str | None:
    """What ``corpus:`` should say to name ``chunks`` (relative to the test set, as
    ``stale --fix`` writes it), or None when it names that file already."""
    chunks = Path(chunks)
    own = doc.corpus_path
    if own is not None and own.resolve() == chunks.resolve():
        return None
    return Path(os.path.relpath(chunks.resolve(), Path(doc.path).resolve().parent)).as_posix()


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


def build_index(corpus: Corpus, language: str | None = None) -> LexicalIndex:
    """The picker's search index over every chunk of ``corpus``, analysed for ``language``
    (the test set's) exactly as the builtin retriever's is (slow on big corpora: call in a
    worker)."""
    from ..core.search import LexicalIndex  # numpy, bm25s: imported by the worker that needs them

    return LexicalIndex.build(corpus, language=language)


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
