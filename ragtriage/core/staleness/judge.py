"""The judge: from the evidence gathered on one label, a typed :class:`Verdict`.

Text evidence (identical or containing chunks) comes before span evidence, so an edited
document whose paragraphs shifted is still judged by what they say; spans decide when the
text was normalised differently by the new chunker.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..corpus import Chunk
from ..text import normalize_text
from .evidence import (
    TOP_N,
    Candidates,
    LabelState,
    _best_run,
    _covers_span,
    _dice,
    _fp,
    _jaccard,
    _min_cover,
)
from .model import Fix, Status, StrEnum


class Query(StrEnum):
    """What the similarity pass searches with, for a label nothing holds."""

    TEXT = "text"  # the remembered text
    QUESTION = "question"  # the case's question (no text remembered)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the judge says of one label."""

    status: Status
    candidates: Candidates = ()
    fix: Fix | None = None
    expect: str | None = None  # proposed `expect` ("all" for a split)
    query: Query | None = None  # a second, similarity pass is wanted with this text


OK = Verdict(Status.OK)


def _auto_if_one(chunks: list[Chunk] | list[tuple[Chunk, float]]) -> Fix:
    return Fix.AUTO if len(chunks) == 1 else Fix.REVIEW


def prefer(st: LabelState, chunks: list[Chunk]) -> list[Chunk]:
    """When several chunks hold the text (a paragraph repeated in the documents), keep those
    of the label's document, and of those the ones over the label's old span, if any."""
    if st.doc is None or len(chunks) < 2:
        return chunks
    same = [c for c in chunks if c.doc == st.doc]
    if not same:
        return chunks
    if st.start is not None and st.end is not None:
        over = [
            c
            for c in same
            if c.start is not None and c.end is not None and c.start < st.end and st.start < c.end
        ]
        if over:
            return over
    return same


_prefer = prefer  # the name before the package split


def judge(st: LabelState, found: dict[str, Chunk]) -> Verdict:
    """Judge one label; every chunk a verdict may fix it to is noted in ``found``."""
    own = st.own
    if st.fp is None:
        if own is not None:
            found[own.id] = own
            return Verdict(Status.UNRECORDED, ((own.id, 1.0),), Fix.AUTO)
        return Verdict(Status.UNKNOWN, (), Fix.REVIEW, query=Query.QUESTION)
    if own is not None and st.own_norm is not None and _fp(st.own_norm) == st.fp:
        return OK
    return _by_text(st, found) or _by_span(st, found) or _by_pieces(st) or _by_similarity(st)


def _status(st: LabelState, status: Status) -> Status:
    """A label whose id still exists but no longer holds its text is ``changed``."""
    return Status.CHANGED if st.own is not None else status


def _by_text(st: LabelState, found: dict[str, Chunk]) -> Verdict | None:
    """Chunks that hold the remembered text: the label's own (now bigger), identical ones,
    then bigger ones."""
    t, own = st.t, st.own
    if own is not None and t is not None and st.own_norm is not None and t in st.own_norm:
        found[own.id] = own
        return Verdict(Status.MERGED, ((own.id, _jaccard(len(t), len(st.own_norm), len(t))),), Fix.AUTO)
    if st.exact:
        ex = prefer(st, st.exact)
        for c in ex:
            found[c.id] = c
        return Verdict(_status(st, Status.MOVED), tuple((c.id, 1.0) for c in ex), _auto_if_one(ex))
    if st.holders and t is not None:
        lt = len(t)
        scored = sorted(
            ((c, _jaccard(lt, len(normalize_text(c.text)), lt)) for c in prefer(st, st.holders)),
            key=lambda p: -p[1],
        )
        for c, _ in scored:
            found[c.id] = c
        return Verdict(_status(st, Status.MERGED), tuple((c.id, s) for c, s in scored), _auto_if_one(scored))
    return None


def _by_span(st: LabelState, found: dict[str, Chunk]) -> Verdict | None:
    """Chunks over the label's old span in its document (the new chunker may have
    normalised text differently)."""
    if not st.spans or st.start is None or st.end is None:
        return None
    own = st.own
    span = st.end - st.start
    same = [c for c, a, b in st.spans if a == 0 and b == span]  # chunks over the whole span
    if own is not None and any(c is own and c.start == st.start and c.end == st.end for c in same):
        return OK
    return _span_holders(st, found, span, same) or _span_pieces(st, span)


def _span_holders(st: LabelState, found: dict[str, Chunk], span: int, same: list[Chunk]) -> Verdict | None:
    """Chunks over exactly the old span (``moved``), or over more than it (``merged``)."""
    exact = [c for c in same if c.start == st.start and c.end == st.end]
    if exact:
        for c in exact:
            found[c.id] = c
        return Verdict(_status(st, Status.MOVED), tuple((c.id, 1.0) for c in exact), _auto_if_one(exact))
    if same:
        scored = sorted(((c, _jaccard(span, c.end - c.start, span)) for c in same), key=lambda p: -p[1])
        for c, _ in scored:
            found[c.id] = c
        return Verdict(_status(st, Status.MERGED), tuple((c.id, s) for c, s in scored), _auto_if_one(scored))
    return None


def _span_pieces(st: LabelState, span: int) -> Verdict:
    """Chunks that cover parts of the old span: a ``split`` when together they cover it,
    else the biggest parts, for review."""
    if _covers_span(span, [(a, b) for _, a, b in st.spans]):
        pieces = _min_cover(span, sorted(st.spans, key=lambda p: p[0].start))
        cands = tuple((c.id, _jaccard(span, c.end - c.start, b - a)) for c, a, b in pieces)
        return Verdict(_status(st, Status.SPLIT), cands, Fix.REVIEW, "all")
    partial = sorted(st.spans, key=lambda p: -(p[2] - p[1]))[:TOP_N]
    cands = tuple((c.id, _jaccard(span, c.end - c.start, b - a)) for c, a, b in partial)
    return Verdict(_status(st, Status.MISSING), cands, Fix.REVIEW)


def _by_pieces(st: LabelState) -> Verdict | None:
    """Consecutive chunks whose pieces together cover the text."""
    t = st.t
    if t is None or not st.pieces:
        return None
    run = _best_run(t, st.pieces)
    if not run:
        return None
    cands = tuple((cid, _jaccard(len(t), n, b - a)) for (cid, n), a, b in run)
    return Verdict(_status(st, Status.SPLIT), cands, Fix.REVIEW, "all")


def _by_similarity(st: LabelState) -> Verdict:
    """Nothing holds the text: the most similar chunks, ranked for review; a second pass
    over the corpus when none was met."""
    missing = _status(st, Status.MISSING)
    t = st.t
    if t is None:
        return Verdict(missing, (), Fix.REVIEW, query=Query.QUESTION)
    if st.near:
        scored = sorted(((_dice(t, c), cid) for _, _, cid, c in st.near), key=lambda p: (-p[0], p[1]))
        return Verdict(missing, tuple((cid, sc) for sc, cid in scored), Fix.REVIEW)
    if st.nearby:  # nothing shares a passage: the most similar chunks of the same document
        ranked = sorted(
            ((round(min(sc, 0.999), 3), -negseq, cid) for sc, negseq, cid in st.nearby),
            key=lambda p: (-p[0], p[1]),
        )
        return Verdict(missing, tuple((cid, sc) for sc, _, cid in ranked), Fix.REVIEW)
    return Verdict(missing, (), Fix.REVIEW, query=Query.TEXT)
