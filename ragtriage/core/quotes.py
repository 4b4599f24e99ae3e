"""Evidence quotes (formats.md §1 ``evidence``): passages an expert quoted from the
documents, resolved to the chunks of the current corpus that hold them.

A quote is looked for as a remembered label is (staleness.md): the same normalisation and
the same token-boundary rule (:func:`contains`, the one rule for "does this text hold this
passage"), found by the stale scanner's anchors in one pass over the corpus, so a
million-chunk corpus with thousands of quotes is one linear scan, never chunks × quotes.

Per quote, first match wins (evaluation.md, "Evidence quotes"):

=========== ============================================================== ==========
status      when                                                           gold
=========== ============================================================== ==========
found       chunks of one document hold the whole quote                    those chunks
split       no chunk holds it whole; consecutive chunks together do        all of them
ambiguous   chunks of several documents hold it (none of them narrowed     none
            by the case's ``expected_docs``)
elsewhere   only chunks of documents the case's ``expected_docs`` leaves   none
            out hold it
missing     nothing holds it (edited or deleted text); similar chunks are  none
            ranked as candidates
=========== ============================================================== ==========

A chunk without ``doc`` counts as one unnamed document for this (a corpus that names no
documents resolves a quote to every chunk holding it). A case is scored on its quotes only
when every quote resolves (``found`` or ``split``): a partial gold would be a guess.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .corpus import Chunk
from .staleness.evidence import LabelState, _best_run, holds_words
from .staleness.evidence import norm as _norm
from .staleness.scanner import Progress, Scanner, _Item
from .staleness.verdict import _missing

RESOLVED = ("found", "split")
STATUSES = ("found", "split", "ambiguous", "elsewhere", "missing")
_KEY = "\x00quote "  # state ids no chunk id can be (a chunk id has no NUL)


def norm(text: str) -> str:
    """A passage as compared: the stale check's normalisation (NFC, whitespace collapsed,
    case and everything else kept: :func:`ragtriage.core.staleness.evidence.norm`)."""
    return _norm(text)


def contains(text: str, passage: str) -> bool:
    """Does ``text`` hold ``passage`` (both as written): after the stale check's
    normalisation, on token boundaries (``yes`` is not in ``yesterday``)? The one rule
    behind quotes and stale labels."""
    p = norm(passage)
    return bool(p) and holds_words(norm(text), p)


@dataclass(frozen=True)
class Hits:
    """What the corpus says of one quote: the chunks holding it whole, in corpus order
    (``(id, doc)``), the shortest run of consecutive chunks that together hold it, and
    chunks that share some of it (``(id, score, doc)``, for a person)."""

    holders: tuple[tuple[str, str | None], ...] = ()
    run: tuple[tuple[str, str | None], ...] = ()
    similar: tuple[tuple[str, float, str | None], ...] = ()


@dataclass(frozen=True)
class Resolution:
    """One quote of one case, resolved against the corpus."""

    quote: str
    status: str  # one of STATUSES
    chunks: tuple[str, ...] = ()  # the gold it gives (found: any of them; split: all)
    docs: tuple[str | None, ...] = ()  # the document of each of ``chunks``
    candidates: tuple[tuple[str, float, str | None], ...] = ()  # for review: (id, score, doc)

    @property
    def resolved(self) -> bool:
        return self.status in RESOLVED

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"quote": self.quote, "status": self.status, "chunks": list(self.chunks)}
        if any(d is not None for d in self.docs):
            out["docs"] = list(self.docs)
        if self.candidates:
            out["candidates"] = [
                {"id": i, "score": s, **({"doc": d} if d is not None else {})} for i, s, d in self.candidates
            ]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Resolution | None:
        """A resolution stored in a run file (None when it is not one)."""
        quote, status, chunks = d.get("quote"), d.get("status"), d.get("chunks")
        if not isinstance(quote, str) or status not in STATUSES or not isinstance(chunks, list):
            return None
        if not all(isinstance(c, str) for c in chunks):
            return None
        docs = d.get("docs")
        if not isinstance(docs, list) or len(docs) != len(chunks):
            docs = [None] * len(chunks)
        return cls(quote, str(status), tuple(chunks), tuple(x if isinstance(x, str) else None for x in docs))


@dataclass
class CaseGold:
    """The chunk gold a case's quotes give: ``expected`` and ``expect`` to score with, or
    none (``ids`` empty) when a quote does not resolve."""

    resolutions: list[Resolution] = field(default_factory=list)
    ids: tuple[str, ...] = ()
    expect: str = "any"

    @property
    def complete(self) -> bool:
        return bool(self.resolutions) and all(r.resolved for r in self.resolutions)


class _QuoteScanner(Scanner):
    """The stale scanner, noting the document of every chunk that concerns a quote (a
    piece, a near hit: their ``Chunk`` is not kept)."""

    def __init__(self, states: Sequence[LabelState], corpus_name: str | None, in_memory: bool) -> None:
        super().__init__(states, corpus_name, in_memory)
        self.met: dict[str, tuple[int, str | None]] = {}  # chunk id -> (place in the corpus, doc)

    def _evidence(self, item: _Item, cid: str, *rest: Any) -> None:
        rec = item.rec
        doc = rec.get("doc") if isinstance(rec, dict) else rec.doc
        self.met[cid] = (item.seq, doc if isinstance(doc, str) else None)
        super()._evidence(item, cid, *rest)


def _doc(c: Chunk) -> str | None:
    return c.doc if isinstance(c.doc, str) else None


def _hits(st: LabelState, met: Mapping[str, tuple[int, str | None]]) -> Hits:
    t = st.t or ""
    seen: set[str] = set()
    whole: list[Chunk] = []
    for c in sorted((*st.exact, *st.holders, *st.contains), key=lambda c: met.get(c.id, (0, None))[0]):
        if c.id not in seen and holds_words(norm(c.text), t):
            seen.add(c.id)
            whole.append(c)
    holders = tuple((c.id, _doc(c)) for c in whole)
    run: tuple[tuple[str, str | None], ...] = ()
    if not holders and st.pieces:
        best = _best_run(t, st.pieces)
        if best:
            run = tuple((cid, met.get(cid, (0, None))[1]) for (cid, _n), _a, _b in best)
    similar: tuple[tuple[str, float, str | None], ...] = ()
    if not holders and not run:
        similar = tuple((cid, s, met.get(cid, (0, None))[1]) for cid, s in _missing(st).candidates)
    return Hits(holders, run, similar)


def find_quotes(
    quotes: Iterable[str],
    corpus: str | Path | Mapping[str, Chunk] | Iterable[Chunk],
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Hits]:
    """Normalised quote -> :class:`Hits`, for every distinct quote, in one pass over
    ``corpus`` (a chunks file, streamed; a loaded corpus; or chunks in memory)."""
    states = _states(quotes)
    if not states:
        return {}
    return _find(states, corpus, progress, cancel)[0]


def _find(
    states: dict[str, LabelState], corpus: Any, progress: Progress | None, cancel: threading.Event | None
) -> tuple[dict[str, Hits], int]:
    """(hits per quote, chunks in the corpus): one scan."""
    file = isinstance(corpus, (str, Path))
    source: Any = corpus
    if isinstance(corpus, Mapping):
        source = list(corpus.values())
    scanner = _QuoteScanner(list(states.values()), str(corpus) if file else None, in_memory=not file)
    scanner.scan(source, progress, cancel)
    return {key: _hits(st, scanner.met) for key, st in states.items()}, scanner.seq + 1


def _states(quotes: Iterable[str]) -> dict[str, LabelState]:
    states: dict[str, LabelState] = {}
    for q in quotes:
        key = norm(q)
        if key and key not in states:
            states[key] = LabelState(f"{_KEY}{len(states)}", {"text": q})
    return states


def resolve(quote: str, hits: Hits | None, expected_docs: Sequence[str] = ()) -> Resolution:
    """One quote of a case: its :class:`Hits` narrowed to the case's ``expected_docs``."""
    if hits is None:
        return Resolution(quote, "missing")
    holders = list(hits.holders)
    if holders:
        wanted = set(expected_docs)
        if wanted:
            inside = [h for h in holders if h[1] in wanted]
            if not inside:
                return Resolution(quote, "elsewhere", candidates=tuple((i, 1.0, d) for i, d in holders))
            holders = inside
        docs = {d for _, d in holders}
        if len(docs) > 1:
            return Resolution(quote, "ambiguous", candidates=tuple((i, 1.0, d) for i, d in holders))
        return Resolution(quote, "found", tuple(i for i, _ in holders), tuple(d for _, d in holders))
    if hits.run:
        return Resolution(quote, "split", tuple(i for i, _ in hits.run), tuple(d for _, d in hits.run))
    return Resolution(quote, "missing", candidates=hits.similar)


def case_gold(case: Any, found: Mapping[str, Hits]) -> CaseGold:
    """The gold of ``case``'s quotes: every chunk they resolve to (in quote order, each once),
    with the case's ``expect`` (``all`` when a quote is split: the answer needs each piece)."""
    res = [resolve(q, found.get(norm(q)), case.expected_docs) for q in case.evidence]
    gold = CaseGold(res)
    if gold.complete:
        gold.ids = tuple(dict.fromkeys(c for r in res for c in r.chunks))
        gold.expect = "all" if any(r.status == "split" for r in res) else case.expect
    return gold


def resolve_cases(
    cases: Iterable[Any],
    corpus: str | Path | Mapping[str, Chunk] | Iterable[Chunk],
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, CaseGold]:
    """Case id -> :class:`CaseGold` for every case with ``evidence`` (one corpus pass)."""
    with_quotes = [c for c in cases if getattr(c, "evidence", ())]
    if not with_quotes:
        return {}
    found = find_quotes(
        (q for c in with_quotes for q in c.evidence), corpus, progress=progress, cancel=cancel
    )
    return {c.id: case_gold(c, found) for c in with_quotes}


def disagreement(case: Any, gold: CaseGold) -> list[str]:
    """Quotes of a case with ``expected`` whose chunks it does not expect (a warning each)."""
    if not case.expected:
        return []
    want = set(case.expected)
    out = []
    for r in gold.resolutions:
        if r.resolved and not want.intersection(r.chunks):
            out.append(f"evidence {r.quote!r} is in {', '.join(r.chunks)}, which `expected` does not name")
    return out
