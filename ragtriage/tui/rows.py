"""What the Cases table shows, as plain data: one row per case, filter, sort.

No Textual here: the table widget only paints :class:`CaseRows`; building,
filtering and sorting 100,000 rows are plain list operations a test can call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..core.diagnosis import NOT_SCORED, PASSING
from ..core.escape import inline

# Never colour alone: a glyph and a word.
FLAG_DRAFT = "draft"
FLAG_UNANSWERABLE = "unanswerable"
FLAG_STALE = "stale"
FLAG_TEXT = {FLAG_DRAFT: "✎ draft", FLAG_UNANSWERABLE: "∅ unanswerable", FLAG_STALE: "⚠ stale"}

PASS_REASONS = PASSING

COLUMNS = ("id", "topic", "question", "expected", "flags", "reason")


def reason_text(reason: str | None) -> str:
    if not reason:
        return ""
    return ("✓ " if reason in PASS_REASONS else "✗ ") + reason


@dataclass(slots=True)
class Row:
    id: str
    topic: str
    question: str
    expected: str
    flags: tuple[str, ...]
    reason: str
    haystack: str  # lower-cased text the filter searches

    @property
    def flags_text(self) -> str:
        return " ".join(FLAG_TEXT[f] for f in self.flags)

    def cell(self, column: str) -> str:
        if column == "flags":
            return self.flags_text
        if column == "reason":
            return reason_text(self.reason)
        return inline(getattr(self, column))  # a cell is one line: control characters shown


QUOTE_SHOWN = 24  # characters of a quote in the one-line column; the detail shows it whole


def expected_text(case) -> str:
    """The gold in one cell: chunk ids, then ``doc:NAME`` per expected document, then each
    quote opening (``“…”``), so a case labelled by document or quote only is not shown empty."""
    parts = list(case.expected)
    parts += [f"doc:{d}" for d in case.expected_docs]
    for q in case.evidence:
        q = " ".join(q.split())
        parts.append("“" + (q if len(q) <= QUOTE_SHOWN else q[: QUOTE_SHOWN - 1] + "…") + "”")
    return ", ".join(parts)


def make_row(case, stale: bool = False, reason: str | None = None) -> Row:
    flags = []
    if case.unanswerable:
        flags.append(FLAG_UNANSWERABLE)
    elif case.unlabelled:
        flags.append(FLAG_DRAFT)
    if stale:
        flags.append(FLAG_STALE)
    expected = expected_text(case)
    topic = case.topic or ""
    question = " ".join(case.question.split())
    verdict = "" if not reason or reason in NOT_SCORED else ("pass" if reason in PASSING else "fail")
    hay = "\x00".join(
        (case.id, topic, question, expected, " ".join(flags), reason or "", verdict, " ".join(case.tags))
    )
    return Row(case.id, topic, question, expected, tuple(flags), reason or "", hay.lower())


class CaseRows:
    """All rows in file order, plus the visible order after filter and sort."""

    def __init__(self, rows: list[Row] | None = None):
        self.rows: list[Row] = rows or []
        self.query = ""
        self.sort_column: str | None = None
        self.sort_reverse = False
        # the visible rows' indices: a range while nothing filters or sorts (no 100k list
        # made again after every edit), else the list the filter and sort left
        self.order: Sequence[int] = range(len(self.rows))
        # where a case probably is (the rows are in file order: the document's position of
        # the id); always checked against the row there, so a wrong guess only costs a scan
        self.hint: Callable[[str], int | None] | None = None
        self._index()

    def _index(self) -> None:
        self._hay: list[str] = [r.haystack for r in self.rows]
        self._ids: list[str] = [r.id for r in self.rows]  # found with list.index, at C speed
        ids = set(self._ids)  # an id not shown is known at once (None: ids repeat, scan instead)
        self._idset: set[str] | None = ids if len(ids) == len(self._ids) else None
        self._filtered: tuple[tuple[str, ...], Sequence[int]] = ((), range(len(self.rows)))

    @classmethod
    def from_cases(
        cls,
        cases: Iterable,
        stale: set[str] | frozenset[str] = frozenset(),
        reasons: Mapping[str, str] | None = None,
    ) -> CaseRows:
        reasons = reasons or {}
        return cls([make_row(c, c.id in stale, reasons.get(c.id)) for c in cases])

    def __len__(self) -> int:
        return len(self.order)

    def visible(self, index: int) -> Row:
        return self.rows[self.order[index]]

    def _row(self, case_id: str) -> int | None:
        ids = self._ids
        if self.hint is not None:  # at 100k rows a scan is 7 ms; the guess is one compare
            try:
                i = self.hint(case_id)
            except (LookupError, ValueError):  # a lookup that raises for an id it lacks
                i = None
            if i is not None and 0 <= i < len(ids) and ids[i] == case_id:
                return i
        if self._idset is not None and case_id not in self._idset:
            return None
        try:
            return ids.index(case_id)
        except ValueError:
            return None

    def position_of(self, case_id: str) -> int | None:
        """Visible position of a case id, or None when filtered out."""
        i = self._row(case_id)
        if i is None:
            return None
        try:
            return self.order.index(i)
        except ValueError:
            return None

    def set_filter(self, query: str) -> None:
        self.query = query
        self._refresh()

    def set_sort(self, column: str | None, reverse: bool = False) -> None:
        if column is not None and column not in COLUMNS:
            raise ValueError(f"unknown column {column!r}")
        self.sort_column, self.sort_reverse = column, reverse
        self._refresh()

    def replace(self, rows: list[Row]) -> None:
        self.rows = rows
        self._index()
        self._refresh()

    def update(self, changed: Mapping[str, Row | None], order: Callable[[str], int]) -> bool:
        """Apply the rows of a few changed cases in place: ``changed`` maps a case id to its
        new row (None: the case is gone); ``order(id)`` is a case's position in the file.
        False when the rows could not be kept in step (the caller rebuilds them all)."""
        rows, hay, ids = self.rows, self._hay, self._ids
        where = {cid: self._row(cid) for cid in changed}
        idset = self._idset
        for i in sorted(
            (i for cid, i in where.items() if i is not None and changed[cid] is None), reverse=True
        ):
            if idset is not None:
                idset.discard(ids[i])
            del rows[i], hay[i], ids[i]
        new = sorted(
            (order(cid), row) for cid, row in changed.items() if row is not None and where[cid] is None
        )
        for at, row in new:
            if at > len(rows):
                return False
            rows.insert(at, row)
            hay.insert(at, row.haystack)
            ids.insert(at, row.id)
            if idset is not None:
                if row.id in idset:  # a repeated id: the set can no longer say "not shown"
                    idset = self._idset = None
                else:
                    idset.add(row.id)
        for cid, new_row in changed.items():
            if new_row is None or where[cid] is None:
                continue
            i = order(cid)
            if not (0 <= i < len(ids)) or ids[i] != cid:
                return False  # the file's order and the rows' differ: rebuild
            rows[i], hay[i] = new_row, new_row.haystack
        self._filtered = ((), range(len(rows)))
        self._refresh()
        return True

    def _refresh(self) -> None:
        rows = self.rows
        words = tuple(self.query.lower().split())
        col = self.sort_column
        if not words and col is None:
            self.order = self._filtered[1] if not self._filtered[0] else range(len(rows))
            self._filtered = ((), self.order)
            return
        prev_words, prev = self._filtered
        if words == prev_words:
            order = list(prev)
        else:
            # typing on narrows the last result: only its rows can still match
            narrower = (
                prev_words
                and len(words) >= len(prev_words)
                and all(w.startswith(p) or p in w for w, p in zip(words, prev_words))
            )
            cand = prev if narrower else range(len(rows))
            hay = self._hay
            order = list(cand)
            for w in words:
                order = [i for i in order if w in hay[i]]
            self._filtered = (words, order)
            order = list(order)
        if col is not None:
            if col == "flags":
                key = lambda i: rows[i].flags  # noqa: E731
            else:
                key = lambda i: getattr(rows[i], col).casefold()  # noqa: E731
            order.sort(key=key, reverse=self.sort_reverse)
        self.order = order

    def next_flagged(self, start: int) -> int | None:
        """Next visible position after ``start`` whose case is flagged or failed (wraps)."""
        n = len(self.order)
        for step in range(1, n + 1):
            pos = (start + step) % n
            r = self.rows[self.order[pos]]
            if r.flags or (r.reason and r.reason not in PASS_REASONS):
                return pos
        return None
