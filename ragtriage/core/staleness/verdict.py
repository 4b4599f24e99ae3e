"""The verdict: from the evidence gathered on one label, :func:`judge` gives a typed :class:`Verdict`.

Text evidence (identical or containing chunks) comes before span evidence, so an edited
document whose paragraphs shifted is still judged by what they say; spans decide when the
text was normalised differently by the new chunker.

A label whose document is known is fixed automatically only to a chunk of that document: a
copy of its text in another document is a review candidate, named as such (``elsewhere``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..compat import StrEnum
from ..corpus import Chunk
from .evidence import (
    TOP_N,
    Candidates,
    LabelState,
    _best_run,
    _covers_span,
    _dice,
    _jaccard,
    _min_cover,
    cuts,
    holds_words,
    norm,
    text_over_span,
)
from .model import Fix, Status


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
    elsewhere: tuple[tuple[str, str], ...] = ()  # (candidate id, its document): another document


OK = Verdict(Status.OK)
MAX_MISSING = 5  # candidates ranked for a missing label


def _auto_if_one(chunks: list[Chunk] | list[tuple[Chunk, float]]) -> Fix:
    return Fix.AUTO if len(chunks) == 1 else Fix.REVIEW


def _away(st: LabelState, c: Chunk) -> bool:
    """Is ``c`` in another document than the label's (both known)?"""
    return st.doc is not None and isinstance(c.doc, str) and c.doc != st.doc


def prefer(st: LabelState, chunks: list[Chunk]) -> list[Chunk]:
    """The chunks a label may be fixed to, of those holding its text: when its document is
    known, those of that document (else those naming none; a copy in another document never),
    and of several the ones over the label's old span, if any."""
    if st.doc is None:
        return chunks
    same = [c for c in chunks if c.doc == st.doc] or [c for c in chunks if not isinstance(c.doc, str)]
    if len(same) < 2:
        return same
    if st.start is not None and st.end is not None:
        over = [
            c
            for c in same
            if c.start is not None and c.end is not None and c.start < st.end and st.start < c.end
        ]
        if over:
            return over
    return same


def judge(st: LabelState, found: dict[str, Chunk]) -> Verdict:
    """Judge one label; every chunk a verdict may fix it to is noted in ``found``.

    Text is the evidence, spans only help: chunks holding the remembered text first (an
    automatic fix when one does), then chunks over the old span whose text there *is* the
    remembered text, then consecutive chunks that together hold it (``split``), then, for a
    short text, chunks holding it as words; whatever else shares content with the text is
    ranked for review (``missing``), the chunks over the old span among them."""
    own = st.own
    if st.fp is None:
        if own is not None:
            found[own.id] = own
            return Verdict(Status.UNRECORDED, ((own.id, 1.0),), Fix.AUTO)
        return Verdict(Status.UNKNOWN, (), Fix.REVIEW, query=Query.QUESTION)
    if own is not None and st.same_as(own.text, st.own_norm):
        return OK
    v = (
        _by_text(st, found)
        or _by_span_text(st, found)
        or _by_pieces(st)
        or _by_span_pieces(st)
        or _by_short(st)
    )
    away = [c for c in (*st.exact, *st.holders, *st.contains) if _away(st, c)]
    if own is not None and _away(st, own) and st.t is not None and st.own_norm is not None:
        if holds_words(st.own_norm, st.t):  # its own id, now in another document
            away.insert(0, own)
    if away and (v is None or v.fix != Fix.AUTO):
        return _with_copies(st, v, away)
    return v or _missing(st)


def _with_copies(st: LabelState, v: Verdict | None, away: list[Chunk]) -> Verdict:
    """Chunks of another document hold the text (a passage two pages share): they are review
    candidates after what the label's own document offers, named as another document's."""
    t = st.t
    lt = len(t) if t is not None else 0
    copies = tuple(
        (c.id, 1.0 if t is None or len(norm(c.text)) == lt else _jaccard(lt, len(norm(c.text)), lt))
        for c in away
    )
    named = tuple((c.id, c.doc or "") for c in away)
    if v is None:  # nothing of its own document holds it: moved (or merged) there, for a person
        local = _missing(st)
        exact = any(c in st.exact for c in away)
        status = _status(st, Status.MOVED if exact else Status.MERGED)
        seen = {cid for cid, _ in copies}
        rest = tuple(p for p in local.candidates if p[0] not in seen)
        return Verdict(status, rest[:2] + copies + rest[2:], Fix.REVIEW, elsewhere=named)
    seen = {cid for cid, _ in v.candidates}
    extra = tuple(p for p in copies if p[0] not in seen)
    return replace(v, candidates=v.candidates + extra, fix=Fix.REVIEW, elsewhere=named)


def _status(st: LabelState, status: Status) -> Status:
    """A label whose id still exists but no longer holds its text is ``changed``."""
    return Status.CHANGED if st.own is not None else status


def _by_text(st: LabelState, found: dict[str, Chunk]) -> Verdict | None:
    """Chunks that hold the remembered text: the label's own (now bigger), identical ones,
    then bigger ones. A short text inside its own reused id is only proposed, unless the id
    covers the old span with the remembered text there."""
    t, own = st.t, st.own
    if (
        own is not None
        and t is not None
        and st.own_norm is not None
        and not _away(st, own)
        and holds_words(st.own_norm, t)
    ):
        cand = ((own.id, _jaccard(len(t), len(st.own_norm), len(t))),)
        if not st.short or _own_over_span(st):
            found[own.id] = own
            return Verdict(Status.MERGED, cand, Fix.AUTO)
        if holds_words(st.own_norm, t):
            return Verdict(Status.MERGED, cand, Fix.REVIEW)
    ex = prefer(st, st.exact)
    if ex:
        for c in ex:
            found[c.id] = c
        return Verdict(_status(st, Status.MOVED), tuple((c.id, 1.0) for c in ex), _auto_if_one(ex))
    held = prefer(st, st.holders)
    if held and t is not None:
        lt = len(t)
        scored = sorted(((c, _jaccard(lt, len(norm(c.text)), lt)) for c in held), key=lambda p: -p[1])
        for c, _ in scored:
            found[c.id] = c
        return Verdict(_status(st, Status.MERGED), tuple((c.id, s) for c, s in scored), _auto_if_one(scored))
    return None


def _own_over_span(st: LabelState) -> bool:
    """Does the label's own id now cover its old span, with the remembered text there?"""
    if st.own is None or st.start is None or st.end is None:
        return False
    span = st.end - st.start
    return any(c.id == st.own.id and a == 0 and b == span and _same_text(st, c, a, b) for c, a, b in st.spans)


def _same_text(st: LabelState, c: Chunk, a: int, b: int) -> bool:
    """Is the text of ``c`` over ``[a, b)`` of the label's span, normalised, the remembered
    text there (the whole span: the remembered text or its fingerprint)? An end of the span
    inside the chunk must be a token boundary of its text: a label ending ``is 2.`` is not in
    ``is 2.5.`` whatever the offsets say."""
    over = text_over_span(st, c, a, b)
    if over is None or st.start is None or st.end is None or c.start is None:
        return False
    i = st.start + a - c.start  # where the piece starts in the chunk's text
    span = st.end - st.start
    if (a == 0 and not cuts(c.text, i)) or (b == span and not cuts(c.text, i + b - a)):
        return False
    if a == 0 and b == span:
        return st.same_as(over)
    return st.raw is not None and len(st.raw) == span and norm(over) == norm(st.raw[a:b])


def _by_span_text(st: LabelState, found: dict[str, Chunk]) -> Verdict | None:
    """Chunks over the whole old span whose text there is the remembered text: exactly over
    it (``moved``) or over more (``merged``). Text the new chunker normalised differently
    is found here when the text search missed it."""
    if not st.spans or st.start is None or st.end is None:
        return None
    span = st.end - st.start
    same = [c for c, a, b in st.spans if a == 0 and b == span and _same_text(st, c, a, b)]
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


def _by_span_pieces(st: LabelState) -> Verdict | None:
    """Consecutive chunks over parts of the old span whose texts there are the remembered
    text's parts, together covering it (whitespace between them may be dropped): ``split``."""
    if not st.spans or st.start is None or st.end is None:
        return None
    span = st.end - st.start
    ok = [(c, a, b) for c, a, b in st.spans if _same_text(st, c, a, b)]
    if not ok or not _covers_span(span, [(a, b) for _, a, b in ok], st.raw):
        return None
    pieces = _min_cover(span, sorted(ok, key=lambda p: p[0].start), st.raw)
    cands = tuple((c.id, _jaccard(span, c.end - c.start, b - a)) for c, a, b in pieces)
    return Verdict(_status(st, Status.SPLIT), cands, Fix.REVIEW, "all")


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


def _by_short(st: LabelState) -> Verdict | None:
    """A short text (a few words) inside bigger chunks: they are proposed, never applied (a
    few words may stand anywhere)."""
    t = st.t
    if t is None or not st.contains:
        return None
    lt = len(t)
    held = prefer(st, st.contains)
    if not held:
        return None
    scored = sorted(((c.id, _jaccard(lt, len(norm(c.text)), lt)) for c in held), key=lambda p: -p[1])
    return Verdict(_status(st, Status.MERGED), tuple(scored), Fix.REVIEW)


def _missing(st: LabelState) -> Verdict:
    """Nothing holds the text: every chunk that shares content with it, ranked for review —
    edited versions (sharing rare passages), pieces of it, chunks over the old span, chunks
    of its document sharing its rarest words. A second pass over the corpus is asked for
    when the scan met no chunk sharing content."""
    missing = _status(st, Status.MISSING)
    t = st.t
    if t is None:  # a fingerprint only: where the span was is all there is to show
        biggest = sorted(st.spans, key=lambda p: -(p[2] - p[1]))[:TOP_N]
        cands = tuple((c.id, _jaccard(b - a, c.end - c.start, b - a)) for c, a, b in biggest)
        return Verdict(missing, cands, Fix.REVIEW, query=None if cands else Query.QUESTION)
    scores: dict[str, float] = {}

    def add(cid: str, score: float) -> None:
        if score > scores.get(cid, 0.0):
            scores[cid] = score

    for sc, cid in sorted(((_dice(t, c), cid) for _, _, cid, c in st.near), key=lambda p: (-p[0], p[1])):
        add(cid, sc)
    for (cid, n), a, b in st.pieces.values():
        add(cid, _jaccard(len(t), n, b - a))
    for c, _, _ in st.spans:
        add(c.id, _dice(t, norm(c.text)))
    for sc, _, cid in sorted(st.nearby, key=lambda p: (-p[0], -p[1])):
        add(cid, round(min(sc, 0.999), 3))
    ranked = sorted(scores.items(), key=lambda p: -p[1])[:MAX_MISSING]
    content = st.near or st.pieces or st.nearby
    return Verdict(missing, tuple(ranked), Fix.REVIEW, query=None if content else Query.TEXT)
