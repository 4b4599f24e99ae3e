"""The similarity pass: a second read of the corpus, only for the labels that nothing holds
(and ``unknown`` ones), ranking chunks by the rare words of a query text.

For each (entry, query), the top-n chunks sharing the most of the query's rare words,
scored by the idf-weighted share of those words they contain. Lines are matched as bytes
(ASCII punctuation and case folded away) and parsed only when they share a word; with few
query words, whole blocks are searched for them instead of splitting every line.
"""

from __future__ import annotations

import heapq
import math
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeAlias

import orjson

from ..corpus import Chunk, iter_lines
from ..text import normalize_text
from .model import StaleEntry
from .scanner import STOP, Meter, Progress

FEW_TERMS = 24  # up to this many query words, search whole blocks for them instead of splitting lines
WORD = re.compile(r"\w+")

_PUNCT_CHARS = bytes(c for c in range(128) if not (chr(c).isalnum() or c == 95))  # incl. \\ of \\t
_PUNCT = bytes.maketrans(_PUNCT_CHARS, b" " * len(_PUNCT_CHARS))  # ASCII punctuation -> space
_WORDBYTE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") | frozenset(
    range(128, 256)
)

Match: TypeAlias = tuple[int, bytes, set[bytes]]  # (line number, raw line, query words it holds)
Hit: TypeAlias = tuple[int, int, str, tuple[bytes, ...]]  # (n words, -line, chunk id, words)


def _query_terms(text: str, df: Mapping[str, int], limit: int = 8) -> list[str]:
    """The rarest content words of a query (rarity judged on the remembered texts, a sample
    of the corpus; words never seen there count as rarest)."""
    words = [w for w in dict.fromkeys(WORD.findall(normalize_text(text))) if w not in STOP and len(w) > 2]
    words.sort(key=lambda w: (df.get(w, 0), -len(w)))
    return words[:limit]


def _word_at(low: bytes, i: int, j: int) -> bool:
    """Is ``low[i:j]`` a whole word (a JSON escape like ``\\n`` before it counts as a space)?"""
    ok_before = i == 0 or low[i - 1] not in _WORDBYTE or low[i - 2 : i] in (b"\\n", b"\\t", b"\\r")
    return ok_before and (j >= len(low) or low[j] not in _WORDBYTE)


def _blocks(path: Path, meter: Meter) -> Iterator[bytes]:
    """The file in blocks of about 4 MB that end at a line end (the last one too)."""
    rest = b""
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 22)
            if not block:
                if rest:
                    yield rest + b"\n"
                return
            meter.update(block)
            buf = rest + block
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                rest = buf
                continue
            rest = buf[cut:]
            yield buf[:cut]


def _lines_with_terms(path: Path, terms: set[bytes], meter: Meter, counter: list[int]) -> Iterator[Match]:
    """Yield ``(line number, raw line, terms it contains as whole words)`` for the lines of
    ``path`` holding any of a few ``terms`` (lowercase UTF-8): each 4 MB block is searched
    once per term, so lines without them cost nothing. ``counter[0]`` ends as the line count."""
    base = 0
    for buf in _blocks(path, meter):
        low = buf.lower()
        hits: dict[int, set[bytes]] = {}
        for t in terms:
            i = low.find(t)
            while i >= 0:
                j = i + len(t)
                if _word_at(low, i, j):
                    hits.setdefault(low.rfind(b"\n", 0, i) + 1, set()).add(t)
                i = low.find(t, j)
        line, at = base, 0
        for start in sorted(hits):
            line += buf.count(b"\n", at, start)
            at = start
            yield line + 1, buf[start : buf.find(b"\n", start)], hits[start]
        base += buf.count(b"\n")
    counter[0] = base


def _split_lines(
    lines: Iterable[tuple[int, bytes]], vocab: set[bytes], counter: list[int]
) -> Iterator[Match]:
    """Every line split into words (ASCII punctuation and JSON ``\\n`` as spaces)."""
    n = 0
    for lineno, raw in lines:
        if not raw or raw.isspace():
            continue
        n += 1
        low = raw.lower()
        if b"\\n" in low:
            low = low.replace(b"\\n", b" ")
        shared = vocab.intersection(low.translate(_PUNCT).split())
        if shared:
            yield lineno, raw, shared
    counter[0] = n


def _matches(
    corpus: str | Path | Iterable[Chunk],
    vocab: set[bytes],
    counter: list[int],
    progress: Progress | None,
    cancel: threading.Event | None,
    few_terms: int,
) -> Iterator[Match]:
    if isinstance(corpus, (str, Path)):
        meter = Meter(Path(corpus).stat().st_size, "similar", progress, cancel)
        if len(vocab) <= few_terms:
            return _lines_with_terms(Path(corpus), vocab, meter, counter)
        return _split_lines(iter_lines(Path(corpus), meter.update), vocab, counter)
    lines = ((ch.line, orjson.dumps({"id": ch.id, "text": normalize_text(ch.text)})) for ch in corpus)
    return _split_lines(lines, vocab, counter)


def _collect(
    matches: Iterator[Match], post: Mapping[bytes, list[int]], heaps: list[list[Hit]], keep: int
) -> dict[bytes, int]:
    """Keep, per query, the ``keep`` lines sharing most of its words; returns how many lines
    hold each word."""
    cdf: dict[bytes, int] = dict.fromkeys(post, 0)
    for lineno, raw, shared in matches:
        acc: dict[int, list[bytes]] = {}
        for w in shared:
            cdf[w] += 1
            for qi in post[w]:
                acc.setdefault(qi, []).append(w)
        cid: str | None = None
        for qi, ws in acc.items():
            h = heaps[qi]
            if len(h) >= keep and (len(ws), -lineno) <= h[0][:2]:
                continue
            if cid is None:
                try:
                    cid = orjson.loads(raw.lstrip(b"\xef\xbb\xbf"))["id"]
                except Exception:
                    break
            item: Hit = (len(ws), -lineno, str(cid), tuple(ws))
            if len(h) < keep:
                heapq.heappush(h, item)
            else:
                heapq.heapreplace(h, item)
    return cdf


def similar(
    need: Sequence[tuple[StaleEntry, str]],
    corpus: str | Path | Iterable[Chunk],
    top_n: int,
    df: Mapping[str, int],
    progress: Progress | None,
    cancel: threading.Event | None,
    few_terms: int = FEW_TERMS,
) -> None:
    """Add up to ``top_n`` candidates to each entry of ``need`` (entry, query text)."""
    qterms = [_query_terms(q, df) for _, q in need]
    post: dict[bytes, list[int]] = {}
    for qi, ts in enumerate(qterms):
        for w in ts:
            post.setdefault(w.encode(), []).append(qi)
    if not post:
        return
    keep = max(top_n * 4, 12)
    heaps: list[list[Hit]] = [[] for _ in need]
    counter = [0]
    cdf = _collect(_matches(corpus, set(post), counter, progress, cancel, few_terms), post, heaps, keep)
    n = max(counter[0], 1)
    for (e, _), ts, h in zip(need, qterms, heaps):
        if not ts or not h:
            continue
        idf = {w.encode(): math.log(1 + n / (1 + cdf[w.encode()])) for w in ts}
        total = sum(idf.values()) or 1.0
        scored = sorted(
            ((round(sum(idf[w] for w in ws) / total, 3), -negline, cid) for _, negline, cid, ws in h),
            key=lambda p: (-p[0], p[1]),
        )
        have = {cid for cid, _ in e.candidates}
        extra = [(cid, sc) for sc, _, cid in scored if cid not in have and sc > 0][:top_n]
        e.candidates.extend(extra)
