"""Every quote of a test set against a corpus, for the people who fix them: ``validate``
shows where each quote resolves, ``stale`` reports the ones that no longer resolve or
resolve ambiguously, with candidates, and never picks one (formats.md §1 ``evidence``).

A quote found nowhere gets candidates from the stale check's similarity pass (the chunks
sharing its rarest words), so an edited sentence is shown beside what it became.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .quotes import Resolution, _find, _states, case_gold, disagreement, norm
from .staleness.scanner import Progress

TOP_N = 3  # similar chunks proposed for a quote found nowhere


@dataclass
class QuoteEntry:
    """One quote of one case and what it resolved to."""

    case: str
    index: int  # its place in the case's ``evidence``
    resolution: Resolution

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case, "index": self.index, **self.resolution.to_dict()}


@dataclass
class QuoteReport:
    """Every quote of the cases checked, in case order, and the warnings."""

    entries: list[QuoteEntry] = field(default_factory=list)
    disagreements: list[tuple[str, str]] = field(default_factory=list)  # (case, message)

    @property
    def unresolved(self) -> list[QuoteEntry]:
        return [e for e in self.entries if not e.resolution.resolved]

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.entries:
            out[e.resolution.status] = out.get(e.resolution.status, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "quotes": [e.to_dict() for e in self.entries],
            "counts": self.counts,
            "disagreements": [{"case": c, "message": m} for c, m in self.disagreements],
        }


def _with_similar(
    entries: list[QuoteEntry], corpus: Any, n_chunks: int, progress: Progress | None, cancel: Any
) -> None:
    """Candidates for the quotes found nowhere that the scan met nothing like: the stale
    check's second pass (rare words), bounded per quote."""
    from .staleness import FEW_TERMS, StaleEntry, Status, similar
    from .staleness.similarity import WORD

    need = [e for e in entries if e.resolution.status == "missing" and not e.resolution.candidates]
    if not need:
        return
    holders = [StaleEntry(e.case, f"quote {e.index}", Status.MISSING, []) for e in need]
    df: dict[str, int] = {}
    for e in entries:
        for w in set(WORD.findall(norm(e.resolution.quote).casefold())):
            df[w] = df.get(w, 0) + 1
    src = list(corpus.values()) if hasattr(corpus, "values") else corpus
    similar([(h, e.resolution.quote) for h, e in zip(holders, need)], src, TOP_N, df, n_chunks,
            progress, cancel, few_terms=FEW_TERMS)  # fmt: skip
    for h, e in zip(holders, need):
        r = e.resolution
        e.resolution = Resolution(r.quote, r.status, candidates=tuple((i, s, None) for i, s in h.candidates))


def check_quotes(
    cases: Sequence[Any],
    corpus: str | Path | Any,
    *,
    candidates: bool = True,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> QuoteReport:
    """Resolve every quote of ``cases`` against ``corpus`` (a chunks file, or a loaded
    corpus); ``candidates``: look for similar chunks for a quote found nowhere."""
    with_quotes = [c for c in cases if getattr(c, "evidence", ())]
    report = QuoteReport()
    if not with_quotes:
        return report
    states = _states(q for c in with_quotes for q in c.evidence)
    found, n_chunks = _find(states, corpus, progress, cancel)
    for c in with_quotes:
        gold = case_gold(c, found)
        for i, r in enumerate(gold.resolutions):
            report.entries.append(QuoteEntry(c.id, i, r))
        report.disagreements += [(c.id, m) for m in disagreement(c, gold)]
    if candidates:
        _with_similar(report.entries, corpus, n_chunks, progress, cancel)
    return report
