"""The similarity pass: a second read of the corpus, only for the labels that nothing holds
(and ``unknown`` ones), ranking chunks by the rare words of a query text.

For each (entry, query), the top-n chunks sharing the most of the query's rare words,
scored by the idf-weighted share of those words they contain. A chunk's words are those of
its id and its normalised text (:func:`_chunk_words`), whether it is read from a file or held
in memory, so ``ragtriage stale`` and the app propose the same chunks. A file's lines are
matched as bytes first (ASCII punctuation and case folded away) and parsed only when their
bytes may hold a query word; with few query words, whole blocks are searched for them
instead of splitting every line.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeAlias

import orjson

from ..corpus import Chunk, iter_lines
from ..text import normalize_text
from .evidence import _split_fold
from .halves import in_halves
from .model import StaleEntry
from .scanner import STOP, Meter, Progress

FEW_TERMS = 24  # up to this many query words, search whole blocks for them instead of splitting lines
WORD = re.compile(r"\w+")
CLEAN_WORDS = 500_000  # words remembered as holding no query word (~40 MB at most)

_PUNCT_CHARS = bytes(c for c in range(128) if not (chr(c).isalnum() or c == 95))  # incl. \\ of \\t
_PUNCT = bytes.maketrans(_PUNCT_CHARS, b" " * len(_PUNCT_CHARS))  # ASCII punctuation -> space

OnBlock: TypeAlias = Callable[[bytes], None]
Match: TypeAlias = tuple[int, str, set[bytes]]  # (line number, chunk id, query words it holds)
Hit: TypeAlias = tuple[int, int, str, tuple[bytes, ...]]  # (n words, -line, chunk id, words)


def _query_terms(text: str, df: Mapping[str, int], limit: int = 8) -> list[str]:
    """The rarest content words of a query (rarity judged on the remembered texts, a sample
    of the corpus; words never seen there count as rarest)."""
    words = [w for w in dict.fromkeys(WORD.findall(normalize_text(text))) if w not in STOP and len(w) > 2]
    words.sort(key=lambda w: (df.get(w, 0), -len(w)))
    return words[:limit]


# a line holding one is parsed whatever its bytes show: the escaped characters may form a word
_ODD_ESCAPE = re.compile(rb"\\[^ntr\"/]")  # a JSON escape other than n t r " / (u, b, f, a backslash)


def _text_words(text: str) -> list[bytes]:
    """The words of a normalised text (:func:`ragtriage.core.text.normalize_text`), as UTF-8,
    ASCII punctuation as spaces."""
    if text.isascii():  # the same words, faster: ASCII whitespace is ASCII punctuation to _PUNCT
        return text.encode().lower().translate(_PUNCT).split()
    return " ".join(_split_fold(text)).encode().translate(_PUNCT).split()


def _chunk_words(cid: str, text: str) -> list[bytes]:
    """What a chunk is searched as, read from a file or in memory alike: the words of its id
    and of its normalised text (its document and other fields are not its words)."""
    return _text_words(cid + " " + text)


def _words(raw: bytes) -> list[bytes]:
    """The words of a chunks-file line as its bytes show them: ASCII case and punctuation
    folded away, ``\\n`` ``\\t`` ``\\r`` escapes as spaces (other bytes are word bytes)."""
    low = raw.lower()
    if b"\\" in low:
        low = low.replace(b"\\n", b" ").replace(b"\\t", b" ").replace(b"\\r", b" ")
    return low.translate(_PUNCT).split()


def _may_hold(raw: bytes, vocab: set[bytes], clean: set[bytes]) -> bool:
    """Does this chunks-file line show a query word, or may it hold one its bytes do not show
    (an escape; a non-ASCII word in another case or composition: such a word is normalised
    once)? Only such lines are parsed. ``clean``: the words met that hold no query word in
    any spelling (most lines are only those: one set look-up per word, in C)."""
    words = _words(raw)
    if clean.issuperset(words):
        return _ODD_ESCAPE.search(raw) is not None
    if not vocab.isdisjoint(words) or _ODD_ESCAPE.search(raw) is not None:
        return True
    if len(clean) > CLEAN_WORDS:
        clean.clear()
    hold = False
    for w in words:
        if w not in clean:
            if w.isascii() or vocab.isdisjoint(_text_words(w.decode("utf-8", "replace"))):
                clean.add(w)
            else:
                hold = True
    return hold


@functools.cache
def _to_ascii() -> re.Pattern[str]:
    """The characters whose normalised form holds an ASCII letter or digit (``ß`` -> ss,
    ``ﬁ`` -> fi, the Kelvin sign -> k): a line holding one may hold an ASCII word its bytes
    do not show. Found once, when a file's block search first needs them (above U+2FFFF
    nothing normalises to ASCII: ``tests/core/test_stale_similarity.py`` checks)."""
    found = [
        c
        for c in map(chr, range(0x80, 0x30000))
        if any(x.isascii() and x.isalnum() for x in normalize_text(c))
    ]
    return re.compile("[" + re.escape("".join(found)) + "]")


def _exact(lineno: int, raw: bytes, vocab: set[bytes]) -> Match | None:
    """The query words a chunks-file line holds, as its chunk is searched (:func:`_chunk_words`)."""
    try:
        rec = orjson.loads(raw.lstrip(b"\xef\xbb\xbf"))
        cid, text = rec["id"], rec["text"]
        shared = vocab.intersection(_chunk_words(cid, text))
    except Exception:  # a blank line, or a line the scan already reported
        return None
    return (lineno, cid, shared) if shared else None


def _blocks(path: Path, lo: int, hi: int, on_block: OnBlock) -> Iterator[bytes]:
    """Bytes ``lo``-``hi`` of the file (both at a line's start, or ``hi`` its end) in blocks of
    about 4 MB that end at a line end (the last one too)."""
    rest = b""
    with open(path, "rb") as f:
        f.seek(lo)
        left = hi - lo
        while True:
            block = f.read(min(1 << 22, left)) if left > 0 else b""
            if not block:
                if rest:
                    yield rest + b"\n"
                return
            left -= len(block)
            on_block(block)
            buf = rest + block
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                rest = buf
                continue
            rest = buf[cut:]
            yield buf[:cut]


def _lines(
    path: Path, lo: int, hi: int, on_block: OnBlock, counter: list[int]
) -> Iterator[tuple[int, bytes]]:
    """``(line number from lo, line)`` of bytes ``lo``-``hi``; ``counter[0]`` ends as the
    number of lines."""
    for n, raw in iter_lines(path, on_block, lo=lo, hi=hi):
        counter[0] = n
        yield n, raw


def _lines_with_terms(
    path: Path, lo: int, hi: int, terms: set[bytes], on_block: OnBlock, counter: list[int]
) -> Iterator[Match]:
    """The lines of ``path`` holding one of a few ASCII query words: each 4 MB block is
    searched once per word (and for what may hide one: a ``\\u`` escape, a character
    normalising to ASCII), and only the lines found are parsed."""
    base = 0
    to_ascii = _to_ascii()
    for buf in _blocks(path, lo, hi, on_block):
        low = buf.lower()
        found = [*terms, b"\\u"]
        if not buf.isascii():
            found += [c.encode() for c in set(to_ascii.findall(buf.decode("utf-8", "replace")))]
        starts: set[int] = set()
        for t in found:
            i = low.find(t)
            while i >= 0:
                starts.add(low.rfind(b"\n", 0, i) + 1)
                end = low.find(b"\n", i)
                i = low.find(t, end) if end >= 0 else -1
        line, at = base, 0
        for start in sorted(starts):
            line += buf.count(b"\n", at, start)
            at = start
            hit = _exact(line + 1, buf[start : buf.find(b"\n", start)], terms)
            if hit is not None:
                yield hit
        base += buf.count(b"\n")
    counter[0] = base


def _split_lines(lines: Iterable[tuple[int, bytes]], vocab: set[bytes]) -> Iterator[Match]:
    """The lines holding a query word, for many words: each line split into words and
    parsed when it may hold one (:func:`_may_hold`)."""
    clean: set[bytes] = set()
    for lineno, raw in lines:
        if raw and not raw.isspace() and _may_hold(raw, vocab, clean):
            hit = _exact(lineno, raw, vocab)
            if hit is not None:
                yield hit


def _collect(
    matches: Iterator[Match], post: Mapping[bytes, list[int]], heaps: list[list[Hit]], keep: int
) -> dict[bytes, int]:
    """Keep, per query, the ``keep`` lines sharing most of its words; returns how many lines
    hold each word."""
    cdf: dict[bytes, int] = dict.fromkeys(post, 0)
    for lineno, cid, shared in matches:
        acc: dict[int, list[bytes]] = {}
        for w in shared:
            cdf[w] += 1
            for qi in post[w]:
                acc.setdefault(qi, []).append(w)
        for qi, ws in acc.items():
            h = heaps[qi]
            if len(h) >= keep and (len(ws), -lineno) <= h[0][:2]:
                continue
            item: Hit = (len(ws), -lineno, cid, tuple(ws))
            if len(h) < keep:
                heapq.heappush(h, item)
            else:
                heapq.heapreplace(h, item)
    return cdf


def collect_range(
    path: Path,
    lo: int,
    hi: int,
    vocab: set[bytes],
    post: Mapping[bytes, list[int]],
    keep: int,
    few: bool,
    n_queries: int,
    *,
    on_block: OnBlock,
) -> tuple[list[list[Hit]], dict[bytes, int], int]:
    """The second pass over bytes ``lo``-``hi`` of a chunks file: ``(per query the best lines,
    how many lines hold each word, lines read)``, lines numbered from ``lo`` (a job for
    :func:`.halves.in_halves`). ``few``: the words are a few ASCII ones, searched block by block."""
    heaps: list[list[Hit]] = [[] for _ in range(n_queries)]
    lines = [0]
    if few:
        matches = _lines_with_terms(path, lo, hi, vocab, on_block, lines)
    else:
        matches = _split_lines(_lines(path, lo, hi, on_block, lines), vocab)
    cdf = _collect(matches, post, heaps, keep)
    return heaps, cdf, lines[0]


def _from_file(
    path: Path,
    vocab: set[bytes],
    post: Mapping[bytes, list[int]],
    keep: int,
    n_queries: int,
    progress: Progress | None,
    cancel: threading.Event | None,
    few_terms: int,
) -> tuple[list[list[Hit]], dict[bytes, int]]:
    """The second pass over a chunks file, in two halves at once when it is big."""
    size = path.stat().st_size
    meter = Meter(size, "similar", progress, cancel)
    few = len(vocab) <= few_terms and all(t.isascii() for t in vocab)
    first, second = in_halves(path, size, meter.advance, collect_range, (vocab, post, keep, few, n_queries))
    heaps, cdf, lines = first
    if second is not None:  # the second half's lines count from the cut
        heaps2, cdf2, _ = second
        for w, k in cdf2.items():
            cdf[w] += k
        for qi, h in enumerate(heaps2):
            shifted = [(n, neg - lines, cid, ws) for n, neg, cid, ws in h]
            heaps[qi] = heapq.nlargest(keep, heaps[qi] + shifted)  # what one pass would keep
    return heaps, cdf


def similar(
    need: Sequence[tuple[StaleEntry, str]],
    corpus: str | Path | Iterable[Chunk],
    top_n: int,
    df: Mapping[str, int],
    n_chunks: int,
    progress: Progress | None,
    cancel: threading.Event | None,
    few_terms: int = FEW_TERMS,
) -> None:
    """Add up to ``top_n`` candidates to each entry of ``need`` (entry, query text), from a
    corpus of ``n_chunks`` chunks (the scan counted them)."""
    qterms = [_query_terms(q, df) for _, q in need]
    post: dict[bytes, list[int]] = {}
    for qi, ts in enumerate(qterms):
        for w in ts:
            post.setdefault(w.encode(), []).append(qi)
    if not post:
        return
    keep = max(top_n * 4, 12)
    vocab = set(post)
    if isinstance(corpus, (str, Path)):
        heaps, cdf = _from_file(Path(corpus), vocab, post, keep, len(need), progress, cancel, few_terms)
    else:
        heaps = [[] for _ in need]
        matches = (
            (ch.line, ch.id, shared)
            for ch in corpus
            if (shared := vocab.intersection(_chunk_words(ch.id, ch.text)))
        )
        cdf = _collect(matches, post, heaps, keep)
    n = max(n_chunks, 1)
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
