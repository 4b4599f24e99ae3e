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

A chunks file is not fed whole: :mod:`.probe` first marks the chunks that concern a label
(in two processes when the file is big), then :meth:`Scanner._walk` reads those again and
the pieces next to them, and feeds them, in order, to the same loop chunks in memory go
through. A look back for the piece before one is bounded the same way in both: the last
four chunks met.
"""

from __future__ import annotations

import os
import sys
import threading
from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain
from pathlib import Path
from sys import intern
from typing import Any, BinaryIO, NoReturn, TypeAlias

import orjson

from ..corpus import Chunk, iter_chunks
from ..errors import CorpusError, Problem
from ..text import fingerprint
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
from .probe import Mark, Probe, probe_file

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

    def advance(self, n: int) -> None:
        """``n`` more bytes read (by this process or the probe's helper)."""
        self.done += n
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
        self.by_fp: dict[str, list[LabelState]] = {}  # of the texts as compared
        self.by_sha: dict[str, list[LabelState]] = {}  # recorded `sha`s of labels without a text
        for st in states:
            if st.fp:
                (self.by_fp if st.t is not None else self.by_sha).setdefault(st.fp, []).append(st)
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
        self.doc_ranges: dict[str, tuple[int, int]] = {}  # a file: doc -> (first line's offset, last's end)
        self.doc_chunks: dict[str, list[DocRow]] = {}  # in memory: doc -> rows
        self.recent: deque[tuple[int, int, Record]] = deque(maxlen=4)  # (seq, line, record)
        self._read_before: Callable[[int], tuple[int, int, Record] | None] | None = None  # see _walk
        self.made: dict[int, _Item] = {}  # seq -> the last few chunks met as items (their text normalised)
        self.pending: dict[int, list[int]] = {}  # seq expected next -> text-label indexes waiting
        self.corpus_name = corpus_name
        self.in_memory = in_memory
        self.dup_problems: list[Problem] = []
        self.seq = -1  # the last chunk's place in the corpus

    # ------------------------------------------------------------ one chunk

    def feed(self, lineno: int, rec: Record) -> None:
        """The next chunk of the corpus: a parsed JSONL line (a dict, checked) or a :class:`Chunk`."""
        self._consume([(self.seq + 1, lineno, rec)])

    def _consume(self, source: Iterable[tuple[int, int, Record]]) -> None:
        """Every chunk of ``source``, ``(its number in the corpus, line, record)`` in corpus
        order: every chunk in memory, or the chunks of a file the probe marked and their
        neighbours (:meth:`_walk`). Everything looked up is bound once and the common case
        is inline: in memory this runs for every chunk, and most concern no label."""
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
        doc_chunks, in_memory = self.doc_chunks, self.in_memory
        seq = self.seq
        try:
            for seq, lineno, rec in source:
                if isinstance(rec, dict):  # a parsed line
                    cid, text, start, end = rec["id"], rec["text"], rec.get("start"), rec.get("end")
                    if type(start) is not int or type(end) is not int:
                        start = end = None
                else:
                    cid, text, start, end = rec.id, rec.text, rec.start, rec.end
                remember((seq, lineno, rec))
                toks = text.split()
                st = states_get(cid)
                fp = all_fp or len(toks) in short_lens
                short = short_hit(toks) if short_hit is not None else None
                ws = anchor_hit(zip(toks, toks[1:], toks[2:]))
                if st is not None or fp or short or ws or (pending and seq in pending):
                    evidence(_Item(seq, lineno, rec), cid, st, fp, short, ws)
                if with_docs:
                    doc = rec.get("doc") if isinstance(rec, dict) else rec.doc
                    if type(doc) is str:  # anything else (a list, a number) names no document
                        if in_memory and doc in doc_labels:  # (a file: the probe notes where it lies)
                            doc_chunks.setdefault(doc, []).append((seq, cid, toks))
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
        found = self.by_fp.get(_fp(item.norm), [])
        if self.by_sha:  # (a recorded `sha` folds case: ragtriage.core.text.fingerprint)
            text = item.rec["text"] if isinstance(item.rec, dict) else item.rec.text
            found = found + self.by_sha.get(fingerprint(text), [])
        for h in found:
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
            if r == "holds" and len(c) != len(lst.t) and not holds_words(c, lst.t):
                r = None  # only inside a longer word or number (`is 2.` in `is 2.5.`): edited
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
        if iv[0] > 0 and seq - 1 >= max(0, self.recent[-1][0] - 3):  # the piece before, however short,
            prev = self.made.get(seq - 1)  # if it is among the last four chunks met
            if prev is None:
                before = self._before(seq)
                prev = _Item(*before) if before is not None else None
            if prev is not None and prev.seq not in st.pieces:
                r = _relate_near(prev.norm, t)
                if isinstance(r, tuple) and r[1] >= iv[0] - 1:
                    self._accept(li, prev, r)
        if iv[1] < len(t):
            self.pending.setdefault(seq + 1, []).append(li)

    def _before(self, seq: int) -> tuple[int, int, Record] | None:
        """The chunk before chunk ``seq``, one of the last four met (in a file the walk may
        have skipped it: it is read back)."""
        before = next((r for r in self.recent if r[0] == seq - 1), None)
        if before is None and self._read_before is not None:
            before = self._read_before(seq)
        return before

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

    def probe(self) -> Probe:
        """What makes a chunk of a file worth reading: the questions :meth:`_consume` asks."""
        spans = {
            d: (self.span_starts[d], [s.end or 0 for s in lst], self.span_max[d])
            for d, lst in self.span_docs.items()
        }
        return Probe(
            frozenset(self.states),
            self.all_fp,
            frozenset(self.short_lens),
            frozenset(self.short_words),
            frozenset(self.anchor_keys),
            frozenset(self.doc_labels),
            spans,
        )

    def scan(
        self,
        corpus: str | Path | Iterable[Chunk],
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        """Feed every chunk of ``corpus`` (a chunks file, streamed, or chunks in memory).
        Raises :class:`CorpusError` for a bad file.

        A file is probed first (:mod:`.probe`, in two processes when it is big), then only
        the chunks the probe marked, and their neighbours, are read again and fed, in order."""
        if not isinstance(corpus, (str, Path)):
            self._consume((seq, ch.line, ch) for seq, ch in enumerate(corpus, self.seq + 1))
            self.finish()
            return
        path = Path(corpus)
        if not path.is_file():
            for _ in iter_chunks(path):  # raises the located CorpusError (missing file, folder)
                pass
        seen = path.stat()
        meter = Meter(seen.st_size, "scan", progress, cancel)
        marks = probe_file(path, self.probe(), seen.st_size, meter.advance)
        if marks.bad is not None:
            _bad_line(path, marks.bad)
        self.doc_ranges = marks.docs
        base = self.seq + 1  # the probe numbers chunks from the file's first
        if marks.at:
            self._consume(self._walk(path, seen, marks.at, base))
        self.seq = base + marks.records - 1
        self.finish()

    def _walk(
        self, path: Path, seen: os.stat_result, at: list[Mark], base: int
    ) -> Iterator[tuple[int, int, Record]]:
        """The marked chunks of ``path`` (numbered from ``base``) and the ones a split piece
        waits for after them, parsed, in order: ``(number, line, record)``. A chunk before
        one is read back when :meth:`_accept` looks for it (:meth:`_before`)."""
        pending = self.pending
        where: dict[int, tuple[int, int]] = {}  # number -> (offset, line) of the last few met

        def note(seq: int, off: int, lineno: int) -> None:
            if len(where) > 16:  # keep the ones a look back can reach (see _before)
                for k in [k for k in where if k < seq - 4]:
                    del where[k]
            where[seq] = (off, lineno)

        with open(path, "rb", buffering=0) as f:  # one read per line asked
            now = os.fstat(f.fileno())
            if (now.st_ino, now.st_size, now.st_mtime_ns) != (seen.st_ino, seen.st_size, seen.st_mtime_ns):
                _changed(path, None)
            lines = _Lines(f, now.st_size)  # read where needed (a map would count in RSS)

            def record(off: int, lineno: int, raw: bytes | None = None) -> dict[str, Any]:
                if raw is None:
                    raw = lines.at(off)
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                try:
                    rec = orjson.loads(raw)
                    if (
                        type(rec) is not dict
                        or type(rec.get("id")) is not str
                        or type(rec.get("text")) is not str
                    ):
                        raise ValueError
                except ValueError:
                    _changed(path, lineno)
                return rec

            def blank(raw: bytes, lineno: int) -> bool:  # the probe's rule
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                return not raw or raw.isspace()

            def follow(off: int, lineno: int, seq: int, upto: int) -> Iterator[tuple[int, int, Record]]:
                """The chunks after chunk ``seq`` (at ``off``) that a split piece waits for,
                before chunk ``upto`` (a marked one, which the file must still hold)."""
                if not (seq + 1 < upto and seq + 1 in pending):
                    return  # (the common case: nothing waits)
                raw = lines.at(off)
                while seq + 1 < upto and seq + 1 in pending:
                    while True:  # the next line that is not blank
                        off, lineno = off + len(raw) + 1, lineno + 1
                        if off >= lines.size:
                            if upto != _END:  # the file is not what was probed
                                _changed(path, None)
                            return
                        raw = lines.at(off)
                        if not blank(raw, lineno):
                            break
                    seq += 1
                    note(seq, off, lineno)
                    yield seq, lineno, record(off, lineno, raw)

            def read_before(seq: int) -> tuple[int, int, Record] | None:
                pos = where.get(seq)
                if pos is None:
                    return None
                off, lineno = pos
                while off > 0:
                    off, lineno = lines.start_before(off), lineno - 1
                    if not blank(lines.at(off), lineno):
                        note(seq - 1, off, lineno)
                        return seq - 1, lineno, record(off, lineno)
                return None

            self._read_before = read_before
            try:
                last: tuple[int, int, int] | None = None  # (offset, line, number) of the last mark
                for off, lineno, seq in at:
                    seq += base
                    if last is not None:
                        yield from follow(*last, seq)
                    last = (off, lineno, seq)
                    note(seq, off, lineno)
                    yield seq, lineno, record(off, lineno)
                if last is not None:
                    yield from follow(*last, _END)
            finally:
                self._read_before = None


class _Lines:
    """Lines of a file read where asked: the walk reads about one chunk in sixteen."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f = f
        self.size = size

    def read(self, n: int, off: int) -> bytes:
        self.f.seek(off)
        return self.f.read(n)

    def at(self, off: int) -> bytes:
        """The line starting at ``off``, without its newline."""
        n = 4096
        while True:
            data = self.read(n, off)
            nl = data.find(b"\n")
            if nl >= 0:
                return data[:nl]
            if off + len(data) >= self.size or not data:
                return data
            n *= 4

    def start_before(self, off: int) -> int:
        """Where the line before the one starting at ``off`` (> 0) starts."""
        end = off - 1  # its newline
        n = 4096
        while True:
            lo = max(0, end - n)
            nl = self.read(end - lo, lo).rfind(b"\n")
            if nl >= 0:
                return lo + nl + 1
            if lo == 0:
                return 0
            n *= 4


_END = sys.maxsize  # no marked chunk follows


def _changed(path: Path, lineno: int | None) -> NoReturn:
    raise CorpusError(
        Problem(str(path), lineno, "the chunks file changed while it was being checked: check again")
    )


def document_chunks(
    corpus: str | Path | Iterable[Chunk],
    docs: set[str],
    ranges: dict[str, tuple[int, int]],
    in_memory: dict[str, list[DocRow]],
) -> Iterator[tuple[str, list[DocRow]]]:
    """Yield ``(doc, rows)`` for a few documents: in memory from what the scan kept, from a
    file by reading again only the bytes from the document's first line to its last (the
    probe noted them)."""
    if not isinstance(corpus, (str, Path)):
        for doc in docs:
            yield doc, in_memory.get(doc, [])
        return
    with open(corpus, "rb") as f:
        for doc in docs:
            r = ranges.get(doc)
            if r is None:
                continue
            f.seek(r[0])
            yield doc, _rows_of(f.read(r[1] - r[0]), r[0], doc)


def _rows_of(buf: bytes, lo: int, doc: str) -> list[DocRow]:
    rows: list[DocRow] = []
    for k, raw in enumerate(buf.split(b"\n")):
        if not raw.strip():
            continue
        try:
            rec = orjson.loads(raw.lstrip(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError:
            continue  # (the scan read every line: the file changed since)
        if rec.get("doc") == doc:
            rows.append((lo + k, rec["id"], rec["text"].split()))
    return rows
