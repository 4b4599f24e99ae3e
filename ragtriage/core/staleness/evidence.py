"""Evidence about one remembered label, and the small text helpers that gather and score it.

Everything here compares *normalised* text (:func:`norm`): NFC, whitespace collapsed, and
nothing else folded (``Maßen`` is not ``Massen``, ``APT`` is not ``Apt``: a label is fresh
only when its text is still there as written). Intervals are character offsets in the
normalised remembered text. A text is held by a chunk only on token boundaries
(:func:`holds_words`): ``is 2.`` is not in ``is 2.5.``, ``item 2`` not in ``item 20``.
"""

from __future__ import annotations

import hashlib
import heapq
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from ..corpus import Chunk
from ..text import fingerprint as legacy_fingerprint

TOP_N = 3  # similarity candidates per label
MAX_HOLDERS = 8  # identical / containing chunks kept per label
MAX_PIECES = 64  # split pieces kept per label
SHORT_WORDS = 5  # texts with fewer words have no anchor trigram: matched by fingerprint

Interval: TypeAlias = tuple[int, int]
Relation: TypeAlias = "Literal['holds'] | Interval | None"
# a split piece: ((chunk id, normalised length of the chunk), a, b) with [a, b) covered in the text
Piece: TypeAlias = tuple[tuple[str, int], int, int]
# a chunk overlapping the label's old span: (chunk, a, b) in label-span coordinates
SpanHit: TypeAlias = tuple[Chunk, int, int]
Candidates: TypeAlias = tuple[tuple[str, float], ...]


def _fp(norm: str) -> str:
    """The fingerprint of an already normalised text (:func:`ragtriage.core.text.fingerprint`)."""
    return hashlib.blake2b(norm.encode("utf-8"), digest_size=6).hexdigest()


def _split_norm(text: str) -> list[str]:
    """The words of :func:`norm` (``" ".join`` of them is its result)."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text.split()


def _split_fold(text: str) -> list[str]:
    """The words of :func:`ragtriage.core.text.normalize_text` (case folded): for ranking
    similar chunks by their words, never for saying that a text is still there."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text.casefold().split()


def norm(text: str) -> str:
    """A text as labels are compared: NFC, every run of whitespace (a no-break space too) one
    space, trimmed; case and everything else kept (:func:`ragtriage.core.text.collapse`)."""
    return " ".join(_split_norm(text))


class LabelState:
    """What we know about one remembered label, and the evidence gathered for it."""

    __slots__ = (
        "id",
        "t",
        "fp",
        "doc",
        "start",
        "end",
        "has_text",
        "own",
        "own_norm",
        "exact",
        "holders",
        "pieces",
        "spans",
        "questions",
        "near",
        "n_anchors",
        "raw",
        "nearby",
        "words",
        "contains",
        "n_words",
    )

    def __init__(self, cid: str, lab: Any) -> None:
        text: Any
        if lab is None:
            text = sha = doc = start = end = None
        elif type(lab) is dict or isinstance(lab, Mapping):  # (dict first: the ABC check is slow)
            g = lab.get
            text, sha, doc, start, end = g("text"), g("sha"), g("doc"), g("start"), g("end")
        else:
            text, sha = getattr(lab, "text", None), getattr(lab, "sha", None)
            doc, start, end = (
                getattr(lab, "doc", None),
                getattr(lab, "start", None),
                getattr(lab, "end", None),
            )
        self.id = cid
        self.has_text = isinstance(text, str) and bool(text.strip())
        self.t: str | None = norm(text) if isinstance(text, str) and self.has_text else None
        self.raw: str | None = text if isinstance(text, str) and self.has_text else None
        self.n_words = len(self.t.split()) if self.t is not None else 0
        # the fingerprint of the text as compared (:func:`norm`); a label with only a `sha`
        # has the recorded one, which folds case (:func:`ragtriage.core.text.fingerprint`)
        self.fp: str | None = (
            _fp(self.t) if self.t is not None else (sha if isinstance(sha, str) and sha else None)
        )
        ok_span = isinstance(doc, str) and isinstance(start, int) and isinstance(end, int) and end > start
        self.doc: str | None = doc if isinstance(doc, str) else None
        self.start: int | None = start if ok_span else None
        self.end: int | None = end if ok_span else None
        self.own: Chunk | None = None  # the chunk with this id in the new corpus
        self.own_norm: str | None = None
        self.exact: list[Chunk] = []  # other chunks with the same fingerprint
        self.holders: list[Chunk] = []  # chunks whose text contains the remembered text
        self.contains: list[Chunk] = []  # a short text: chunks holding it as whole words
        self.pieces: dict[int, Piece] = {}  # seq -> split piece
        self.spans: list[SpanHit] = []  # span overlaps, label coordinates
        self.questions: list[str] = []
        self.near: list[tuple[float, int, str, str]] = []  # heap: (score, -seq, chunk id, text)
        self.nearby: list[tuple[float, int, str]] = []  # heap: (word share, -seq, chunk id)
        self.words: frozenset[str] | None = None
        self.n_anchors = 0

    def same_as(self, text: str, normed: str | None = None) -> bool:
        """Is ``text`` (``normed``: its :func:`norm`, when known) the remembered text? A label
        with a text compares texts; one with only a recorded `sha` compares that."""
        if self.t is not None:
            return (norm(text) if normed is None else normed) == self.t
        return self.fp is not None and legacy_fingerprint(text) == self.fp

    @property
    def short(self) -> bool:
        """Under :data:`SHORT_WORDS` words: no anchor; found by fingerprint or as whole words."""
        return self.t is not None and self.n_words < SHORT_WORDS

    @property
    def span(self) -> Interval | None:
        """The old span ``(start, end)`` in the label's document, when remembered."""
        if self.start is None or self.end is None:
            return None
        return self.start, self.end

    def near_hit(self, cid: str, n: int, seq: int, c: str) -> None:
        """A chunk shares ``n`` of the text's rare trigrams but holds none of it: an edited
        version, perhaps. The best few (with their text) are candidates if nothing holds it."""
        _push(self.near, (n / max(self.n_anchors, 1), -seq, cid, c))


def _push(heap: list[Any], item: tuple[Any, ...]) -> None:
    """Keep the best :data:`TOP_N` items of a min-heap."""
    if len(heap) < TOP_N:
        heapq.heappush(heap, item)
    elif item > heap[0]:
        heapq.heapreplace(heap, item)


def _edge_overlap(c: str, t: str, q: int) -> Interval | None:
    """The longest part of ``t`` that an edge of ``c`` covers, found through the first / last
    ``q`` characters of ``t``: a suffix of ``c`` that is a prefix of ``t``, or a prefix of
    ``c`` that is a suffix of ``t``."""
    lc, lt = len(c), len(t)
    best: Interval | None = None
    head = t[:q]
    i = c.find(head)
    while i >= 0:
        if t.startswith(c[i:]):
            best = (0, lc - i)
            break
        i = c.find(head, i + 1)
    tail = t[-q:]
    j = c.rfind(tail)
    while j >= 0:
        if t.endswith(c[: j + q]):
            if best is None or j + q > best[1] - best[0]:
                best = (lt - j - q, lt)
            break
        j = c.rfind(tail, 0, j + q - 1)
    return best


def _relate(c: str, t: str, q: int = 16) -> Relation:
    """How chunk text ``c`` overlaps remembered text ``t`` (both normalised): "holds",
    an interval (a, b) of ``t`` that ``c`` covers, or None. Edge overlaps shorter than
    ``q`` characters are not looked for here (see :func:`_relate_near`)."""
    lc, lt = len(c), len(t)
    if lc >= lt:
        if t in c:
            return "holds"
    else:
        i = t.find(c)
        if i >= 0:
            return (i, i + lc)
    return _edge_overlap(c, t, min(q, lt, lc))


def _relate_near(c: str, t: str) -> Relation:
    """Like :func:`_relate` but finds edge overlaps of any length (for a neighbour of a
    piece already found, where a short overlap is meaningful)."""
    r = _relate(c, t)
    if r is not None:
        return r
    lc, lt = len(c), len(t)
    best: Interval | None = None
    i = c.find(t[0], max(0, lc - lt))  # suffix of c == prefix of t
    while i >= 0:
        if t.startswith(c[i:]):
            best = (0, lc - i)
            break
        i = c.find(t[0], i + 1)
    j = c.rfind(t[-1], 0, min(lc, lt))  # prefix of c == suffix of t
    while j >= 0:
        if t.endswith(c[: j + 1]):
            if best is None or j + 1 > best[1] - best[0]:
                best = (lt - j - 1, lt)
            break
        j = c.rfind(t[-1], 0, j)
    return best


def _covers(t: str, intervals: Sequence[Interval]) -> bool:
    """Do the intervals cover ``t``, allowing gaps that are only whitespace (chunk edges)?"""
    end = 0
    for a, b in sorted(intervals):
        if a > end and t[end:a].strip():
            return False
        end = max(end, b)
    return not t[end:].strip()


def _covers_span(length: int, intervals: Sequence[Interval], raw: str | None = None) -> bool:
    """Do the intervals cover ``[0, length)``? With the remembered ``raw`` text of the span
    (as long as the span), gaps that are only whitespace there (a blank line a splitter
    dropped between chunks) do not break the coverage."""
    gap_ok = raw is not None and len(raw) == length
    end = 0
    for a, b in sorted(intervals):
        if a > end and not (gap_ok and raw is not None and not raw[end:a].strip()):
            return False
        end = max(end, b)
    return end >= length or (gap_ok and raw is not None and not raw[end:].strip())


def _w(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def cuts(s: str, p: int) -> bool:
    """Is ``p`` a token boundary of ``s``: not inside a word or an identifier (``gentoo_0``),
    nor inside a number (``2|.5``, ``2.|5``, ``-|5``, ``50|%``)? The ends of ``s`` are."""
    if p <= 0 or p >= len(s):
        return True
    a, b = s[p - 1], s[p]
    if _w(a) and _w(b):
        return False
    if b.isdigit():
        if a in ".," and p >= 2 and s[p - 2].isdigit():
            return False  # 2.|5
        if a in "-−+" and (p < 2 or not _w(s[p - 2])):
            return False  # a sign: -|5
    if a.isdigit() and (b in "%‰" or b in ".," and p + 1 < len(s) and s[p + 1].isdigit()):
        return False  # 2|.5, 50|%
    return True


def holds_words(c: str, t: str) -> bool:
    """Does ``c`` hold ``t`` (both normalised) on token boundaries (:func:`cuts`): not ``yes``
    in ``yesterday``, ``is 2.`` in ``is 2.5.``, ``item 2`` in ``item 20``?"""
    i = c.find(t)
    while i >= 0:
        if cuts(c, i) and cuts(c, i + len(t)):
            return True
        i = c.find(t, i + 1)
    return False


def text_over_span(st: LabelState, c: Chunk, a: int, b: int) -> str | None:
    """The text of chunk ``c`` over ``[a, b)`` of the label's old span (label coordinates),
    when the chunk's text maps onto its offsets character for character; else None."""
    if st.start is None or c.start is None or c.end is None or len(c.text) != c.end - c.start:
        return None
    i = st.start + a - c.start
    if i < 0 or i + (b - a) > len(c.text):
        return None
    return c.text[i : i + (b - a)]


def _dice(a: str, b: str) -> float:
    """Word overlap of two normalised texts, 2|A∩B| / (|A| + |B|) over word counts; below 1
    unless the texts are the same."""
    ca, cb = Counter(a.split()), Counter(b.split())
    n = sum(ca.values()) + sum(cb.values())
    score = 2 * sum((ca & cb).values()) / n if n else 0.0
    return 1.0 if a == b else min(round(score, 3), 0.999)


def _jaccard(lt: int, lc: int, overlap: int) -> float:
    u = lt + lc - overlap
    return round(overlap / u, 3) if u else 1.0


def _min_cover(length: int, pieces: list[SpanHit], raw: str | None = None) -> list[SpanHit]:
    """The fewest consecutive pieces (in order) that cover [0, length); with the remembered
    ``raw`` text, gaps that are only whitespace there are covered (see :func:`_covers_span`)."""

    def gap(a: int, b: int) -> bool:  # may [a, b) be left uncovered?
        return a >= b or (raw is not None and len(raw) == length and not raw[a:b].strip())

    best = pieces
    n = len(pieces)
    for i in range(n):
        end = 0
        for j in range(i, n):
            if pieces[j][1] > end and not gap(end, pieces[j][1]):
                break
            end = max(end, pieces[j][2])
            if gap(end, length):
                if j - i + 1 < len(best):
                    best = pieces[i : j + 1]
                break
    return best


def _best_run(t: str, pieces: Mapping[int, Piece]) -> list[Piece] | None:
    """The shortest run (two or more) of consecutive chunks whose pieces cover ``t``."""
    seqs = sorted(pieces)
    best: list[Piece] | None = None
    for i, s0 in enumerate(seqs):
        ivs: list[Interval] = []
        for j in range(i, len(seqs)):
            if seqs[j] != s0 + (j - i):
                break
            p = pieces[seqs[j]]
            ivs.append((p[1], p[2]))
            if _covers(t, ivs):
                run = [pieces[s] for s in seqs[i : j + 1]]
                if best is None or len(run) < len(best):
                    best = run
                break
    if best is not None and len(best) < 2:
        return None
    return best
