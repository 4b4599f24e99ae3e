"""The first look at every line of a chunks file: which chunks concern a label at all.

Most of a stale check is this look: a million chunks, each parsed, split into words and
tested against a few sets, of which about one in sixteen concerns a label
(``benchmarks/bench_stale.py``, 1M chunks x 10k labels: 64k). So a chunks file is
probed first, and the :class:`~.scanner.Scanner` then reads only the chunks the probe
marked, and their neighbours, in file order, straight from the file.

The probe is a pure function of a byte range and of :class:`Probe` (plain sets, cheap to
pickle), so a big file is probed in two halves at once, the second in a helper process on
the machine's second core (:mod:`.halves`).

The probe may mark more chunks than concern a label, never fewer: the scanner asks the
same questions again of every chunk it reads (``tests/core/test_stale_probe.py`` compares
the evidence chunk by chunk with a scan that reads everything).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Container, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TypeAlias

import orjson

from ..corpus import MAX_LINE
from .halves import in_halves

Trigram: TypeAlias = tuple[str, str, str]
Mark: TypeAlias = tuple[int, int, int]  # (byte offset of the line, line number, chunk number)

BLOCK = 1 << 22  # read 4 MB at a time (progress and cancel are checked per block)
_BOM = b"\xef\xbb\xbf"


class Probe(NamedTuple):
    """What makes a chunk worth reading (see the scanner, which builds it)."""

    ids: frozenset[str]  # a label's own id
    all_fp: bool  # fingerprint-only labels: every chunk
    short_lens: frozenset[int]  # word counts of short texts (fingerprinted)
    short_words: frozenset[str]  # a word a chunk holding a short text has
    anchors: frozenset[Trigram]  # the anchor trigrams of the remembered texts
    docs: frozenset[str]  # documents whose place in the file is noted
    spans: dict[str, tuple[list[int], list[int], int]]  # doc -> label starts (sorted), their ends, longest


class Marks(NamedTuple):
    """What the probe of one byte range found (numbers count from the range's start)."""

    at: list[Mark]  # the chunks to read, in file order
    lines: int  # lines in the range
    records: int  # chunks in the range (lines that are not blank)
    docs: dict[str, tuple[int, int]]  # a noted document -> (offset of its first line, end of its last)
    bad: int | None  # the first line that is not a chunk (the probe stops there)


def _has_bom(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(3) == _BOM


def _line_blocks(
    path: Path, lo: int, hi: int, on_block: Callable[[bytes], None] | None, bom: bool
) -> Iterator[list[bytes]]:
    """The lines of bytes ``lo``-``hi`` of ``path``, a block's worth at a time, without their
    newlines (the range's last line may have none); ``bom``: the range starts with a byte-order
    mark, left out of the first line. A line longer than :data:`MAX_LINE` is the last one
    given, whole or not: the reader stops there."""
    rest = b""
    with open(path, "rb") as f:
        f.seek(lo)
        left = hi - lo
        while left > 0:
            block = f.read(min(BLOCK, left))
            if not block:
                break
            left -= len(block)
            if on_block is not None:
                on_block(block)
            if bom:
                block, bom = block[len(_BOM) :], False
            parts = (rest + block).split(b"\n")
            rest = parts.pop()
            if left <= 0 and rest:  # the file's last line, without a newline
                parts.append(rest)
                rest = b""
            elif len(rest) > MAX_LINE:  # too long already: no need to read the rest of it
                parts.append(rest)
                yield parts
                return
            yield parts


def _record(raw: bytes) -> tuple[str, str, int | None, int | None, dict[str, Any]] | None:
    """``(id, text, start, end, the record)`` of a chunks-file line, or None when it is not a
    chunk (the rule of :func:`ragtriage.core.corpus.iter_chunks`: an id, a text, whole-number
    offsets)."""
    try:
        rec = orjson.loads(raw)
        cid = rec["id"]
        text = rec["text"]
        start, end = rec.get("start"), rec.get("end")
    except Exception:
        return None
    if type(cid) is not str or type(text) is not str or not cid or cid.isspace():
        return None
    if not ((start is None or type(start) is int) and (end is None or type(end) is int)):
        return None
    return cid, text, start, end, rec


def _over_a_span(spans: tuple[list[int], list[int], int], start: int | None, end: int | None) -> bool:
    """Does ``[start, end)`` (a chunk's offsets, when it has both) overlap a label's old span
    (``spans``: one document's)?"""
    if start is None or end is None:
        return False
    starts, ends, longest = spans
    for k in range(bisect_left(starts, start - longest), bisect_left(starts, end)):
        if max(starts[k], start) < min(ends[k], end):
            return True
    return False


def probe_range(
    path: Path, lo: int, hi: int, probe: Probe, *, on_block: Callable[[bytes], None] | None = None
) -> Marks:
    """Mark the chunks of the lines in bytes ``lo``-``hi`` of ``path`` (both at a line's
    start, or ``hi`` the file's end) that concern a label; note where each document lies.

    The loop is the hot path of a stale check (a million lines): what it asks of every line
    is inline; reading (:func:`_line_blocks`), parsing (:func:`_record`) and the span test
    (:func:`_over_a_span`, only for a chunk of a labelled document) are beside it."""
    ids, all_fp, short_lens, short_words, anchors, docs, spans = probe
    short_hit = short_words.intersection if short_words else None
    anchor_hit = anchors.intersection
    with_docs = bool(docs or spans)
    lens: Container[int] = _EVERY if all_fp else short_lens  # fingerprint-only labels: every chunk
    record = _record
    at: list[Mark] = []
    mark = at.append
    doc_at: dict[str, tuple[int, int]] = {}
    lineno = 0
    seq = -1
    bom = lo == 0 and _has_bom(path)
    off = lo + len(_BOM) if bom else lo  # where the next line starts (a chunk's line: after the mark)
    for parts in _line_blocks(path, lo, hi, on_block, bom):
        for raw in parts:
            lineno += 1
            here = off
            off += len(raw) + 1
            if len(raw) > MAX_LINE:
                return Marks(at, lineno, seq + 1, doc_at, lineno)
            if not raw or raw.isspace():
                continue
            got = record(raw)
            if got is None:
                return Marks(at, lineno, seq + 1, doc_at, lineno)
            cid, text, start, end, rec = got
            seq += 1
            toks = text.split()
            marked = (
                cid in ids
                or len(toks) in lens
                or (short_hit is not None and short_hit(toks))
                or anchor_hit(zip(toks, toks[1:], toks[2:]))
            )
            if marked:
                mark((here, lineno, seq))
            if with_docs:
                doc = rec.get("doc")
                if type(doc) is str:
                    if doc in docs:
                        r = doc_at.get(doc)
                        doc_at[doc] = (here if r is None else r[0], off - 1)
                    if not marked and doc in spans and _over_a_span(spans[doc], start, end):
                        mark((here, lineno, seq))
    return Marks(at, lineno, seq + 1, doc_at, None)


class _Every:
    """Holds every number (the word counts probed when a label has only a fingerprint)."""

    def __contains__(self, n: object) -> bool:
        return True


_EVERY = _Every()


def join(first: Marks, second: Marks) -> Marks:
    """The marks of two consecutive ranges, numbered from the first's start."""
    at = first.at + [(o, n + first.lines, s + first.records) for o, n, s in second.at]
    docs = dict(first.docs)
    for doc, (a, b) in second.docs.items():
        r = docs.get(doc)
        docs[doc] = (a if r is None else r[0], b)
    bad = first.bad if first.bad is not None else (None if second.bad is None else second.bad + first.lines)
    return Marks(at, first.lines + second.lines, first.records + second.records, docs, bad)


def probe_file(path: Path, probe: Probe, size: int, advance: Callable[[int], None]) -> Marks:
    """Probe the whole file (``size`` bytes), in two halves at once when it is big and a
    second core is free (:func:`.halves.in_halves`). ``advance(n)`` is told of every ``n``
    bytes read (by either side); it may raise (a cancel), which stops the helper."""
    first, second = in_halves(
        path, size, advance, probe_range, (probe,), stop=lambda first: first.bad is not None
    )
    return first if second is None else join(first, second)
