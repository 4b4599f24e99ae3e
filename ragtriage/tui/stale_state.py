"""The stale labels the app shows, kept up to date edit by edit (no Textual).

The first check after the corpus loads judges every label (staleness.md); after
that, an edit is followed by a check of only the labels it touched — the chunk
ids its cases expected before and after it, and any label it set — and of the
cases that expect them (:class:`~ragtriage.tui.edits.Change` names both). The
new entries replace those of the same labels and cases; the rest stay, and the
automatic fixes are settled again over the whole list, as ``stale --fix``
settles them. A check runs in a worker (:meth:`StaleJob.run`); edits made while
it runs are checked by the next one, and a result that an edit has overtaken is
not shown (the next check covers its labels too).

The same check resolves the evidence quotes (formats.md §1 ``evidence``) of the cases it
looks at against the loaded corpus (:func:`~ragtriage.core.quote_check.check_quotes`): all
of them at first, then those of the cases an edit touched. :attr:`StaleTracker.quotes` is
where every quote resolves now — the Cases detail and Triage show it — and
:attr:`StaleTracker.open_quotes` the ones that do not resolve (missing, ambiguous,
elsewhere), with the candidates Stale review offers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.staleness import StaleEntry, StaleReport

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.quote_check import QuoteEntry
    from .edits import Change
    from .session import Session


def check_labels_of(doc: TestSetDocument, corpus: Corpus, labels: frozenset[str] | None) -> list[StaleEntry]:
    """The stale labels of ``doc`` against the loaded ``corpus``: all of them (``labels``
    None), or those of the given chunk ids (every case expecting one of them is judged).
    ``unrecorded`` labels (no remembered text yet) are not stale: a save records them."""
    from ..core import staleness

    if labels is None:
        report = staleness.check(doc, corpus)  # the loaded corpus: no second read of the file
    else:
        cases = [c for c in doc.cases if not labels.isdisjoint(c.expected)]
        if not cases:
            return []
        report = staleness.check_labels(cases, doc.labels, list(corpus.values()))
    return [e for e in report.stale if e.status != "unrecorded"]


def check_quotes_of(
    doc: TestSetDocument, corpus: Corpus, cases: frozenset[str] | None
) -> dict[str, list[QuoteEntry]]:
    """Case id -> where each of its quotes resolves in the loaded ``corpus``, for every case
    with ``evidence`` (``cases`` None) or those of ``cases``."""
    from ..core.quote_check import check_quotes

    chosen = [c for c in doc.cases if c.evidence and (cases is None or c.id in cases)]
    if not chosen:
        return {}
    out: dict[str, list[QuoteEntry]] = {}
    for e in check_quotes(chosen, corpus).entries:
        out.setdefault(e.case, []).append(e)
    return out


@dataclass
class StaleJob:
    """One check: ``labels`` (None: all) of ``session``'s document at ``generation``."""

    session: Session
    corpus: Corpus
    labels: frozenset[str] | None
    cases: frozenset[str] | None
    generation: int
    entries: list[StaleEntry] = field(default_factory=list)
    quotes: dict[str, list[QuoteEntry]] = field(default_factory=dict)
    error: str | None = None

    @property
    def quote_cases(self) -> frozenset[str] | None:
        """The cases whose quotes this check resolves (None: every case)."""
        return None if self.labels is None or self.cases is None else self.cases

    def run(self) -> StaleJob:
        """Judge the labels and resolve the quotes (blocking: a worker calls it)."""
        try:
            self.entries = check_labels_of(self.session.doc, self.corpus, self.labels)
            self.quotes = check_quotes_of(self.session.doc, self.corpus, self.quote_cases)
        except Exception as e:  # a label the engine cannot judge must not take the app down
            self.error = f"{type(e).__name__}: {e}"
        return self


class StaleTracker:
    """The stale labels shown, the labels waiting to be checked, the check under way."""

    def __init__(self) -> None:
        self.report: list[StaleEntry] | None = None  # None: not checked yet
        # case id -> where each of its quotes resolves now (None: not resolved yet)
        self.quotes: dict[str, list[QuoteEntry]] | None = None
        self.later: set[tuple[str, str]] = set()  # (case, quote) kept for later in Stale review
        self._quotes_edited: set[str] = set()  # cases whose quotes an edit changed: check again
        self._labels: set[str] | None = None  # labels to check (None: all)
        self._cases: set[str] | None = None  # cases whose entries the next check replaces
        self.running: StaleJob | None = None
        # stale labels were accepted against this chunks file: corpus: names it on save
        self.fixed_against: Path | None = None

    @property
    def ids(self) -> set[str]:
        return {e.case for e in self.report or ()}

    def entries_of(self, case_id: str) -> list[StaleEntry]:
        return [e for e in self.report or () if e.case == case_id]

    def quotes_of(self, case_id: str) -> list[QuoteEntry] | None:
        """Where each quote of the case resolves now (None: not resolved yet)."""
        return None if self.quotes is None else self.quotes.get(case_id, [])

    @property
    def open_quotes(self) -> list[QuoteEntry]:
        """The quotes that do not resolve now, in case order (Stale review shows them); a
        case whose quotes were just edited is left out until they are resolved again."""
        return [
            e
            for cid, entries in (self.quotes or {}).items()
            if cid not in self._quotes_edited
            for e in entries
            if not e.resolution.resolved
        ]

    def quote_edited(self, case_id: str) -> None:
        """A person resolved one of the case's quotes: hide them until the next check."""
        self._quotes_edited.add(case_id)

    def is_later(self, entry: QuoteEntry) -> bool:
        return (entry.case, entry.resolution.quote) in self.later

    def keep_for_later(self, entry: QuoteEntry) -> bool:
        """Mark the quote kept for later (or not any more); True when it is now kept."""
        key = (entry.case, entry.resolution.quote)
        if key in self.later:
            self.later.discard(key)
            return False
        self.later.add(key)
        return True

    def touched(self, change: Change) -> None:
        """Remember what ``change`` touched for the next check."""
        if change.labels is None or self._labels is None:
            self._labels = None
        else:
            self._labels |= change.labels
        if change.cases is None or self._cases is None:
            self._cases = None
        else:
            self._cases |= change.cases

    def everything(self) -> None:
        self._labels = self._cases = None

    @property
    def waiting(self) -> bool:
        return self._labels is None or bool(self._labels) or bool(self._cases)

    def next_job(self, session: Session | None, corpus: Corpus | None) -> StaleJob | None:
        """The check to start now (None: one is running, or nothing waits, or not loaded)."""
        if self.running is not None or session is None or corpus is None or not self.waiting:
            return None
        labels = None if self._labels is None or self.report is None else frozenset(self._labels)
        cases = None if labels is None or self._cases is None else frozenset(self._cases)
        self._labels, self._cases = set(), set()
        job = self.running = StaleJob(session, corpus, labels, cases, session.generation)
        return job

    def done(self, job: StaleJob, session: Session | None) -> bool:
        """A check finished; True when its result is shown (False: an edit overtook it)."""
        if job is not self.running:
            return False
        self.running = None
        if session is not job.session or job.generation != session.generation or job.error is not None:
            # the labels it looked at are checked again with what came after
            self.touched_again(job)
            return False
        if job.labels is None:
            self.report = job.entries
        else:
            self.report = self._merged(job, session.doc)
        self._merge_quotes(job, session.doc)
        return True

    def _merge_quotes(self, job: StaleJob, doc: TestSetDocument) -> None:
        checked = job.quote_cases
        if checked is None or self.quotes is None:
            self._quotes_edited.clear()
            self.quotes = dict(job.quotes)
            return
        self._quotes_edited -= checked
        kept = {cid: es for cid, es in self.quotes.items() if cid not in checked and cid in doc}
        kept.update(job.quotes)
        self.quotes = dict(sorted(kept.items(), key=lambda kv: doc.index_of(kv[0])))

    def touched_again(self, job: StaleJob) -> None:
        if job.labels is None or self._labels is None:
            self._labels = None
        else:
            self._labels |= job.labels
        if job.cases is None or self._cases is None:
            self._cases = None if job.labels is None else self._cases
        else:
            self._cases |= job.cases

    def _merged(self, job: StaleJob, doc: TestSetDocument) -> list[StaleEntry]:
        labels = job.labels or frozenset()
        cases = job.cases or frozenset()
        kept = [e for e in self.report or () if e.label not in labels and e.case not in cases]
        merged = [dataclasses.replace(e) for e in kept + job.entries if e.case in doc]
        merged.sort(key=lambda e: doc.index_of(e.case))
        StaleReport(merged).settle()  # which fixes are safe together, over the whole list
        return merged

    def resolved(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Drop these (case, label) entries at once (the next check follows the edit)."""
        gone = set(pairs)
        self.report = [e for e in self.report or () if (e.case, e.label) not in gone]
