"""One pass over the new corpus, fed one chunk at a time, gathering evidence for every label.

How it stays linear in the corpus: each chunk is split into words and its word trigrams
are intersected with an index of *anchors* (the rarest interior trigram of each remembered
text per ~:data:`GAP` characters); only the few labels an anchor points at are compared, on
normalised text: equal (``exact``), holding the whole remembered text (``holders``), or
covering part of it (a split ``piece``; the neighbours of a piece are checked too, so short
edge pieces are found). Short texts (under five words) and fingerprint-only labels are
matched by fingerprint. Spans (``doc``/``start``/``end``) on both sides are indexed per
document. A chunk sharing anchors but none of the text is kept (bounded) as a similarity
candidate. Memory: the labels and their indexes, never the corpus.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain
from pathlib import Path
from sys import intern
from typing import Any, NoReturn, TypeAlias

import orjson

from ..corpus import Chunk, iter_chunks, iter_lines
from ..errors import CorpusError, Problem
from .evidence import (
    MAX_HOLDERS,
    MAX_PIECES,
    SHORT_WORDS,
    Interval,
    LabelState,
    _fp,
    _relate,
    _relate_near,
    _split_norm,
    holds_words,
)
from .model import Cancelled

GAP = 80  # an anchor (word trigram) at least every GAP characters of a remembered text
RARE_WORDS = 12  # a label's rarest words, compared with the chunks of its document
STOP = frozenset(
    "the a an and or of to in on at for by with from as is are was were be been it its this that these those "
    "what which who how when where why do does did can could should would will not no yes if then than so "
    "you your i we our they their he she his her them there here into about also use used using".split()
)

Progress: TypeAlias = Callable[[str, int, int], None]
Record: TypeAlias = "dict[str, Any] | Chunk"  # a parsed JSONL line, or an in-memory chunk
Trigram: TypeAlias = tuple[str, str, str]
DocRow: TypeAlias = tuple[int, str, list[str]]  # (order in the corpus, chunk id, words)


class Meter:
    """Counts the bytes read, reports progress, honours the cancel event."""

    def __init__(
        self, total: int, phase: str, progress: Progress | None, cancel: threading.Event | None
    ) -> None:
        self.done = 0
        self.total = total
        self.phase = phase
        self.progress = progress
        self.cancel = cancel

    def update(self, block: bytes) -> None:
        self.done += len(block)
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
        if self.progress is not None:
            self.progress(self.phase, self.done, self.total)


def _bad_line(path: Path, lineno: int) -> NoReturn:
    """Let the corpus reader word the problem with the line, so every command says the same."""
    for _ in iter_chunks(path):
        pass
    raise CorpusError(Problem(str(path), lineno, "not a chunk (expected {\"id\": ..., \"text\": ...})"))


def _chunk(rec: Record, lineno: int) -> Chunk:
    if isinstance(rec, Chunk):
        return rec
    start, end = rec.get("start"), rec.get("end")
    return Chunk(
        rec["id"],
        rec["text"],
        rec.get("doc"),
        start if isinstance(start, int) else None,
        end if isinstance(end, int) else None,
        None,
        lineno,
    )


def _group(states: Iterable[LabelState]) -> dict[str, list[LabelState]]:
    """The labels with a document, by document."""
    out: dict[str, list[LabelState]] = {}
    for st in states:
        if st.doc is not None:
            out.setdefault(st.doc, []).append(st)
    return out


def _span_len(st: LabelState) -> int:
    return 0 if st.start is None or st.end is None else st.end - st.start


def _grams(toks: list[str]) -> list[Trigram]:
    inner = toks[1:-1]
    return list(zip(inner, inner[1:], inner[2:]))


def _anchor_positions(t: str, toks: list[str], key_at: list[int]) -> list[int]:
    """Word positions of the anchors of one text: in each bucket of about GAP characters,
    the interior trigram whose words the fewest texts share (``key_at[j]``)."""
    n_grams = len(key_at) - 1
    starts = list(accumulate(map(len, toks), lambda acc, n: acc + n + 1, initial=0))[:-1]
    n_b = max(1, round(len(t) / GAP))  # buckets of about GAP characters, none tiny
    best: list[int] = []
    lo = 1
    for b in range(n_b):
        hi = bisect_left(starts, (b + 1) * len(t) // n_b, lo) if b < n_b - 1 else n_grams + 1
        hi = min(hi, n_grams + 1)
        if hi > lo:
            best.append(min(range(lo, hi), key=key_at.__getitem__))
        lo = max(lo, hi)
    return best


def _anchor_index(states: list[LabelState]) -> dict[Trigram, list[int]]:
    """Rare interior word trigrams of each remembered text, at least one per GAP characters
    (the first and last word are left out: an old chunk may have cut them mid-word): the
    one whose words the fewest remembered texts share (word counts only: counting every
    trigram of 10,000 texts would cost more memory than the rest of the check).
    Anchors are indexed as written in the label and as normalised, because chunks are probed
    on their raw words (normalising every chunk costs too much). Probing chunks at every
    other word, with anchors indexed in pairs, was measured slower: the extra, commoner
    anchors cost more in false hits than the saved probes."""
    # each text's words, interned (the index keeps these words: one copy of each), split once
    # for the count and the anchors: kept as plain strings they cost 20 MB more at 10k labels
    words = [list(map(intern, st.t.split())) if st.t is not None else [] for st in states]
    wdf = Counter(chain.from_iterable(map(set, words)))
    index: dict[Trigram, list[int]] = {}
    for li, st in enumerate(states):
        if st.t is None or st.raw is None:
            continue
        toks = words[li]
        grams = _grams(toks)
        if not grams:
            continue  # fewer than 5 words: found by fingerprint only
        raw = list(map(intern, st.raw.split()))
        key_at = [0] + [wdf[a] + wdf[b] + wdf[c] for a, b, c in grams]  # key_at[j]: trigram at word j
        best = _anchor_positions(st.t, toks, key_at)
        same = len(raw) == len(toks)
        keys: set[Trigram] = set()
        for j in best:
            keys.add((toks[j], toks[j + 1], toks[j + 2]))
            if same:
                keys.add((raw[j], raw[j + 1], raw[j + 2]))
        for g in keys:
            index.setdefault(g, []).append(li)
        st.n_anchors = len(best)
        if st.doc is not None:  # its rarest words, for same-document similarity
            pairs = zip(raw, toks) if same else zip(toks, toks)
            ranked = sorted(
                {w: wdf[n] for w, n in pairs if len(n) > 2 and n not in STOP}.items(), key=lambda p: p[1]
            )
            st.words = frozenset(w for w, _ in ranked[:RARE_WORDS]) or None
    return index


_EDGE = "\"'()[]{}«»“”‘’¿¡.,:;?!…-*_`"
_AFTER = ("", ".", ",", ":", ";", "?", "!", ")", '"', "'", "…")


def _short_keys(st: LabelState) -> set[str]:
    """Words a chunk holding a short text has as written: its longest word, in the label's and
    in normalised spelling, capitalised or not, with the punctuation that may follow it."""
    words = [w.strip(_EDGE) for w in (st.t or "").split()]
    raws = [w.strip(_EDGE) for w in (st.raw or "").split()]
    if not words or not max(words, key=len):
        return set()
    k = max(range(len(words)), key=lambda i: len(words[i]))
    bases = {words[k]} | ({raws[k]} if len(raws) == len(words) else set())
    out: set[str] = set()
    for b in bases:
        for w in {b, b.lower(), b.capitalize(), b.upper()}:
            for a in _AFTER:
                out.update((w + a, "(" + w + a, '"' + w + a))
    return out


def _short_index(states: Iterable[LabelState]) -> dict[str, list[LabelState]]:
    index: dict[str, list[LabelState]] = {}
    for st in states:
        if st.short:
            for key in _short_keys(st):
                index.setdefault(key, []).append(st)
    return index


class _Item:
    """One chunk as the scanner met it; its normalised text is computed when first needed."""

    __slots__ = ("seq", "line", "rec", "_norm")

    def __init__(self, seq: int, line: int, rec: Record) -> None:
        self.seq = seq
        self.line = line
        self.rec = rec
        self._norm: str | None = None

    @property
    def norm(self) -> str:
        if self._norm is None:
            text = self.rec["text"] if isinstance(self.rec, dict) else self.rec.text
            self._norm = " ".join(_split_norm(text))
        return self._norm

    @property
    def id(self) -> str:
        return self.rec["id"] if isinstance(self.rec, dict) else self.rec.id

    def chunk(self) -> Chunk:
        return _chunk(self.rec, self.line)


class Scanner:
    """Fed the new corpus one chunk at a time (:meth:`feed`), in file order; gathers the
    evidence on each :class:`LabelState` for the judge. Keeps the labels and their indexes,
    never the corpus."""

    def __init__(self, states: Sequence[LabelState], corpus_name: str | None, in_memory: bool) -> None:
        self.states = {st.id: st for st in states}
        self.textual = [st for st in states if st.t]
        self.anchors = _anchor_index(self.textual)
        self.anchor_keys = set(self.anchors)
        self.by_fp: dict[str, list[LabelState]] = {}
        for st in states:
            if st.fp:
                self.by_fp.setdefault(st.fp, []).append(st)
        self.span_docs = _group(st for st in states if st.start is not None)  # doc -> by start
        for lst in self.span_docs.values():
            lst.sort(key=lambda s: s.start or 0)
        self.span_max = {d: max(_span_len(s) for s in lst) for d, lst in self.span_docs.items()}
        self.span_starts = {d: [s.start or 0 for s in lst] for d, lst in self.span_docs.items()}
        self.short_lens = {st.n_words for st in self.textual if st.n_words < SHORT_WORDS}
        self.all_fp = any(st.t is None and st.fp for st in states)  # sha-only: fingerprint every chunk
        self.short_index = _short_index(self.textual)  # a word as written -> short texts
        self.short_words = set(self.short_index)
        self.doc_labels = _group(st for st in self.textual if st.words)
        self.doc_ranges: dict[str, tuple[int, int]] = {}  # doc -> (bytes read at its first, last chunk)
        self.doc_chunks: dict[str, list[DocRow]] = {}  # in memory: doc -> rows
        self.recent: deque[tuple[int, int, Record]] = deque(maxlen=4)  # (seq, line, record)
        self.made: dict[int, _Item] = {}  # seq -> the last few chunks met as items (their text normalised)
        self.pending: dict[int, list[int]] = {}  # seq expected next -> text-label indexes waiting
        self.corpus_name = corpus_name
        self.in_memory = in_memory
        self.dup_problems: list[Problem] = []
        self.seq = -1  # the last chunk's place in the corpus

    # ------------------------------------------------------------ one chunk

    def feed(self, lineno: int, rec: Record) -> None:
        """One chunk of the corpus: a parsed JSONL line (a dict, checked) or a :class:`Chunk`."""
        self._consume([(lineno, rec)], None, None)

    def _consume(self, source: Iterable[tuple[int, Any]], path: Path | None, meter: Meter | None) -> None:
        """Every chunk of ``source``: ``(line, raw JSONL bytes)`` of the file ``path`` read
        through ``meter``, or ``(line, record)`` without either. One loop for both, with everything it looks up bound
        once and the common case inline (no call per chunk): it runs a million times, and
        most chunks concern no label, so they cost a split and a few set look-ups."""
        states_get = self.states.get
        all_fp, short_lens = self.all_fp, self.short_lens
        short_hit = self.short_words.intersection if self.short_words else None
        anchor_hit = self.anchor_keys.intersection
        pending = self.pending
        remember = self.recent.append
        evidence = self._evidence
        doc_labels, span_docs = self.doc_labels, self.span_docs
        with_docs = bool(doc_labels or span_docs)
        span_hits = self._span_hits
        doc_ranges, doc_chunks, in_memory = self.doc_ranges, self.doc_chunks, self.in_memory
        loads = orjson.loads
        seq = self.seq
        try:
            for lineno, raw in source:
                if path is None:  # in memory: a Chunk, or a record already parsed
                    rec = raw
                    if type(rec) is dict:
                        cid, text, start, end = rec["id"], rec["text"], rec.get("start"), rec.get("end")
                        if type(start) is not int or type(end) is not int:
                            start = end = None
                    else:
                        cid, text, start, end = rec.id, rec.text, rec.start, rec.end
                else:
                    if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                        raw = raw[3:]
                    if not raw or raw.isspace():
                        continue
                    try:
                        rec = loads(raw)
                        cid = rec["id"]
                        text = rec["text"]
                        if type(cid) is not str or type(text) is not str or not cid or cid.isspace():
                            raise ValueError
                        start, end = rec.get("start"), rec.get("end")  # iter_chunks' rule: whole numbers
                        if not ((start is None or type(start) is int) and (end is None or type(end) is int)):
                            raise ValueError
                    except Exception:
                        _bad_line(path, lineno)
                seq += 1
                remember((seq, lineno, rec))
                toks = text.split()
                st = states_get(cid)
                fp = all_fp or len(toks) in short_lens
                short = short_hit(toks) if short_hit is not None else None
                ws = anchor_hit(zip(toks, toks[1:], toks[2:]))
                if st is not None or fp or short or ws or (pending and seq in pending):
                    evidence(_Item(seq, lineno, rec), cid, st, fp, short, ws)
                if with_docs:
                    doc = rec.get("doc") if type(rec) is dict else rec.doc
                    if type(doc) is str:  # anything else (a list, a number) names no document
                        if doc in doc_labels:  # where each labelled document lies (in memory: its chunks)
                            if in_memory:
                                doc_chunks.setdefault(doc, []).append((seq, cid, toks))
                            elif meter is not None:
                                at = meter.done  # bytes read so far: it moves once per block
                                r = doc_ranges.get(doc)
                                if r is None:
                                    doc_ranges[doc] = (at, at)
                                elif r[1] != at:
                                    doc_ranges[doc] = (r[0], at)
                        if start is not None and end is not None and doc in span_docs:
                            span_hits(doc, rec, lineno, start, end)
        finally:
            self.seq = seq

    def _evidence(
        self,
        item: _Item,
        cid: str,
        st: LabelState | None,
        fp: bool,
        short: set[str] | None,
        ws: set[Trigram],
    ) -> None:
        """What this chunk says about the labels it concerns."""
        made = self.made
        if len(made) > 8:
            made.clear()
        made[item.seq] = item
        if st is not None:
            self._own(st, item)
        if fp:
            self._by_fingerprint(item, cid)
        if short:
            self._short(item, cid, short)
        if ws:
            self._anchored(item, cid, ws)
        if self.pending:
            waiting = self.pending.pop(item.seq, None)
            if waiting:
                self._neighbour(item, waiting)

    def finish(self) -> None:
        """After the last chunk: a duplicated expected id is an error."""
        if self.dup_problems:
            raise CorpusError(self.dup_problems)

    def _own(self, st: LabelState, item: _Item) -> None:
        if st.own is not None:
            self.dup_problems.append(
                Problem(
                    self.corpus_name or "<chunks>",
                    item.line,
                    f"duplicate id {st.id!r} (first at line {st.own.line})",
                    field="id",
                )
            )
        st.own, st.own_norm = item.chunk(), item.norm

    def _by_fingerprint(self, item: _Item, cid: str) -> None:
        for h in self.by_fp.get(_fp(item.norm), ()):
            if h.id != cid and len(h.exact) < MAX_HOLDERS:
                h.exact.append(item.chunk())

    def _short(self, item: _Item, cid: str, hit: set[str]) -> None:
        """Chunks holding a short text as whole words (not the same text: see fingerprints)."""
        c = item.norm
        seen: set[str] = set()
        for key in hit:
            for st in self.short_index[key]:
                t = st.t
                if st.id in seen or st.id == cid or t is None or len(st.contains) >= MAX_HOLDERS:
                    continue
                seen.add(st.id)
                if len(c) != len(t) and holds_words(c, t):
                    st.contains.append(item.chunk())

    def _anchored(self, item: _Item, cid: str, ws: set[Trigram]) -> None:
        c = item.norm
        seen: dict[int, int] = {}
        for w in ws:
            for li in self.anchors[w]:
                seen[li] = seen.get(li, 0) + 1
        for li, nh in seen.items():
            lst = self.textual[li]
            assert lst.t is not None
            r = _relate(c, lst.t)
            if r is None:
                lst.near_hit(cid, nh, item.seq, c)
            elif r == "holds":
                if len(c) != len(lst.t):
                    if len(lst.holders) < MAX_HOLDERS:
                        lst.holders.append(item.chunk())
                elif lst.id != cid and len(lst.exact) < MAX_HOLDERS and all(x.id != cid for x in lst.exact):
                    lst.exact.append(item.chunk())
            else:
                self._accept(li, item, r)

    def _accept(self, li: int, item: _Item, iv: Interval) -> None:
        """``item`` covers ``iv`` of label ``li``'s text: a split piece. Its neighbours are
        looked at too (the one before now, the one after when it comes)."""
        st = self.textual[li]
        t = st.t
        assert t is not None
        seq = item.seq
        if seq in st.pieces or len(st.pieces) >= MAX_PIECES:
            return
        st.pieces[seq] = ((item.id, len(item.norm)), iv[0], iv[1])  # id and length only, not the text
        if iv[0] > 0:  # look back for the piece before, however short
            prev = self.made.get(seq - 1)
            if prev is None:
                before = next((r for r in self.recent if r[0] == seq - 1), None)
                prev = _Item(*before) if before is not None else None
            if prev is not None and prev.seq not in st.pieces:
                r = _relate_near(prev.norm, t)
                if isinstance(r, tuple) and r[1] >= iv[0] - 1:
                    self._accept(li, prev, r)
        if iv[1] < len(t):
            self.pending.setdefault(seq + 1, []).append(li)

    def _neighbour(self, item: _Item, waiting: list[int]) -> None:
        """The chunk after a piece: does it carry on the text, however short the overlap?"""
        c = item.norm
        for li in waiting:
            lst = self.textual[li]
            assert lst.t is not None
            if item.seq in lst.pieces:
                continue
            r = _relate_near(c, lst.t)
            prev = lst.pieces.get(item.seq - 1)
            if isinstance(r, tuple) and prev is not None and r[0] <= prev[2] + 1:
                self._accept(li, item, r)

    def _span_hits(self, doc: str, rec: Record, lineno: int, start: int, end: int) -> None:
        """The labels of ``doc`` whose old span this chunk (``start``-``end``) overlaps (the
        chunk is made only for an overlap: most chunks of a labelled document overlap none)."""
        lst = self.span_docs[doc]
        starts = self.span_starts[doc]
        lo = bisect_left(starts, start - self.span_max[doc])
        hi = bisect_left(starts, end)
        ch: Chunk | None = None
        for s_ in lst[lo:hi]:
            assert s_.start is not None and s_.end is not None
            a, b = max(s_.start, start), min(s_.end, end)
            if a < b:
                if ch is None:
                    ch = _chunk(rec, lineno)
                s_.spans.append((ch, a - s_.start, b - s_.start))

    # ------------------------------------------------------------ the corpus

    def scan(
        self,
        corpus: str | Path | Iterable[Chunk],
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ) -> Meter | None:
        """Feed every chunk of ``corpus`` (a chunks file, streamed, or chunks in memory);
        returns the file's meter (None in memory). Raises :class:`CorpusError` for a bad file."""
        if not isinstance(corpus, (str, Path)):
            self._consume(((ch.line, ch) for ch in corpus), None, None)
            self.finish()
            return None
        path = Path(corpus)
        if not path.is_file():
            for _ in iter_chunks(path):  # raises the located CorpusError (missing file, folder)
                pass
        meter = Meter(path.stat().st_size, "scan", progress, cancel)
        self._consume(iter_lines(path, meter.update), path, meter)
        self.finish()
        return meter


def document_chunks(
    corpus: str | Path | Iterable[Chunk],
    docs: set[str],
    ranges: dict[str, tuple[int, int]],
    in_memory: dict[str, list[DocRow]],
) -> Iterator[tuple[str, list[DocRow]]]:
    """Yield ``(doc, rows)`` for a few documents: in memory from what the scan kept, from a
    file by re-reading only the byte range where the scan met the document."""
    if not isinstance(corpus, (str, Path)):
        for doc in docs:
            yield doc, in_memory.get(doc, [])
        return
    block = 1 << 22
    with open(corpus, "rb") as f:
        for doc in docs:
            first, last = ranges.get(doc, (0, 0))
            if not last:
                continue
            lo = max(0, first - 2 * block)  # a line met when `first` bytes were read starts after this
            f.seek(lo)
            buf = f.read(last - lo)
            if lo:
                buf = buf[buf.find(b"\n") + 1 :]
            yield doc, _rows_of(buf, lo, doc)


def _rows_of(buf: bytes, lo: int, doc: str) -> list[DocRow]:
    rows: list[DocRow] = []
    for k, raw in enumerate(buf.split(b"\n")):
        if not raw.strip():
            continue
        try:
            rec = orjson.loads(raw.lstrip(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError:
            continue  # the first pass read every line: only a cut one can fail here
        if rec.get("doc") == doc:
            rows.append((lo + k, rec["id"], rec["text"].split()))
    return rows
