"""Stale labels after re-chunking (staleness.md): detect, propose, fix what is safe.

Every chunk id a case expects has a remembered label (``labels`` in the test
set: fingerprint, text, and where known ``doc``/``start``/``end``). This module
judges each (case, label) against a *new* chunks file alone, streaming it, and
says per label:

========== ====================================================== ==========
status     meaning                                                 fix
========== ====================================================== ==========
ok         same id, same normalised text                          none
moved      id gone; the same text is under another id             auto
changed    id exists with other text (a reused id)                auto when one chunk holds
                                                                  the whole remembered text,
                                                                  else review
merged     the remembered text lies inside a larger chunk         auto (one chunk) / review
split      the text is spread over consecutive chunks             review (``expect: all``)
missing    no chunk holds the text; similar chunks ranked         review
unrecorded no remembered text, the id exists                      auto (record it)
unknown    no remembered text, the id is absent; chunks similar   review
           to the case's question ranked
========== ====================================================== ==========

API (used by ``ragtriage stale``, by ``validate`` and by the ``check`` gate)::

    from ragtriage.core import staleness
    report = staleness.check(doc, corpus_path=None, progress=None, cancel=None)
    report.labels        # [StaleEntry(case, label, status, candidates=[(id, score)], fix, expect)]
    report.counts        # {status: n}, zero counts omitted, in STATUSES order
    report.stale         # the entries whose status is not "ok"
    report.remaining     # stale entries not resolved by apply_fixes (all of them before)
    report.to_dict() / report.to_json()   # the --json shape of staleness.md
    report.settle()      # {(case, label): target id} of the safe fixes (already applied to .fix)
    n = report.apply_fixes(doc)           # edits through the document; caller saves

    # the same on plain data (no YAML): cases as (id, question, expected ids)
    report = staleness.check_labels(cases, labels, corpus_path_or_chunks)

``progress(phase, done_bytes, total_bytes)`` is called per 4 MB read (phase is
"scan" or "similar"); ``cancel`` is a ``threading.Event`` checked as often, and
raises :class:`Cancelled`. ``corpus_path`` may also be a loaded
:class:`~ragtriage.core.corpus.Corpus`. A bad chunks file raises
:class:`~ragtriage.core.errors.CorpusError` (located, like every reader); a
duplicated id is an error when a case expects it (checking every id of a
million-chunk corpus would cost a set of a million strings: ``validate`` does).

Fixes (``fix == "auto"``): ``unrecorded`` (record the label), ``moved``,
``merged`` and ``changed`` when exactly one chunk holds the whole remembered
text (several: the one in the label's document over its old span, if only one
is). :meth:`StaleReport.fix_plan` never writes a new text under an id that
another case still expects with its old meaning: such a fix waits for review.
Labels recorded by a fix carry ``sha``, ``text``, ``doc``/``start``/``end``,
``when`` (UTC; ``SOURCE_DATE_EPOCH`` fixes it) and ``corpus`` (content hash).

How it stays linear in the corpus: one pass splits each chunk into words and
intersects its word trigrams with an index of *anchors* (the rarest interior
trigram of each remembered text per ~:data:`GAP` characters); only the few
labels an anchor points at are compared, on normalised text: equal (``moved``
/ ``changed``), holding the whole remembered text (``merged``), or covering
part of it (a ``split`` piece; the neighbours of a piece are checked too, so
short edge pieces are found). Short texts (under five words) and
fingerprint-only labels are matched by fingerprint. Spans (``doc``/``start``/
``end``) on both sides are indexed per document. A chunk sharing anchors but
none of the text is kept (bounded) as a similarity candidate for ``missing``.
A ``missing`` text that shares no passage with any chunk gets the chunks of its
own document ranked by its rarest words: the scan notes where each labelled
document lies in the file, and only that byte range is read again. A second
full pass runs only for labels with still no candidate (``unknown`` ones, and
``missing`` ones without a document): it searches for the rare words of the
question or of the remembered text, bounded top-n per label. Memory: the labels
and their indexes, never the corpus.

Scores: 1.0 is the remembered text exactly. Text and span candidates score the
character overlap |remembered ∩ chunk| / |remembered ∪ chunk| (a chunk twice
as long as the text it holds scores 0.5); an edited version (``missing``)
scores its word overlap with the remembered text, a same-document chunk the
share of the text's rarest words it has; second-pass candidates score the
idf-weighted share of the query's rare words they contain.

Text is compared after :func:`ragtriage.core.text.normalize_text` (NFC, case
folding, whitespace collapsed): a re-chunking that moves line breaks is ``ok``.
Text evidence (identical or containing chunks) comes before span evidence, so
an edited document whose paragraphs shifted is still judged by what they say;
spans decide when the text was normalised differently by the new chunker.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import re
import unicodedata
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from .clock import utc_now
from .corpus import Chunk, iter_chunks, iter_lines
from .errors import CorpusError, Problem
from .text import normalize_text

STATUSES = ("ok", "moved", "changed", "merged", "split", "missing", "unrecorded", "unknown")
GAP = 80  # an anchor (word trigram) at least every GAP characters of a remembered text
TOP_N = 3  # similarity candidates per label
MAX_HOLDERS = 8  # identical / containing chunks kept per label
MAX_PIECES = 64  # split pieces kept per label
RARE_WORDS = 12  # a label's rarest words, compared with the chunks of its document
_WORD = re.compile(r"\w+")
_STOP = frozenset(
    "the a an and or of to in on at for by with from as is are was were be been it its this that these those "
    "what which who how when where why do does did can could should would will not no yes if then than so "
    "you your i we our they their he she his her them there here into about also use used using".split()
)


class Cancelled(Exception):
    """The caller's cancel event was set; nothing was changed."""


@dataclass
class StaleEntry:
    """One expected chunk of one case, judged against the new corpus."""

    case: str
    label: str
    status: str
    candidates: list[tuple[str, float]] = field(default_factory=list)
    fix: str | None = None  # "auto" | "review" | None
    expect: str | None = None  # proposed `expect` ("all" for a split), else None
    fixed: bool = False  # set by apply_fixes

    @property
    def stale(self) -> bool:
        return self.status != "ok"

    def to_dict(self) -> dict:
        return {
            "case": self.case,
            "label": self.label,
            "status": self.status,
            "candidates": [{"id": i, "score": s} for i, s in self.candidates],
            "fix": self.fix,
            **({"fixed": True} if self.fixed else {}),  # applied by --fix (an optional field)
        }


@dataclass
class StaleReport:
    labels: list[StaleEntry]
    corpus: str | None = None  # the chunks file judged against
    _corpus_hash: str | None = None  # see corpus_hash
    chunks: int = 0  # chunks read
    _found: dict = field(default_factory=dict, repr=False)  # chunk id -> Chunk, for auto fixes

    @property
    def corpus_hash(self) -> str | None:
        """The chunks file's content hash (recorded in fixed labels); computed when first asked,
        so a plain report does not pay for hashing a big corpus."""
        if self._corpus_hash is None and self.corpus is not None and Path(self.corpus).is_file():
            from .text import file_hash

            self._corpus_hash = file_hash(self.corpus)
        return self._corpus_hash

    @corpus_hash.setter
    def corpus_hash(self, value: str | None) -> None:
        self._corpus_hash = value

    @property
    def counts(self) -> dict[str, int]:
        n = {s: 0 for s in STATUSES}
        for e in self.labels:
            n[e.status] += 1
        return {s: v for s, v in n.items() if v}

    @property
    def stale(self) -> list[StaleEntry]:
        return [e for e in self.labels if e.status != "ok"]

    @property
    def remaining(self) -> list[StaleEntry]:
        """Stale entries that no fix has resolved: the exit status is judged on these."""
        return [e for e in self.labels if e.status != "ok" and not e.fixed]

    @property
    def auto(self) -> list[StaleEntry]:
        return [e for e in self.labels if e.fix == "auto"]

    def to_dict(self) -> dict:
        return {"labels": [e.to_dict() for e in self.labels], "counts": self.counts}

    def to_json(self) -> str:
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"

    # -------------------------------------------------------------- fixes

    def settle(self) -> dict[tuple[str, str], str]:
        """(case, label) -> target chunk id for the automatic fixes that are safe together.

        A label is keyed by chunk id: a fix must not write new text under an id that another
        case still expects with its old meaning (a stale label left for review); such a fix
        is turned into ``review``."""
        target: dict[tuple[str, str], str] = {}
        for e in self.labels:
            if e.fix == "auto":
                target[(e.case, e.label)] = e.label if e.status == "unrecorded" else e.candidates[0][0]
        while True:
            kept = {e.label for e in self.labels if e.status != "ok" and (e.case, e.label) not in target}
            clash = [
                e
                for e in self.labels
                if (e.case, e.label) in target
                and target[(e.case, e.label)] in kept
                and target[(e.case, e.label)] != e.label
            ]
            if not clash:
                return target
            for e in clash:
                del target[(e.case, e.label)]
                e.fix = "review"

    def fix_plan(self) -> tuple[dict[str, list[str]], dict[str, dict]]:
        """(case id -> new expected list, chunk id -> label to record) for the automatic fixes."""
        target = self.settle()
        when = utc_now()
        new_expected: dict[str, list[str]] = {}
        record: dict[str, dict] = {}
        by_case: dict[str, list[StaleEntry]] = {}
        for e in self.labels:
            by_case.setdefault(e.case, []).append(e)
        for case, entries in by_case.items():
            out, changed = [], False
            for e in entries:
                t = target.get((case, e.label), e.label)
                changed |= t != e.label
                if t not in out:
                    out.append(t)
                if (case, e.label) in target:
                    ch = self._found.get(t)
                    if ch is not None and t not in record:
                        record[t] = {
                            "sha": _fp(normalize_text(ch.text)),
                            "text": ch.text,
                            "doc": ch.doc,
                            "start": ch.start,
                            "end": ch.end,
                            "when": when,
                            "corpus": self.corpus_hash,
                        }
            if changed:
                new_expected[case] = out
        return new_expected, record

    def apply_fixes(self, doc) -> int:
        """Apply the automatic fixes through the test-set document (no save). Returns the
        number of (case, label) entries fixed; marks them ``fixed``."""
        new_expected, record = self.fix_plan()  # may turn a clashing "auto" into "review"
        for case, expected in new_expected.items():
            doc.update_case(case, expected=expected)
        for cid, lab in record.items():
            doc.set_label(cid, lab)
        still = {c for case in doc.cases for c in case.expected}
        for e in self.labels:
            if e.fix == "auto" and e.label not in still and e.label in doc.labels:
                doc.set_label(e.label, None)
        n = 0
        for e in self.labels:
            if e.fix == "auto":
                e.fixed = True
                n += 1
        return n


# ------------------------------------------------------------------ internals


def _fp(norm: str) -> str:
    return hashlib.blake2b(norm.encode("utf-8"), digest_size=6).hexdigest()


class _Label:
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
    )

    def __init__(self, cid: str, lab):
        get = (lambda k: lab.get(k)) if isinstance(lab, Mapping) else (lambda k: getattr(lab, k, None))
        self.id = cid
        text, sha = (get("text"), get("sha")) if lab is not None else (None, None)
        self.has_text = isinstance(text, str) and bool(text.strip())
        self.t = normalize_text(text) if self.has_text else None
        self.raw = text if self.has_text else None
        self.fp = _fp(self.t) if self.has_text else (sha if isinstance(sha, str) and sha else None)
        doc, start, end = (get("doc"), get("start"), get("end")) if lab is not None else (None, None, None)
        ok_span = isinstance(doc, str) and isinstance(start, int) and isinstance(end, int) and end > start
        self.doc = doc if isinstance(doc, str) else None
        self.start, self.end = (start, end) if ok_span else (None, None)
        self.own: Chunk | None = None  # the chunk with this id in the new corpus
        self.own_norm: str | None = None
        self.exact: list[Chunk] = []  # other chunks with the same fingerprint
        self.holders: list[Chunk] = []  # chunks whose text contains the remembered text
        self.pieces: dict[int, tuple] = {}  # seq -> ((chunk id, normalised length), a, b), b/a in t
        self.spans: list[tuple[Chunk, int, int]] = []  # span overlaps, label coordinates
        self.questions: list[str] = []
        self.near: list[tuple] = []  # heap of (score, -seq, chunk id, text): chunks sharing an anchor
        self.nearby: list[tuple] = []  # heap of (word share, -seq, chunk id): same-document chunks
        self.words: frozenset | None = None
        self.n_anchors = 0

    def near_hit(self, cid: str, n: int, seq: int, c: str) -> None:
        """A chunk shares ``n`` of the text's rare trigrams but holds none of it: an edited
        version, perhaps. The best few (with their text) are candidates if nothing holds it."""
        _push(self.near, (n / max(self.n_anchors, 1), -seq, cid, c))


def _push(heap: list, item: tuple) -> None:
    if len(heap) < TOP_N:
        heapq.heappush(heap, item)
    elif item > heap[0]:
        heapq.heapreplace(heap, item)


def _relate(c: str, t: str, q: int = 16):
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
    q = min(q, lt, lc)
    best = None
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


def _relate_near(c: str, t: str):
    """Like :func:`_relate` but finds edge overlaps of any length (for a neighbour of a
    piece already found, where a short overlap is meaningful)."""
    r = _relate(c, t)
    if r is not None:
        return r
    lc, lt = len(c), len(t)
    best = None
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


def _covers(t: str, intervals) -> bool:
    """Do the intervals cover ``t``, allowing gaps that are only whitespace (chunk edges)?"""
    end = 0
    for a, b in sorted(intervals):
        if a > end and t[end:a].strip():
            return False
        end = max(end, b)
    return not t[end:].strip()


def _covers_span(length: int, intervals) -> bool:
    end = 0
    for a, b in sorted(intervals):
        if a > end:
            return False
        end = max(end, b)
    return end >= length


def _dice(a: str, b: str) -> float:
    """Word overlap of two normalised texts, 2|A∩B| / (|A| + |B|) over word counts; below 1
    unless the texts are the same."""
    from collections import Counter

    ca, cb = Counter(a.split()), Counter(b.split())
    n = sum(ca.values()) + sum(cb.values())
    score = 2 * sum((ca & cb).values()) / n if n else 0.0
    return 1.0 if a == b else min(round(score, 3), 0.999)


def _jaccard(lt: int, lc: int, overlap: int) -> float:
    u = lt + lc - overlap
    return round(overlap / u, 3) if u else 1.0


class _Meter:
    """Counts the bytes read, reports progress, honours the cancel event."""

    def __init__(self, total: int, phase: str, progress, cancel):
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


def _document_chunks(corpus, docs: set, ranges: dict, in_memory: dict):
    """Yield ``(doc, [(order, chunk id, words)])`` for a few documents: in memory from what the
    scan kept, from a file by re-reading only the byte range where the scan met the document."""
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
            rows = []
            for k, raw in enumerate(buf.split(b"\n")):
                if not raw.strip():
                    continue
                try:
                    rec = orjson.loads(raw.lstrip(b"\xef\xbb\xbf"))
                except orjson.JSONDecodeError:
                    continue  # the first pass read every line: only a cut one can fail here
                if rec.get("doc") == doc:
                    rows.append((lo + k, rec["id"], rec["text"].split()))
            yield doc, rows


def _bad_line(path: Path, lineno: int):
    """Let the corpus reader word the problem with the line, so every command says the same."""
    for _ in iter_chunks(path):
        pass
    raise CorpusError(Problem(str(path), lineno, "not a chunk (expected {\"id\": ..., \"text\": ...})"))


def _chunk(rec, lineno: int) -> Chunk:
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


def _grams(toks: list[str]) -> list[tuple]:
    inner = toks[1:-1]
    return list(zip(inner, inner[1:], inner[2:]))


def _anchor_index(states: list[_Label]) -> dict[tuple, list[int]]:
    """Rare interior word trigrams of each remembered text, at least one per GAP characters
    (the first and last word are left out: an old chunk may have cut them mid-word): the
    one whose words the fewest remembered texts share (word counts only: counting every
    trigram of 10,000 texts would cost more memory than the rest of the check).
    Anchors are indexed as written in the label and as normalised, because chunks are probed
    on their raw words (normalising every chunk costs too much). Probing chunks at every
    other word, with anchors indexed in pairs, was measured slower: the extra, commoner
    anchors cost more in false hits than the saved probes."""
    from collections import Counter
    from itertools import accumulate, chain
    from sys import intern

    wdf = Counter(chain.from_iterable(set(st.t.split()) for st in states))
    index: dict[tuple, list[int]] = {}
    for li, st in enumerate(states):
        toks = st.t.split()
        grams = _grams(toks)
        if not grams:
            continue  # fewer than 5 words: found by fingerprint only
        toks = list(map(intern, toks))  # the index keeps these words: one copy of each
        raw = list(map(intern, st.raw.split()))
        key_at = [0] + [wdf[a] + wdf[b] + wdf[c] for a, b, c in grams]  # key_at[j]: trigram at word j
        starts = list(accumulate(map(len, toks), lambda acc, n: acc + n + 1, initial=0))[:-1]
        n_b = max(1, round(len(st.t) / GAP))  # buckets of about GAP characters, none tiny
        best: dict[int, tuple] = {}
        lo = 1
        for b in range(n_b):
            hi = bisect_left(starts, (b + 1) * len(st.t) // n_b, lo) if b < n_b - 1 else len(grams) + 1
            hi = min(hi, len(grams) + 1)
            if hi > lo:
                j = min(range(lo, hi), key=key_at.__getitem__)
                best[b] = (key_at[j], j)
            lo = max(lo, hi)
        same = len(raw) == len(toks)
        keys = set()
        for _, j in best.values():
            keys.add(tuple(toks[j : j + 3]))
            if same:
                keys.add(tuple(raw[j : j + 3]))
        for g in keys:
            index.setdefault(g, []).append(li)
        st.n_anchors = len(best)
        if st.doc is not None:  # its rarest words, for same-document similarity (see check_labels)
            pairs = zip(raw, toks) if same else zip(toks, toks)
            ranked = sorted(
                {w: wdf[n] for w, n in pairs if len(n) > 2 and n not in _STOP}.items(), key=lambda p: p[1]
            )
            st.words = frozenset(w for w, _ in ranked[:RARE_WORDS]) or None
    return index


def _split_norm(text: str) -> list[str]:
    """The words of :func:`normalize_text` (``" ".join`` of them is its result)."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text.casefold().split()


# ------------------------------------------------------------------ the check


def check_labels(
    cases: Iterable,
    labels: Mapping,
    corpus,
    *,
    progress: Callable | None = None,
    cancel=None,
    top_n: int = TOP_N,
) -> StaleReport:
    """Judge every expected chunk of ``cases`` (``(id, question, expected ids)`` tuples or
    objects with those attributes) against ``corpus`` (a chunks file path, streamed, or an
    iterable of :class:`Chunk` that can be iterated twice), using ``labels`` (chunk id ->
    Label or dict). Raises :class:`CorpusError` for a bad chunks file."""
    case_rows = []
    for c in cases:
        if isinstance(c, tuple):
            cid, question, expected = c
        else:
            cid, question, expected = c.id, c.question, c.expected
        case_rows.append((cid, question, tuple(expected)))

    states: dict[str, _Label] = {}
    for _, question, expected in case_rows:
        for x in expected:
            st = states.get(x)
            if st is None:
                st = states[x] = _Label(x, labels.get(x))
            st.questions.append(question)
    order = list(states.values())
    textual = [st for st in order if st.t]
    anchors = _anchor_index(textual)
    anchor_keys = set(anchors)
    by_fp: dict[str, list[_Label]] = {}
    for st in order:
        if st.fp:
            by_fp.setdefault(st.fp, []).append(st)
    span_docs: dict[str, list[_Label]] = {}
    for st in order:
        if st.start is not None:
            span_docs.setdefault(st.doc, []).append(st)
    span_max = {d: max(s.end - s.start for s in lst) for d, lst in span_docs.items()}
    for lst in span_docs.values():
        lst.sort(key=lambda s: s.start)
    span_starts = {d: [s.start for s in lst] for d, lst in span_docs.items()}
    short_lens = {len(st.t.split()) for st in textual if len(st.t.split()) < 5}
    all_fp = any(st.t is None and st.fp for st in order)  # sha-only labels: fingerprint every chunk

    doc_labels: dict[str, list[_Label]] = {}
    doc_ranges: dict[str, tuple[int, int]] = {}  # doc -> (bytes read at its first, at its last chunk)
    doc_chunks: dict[str, list] = {}  # in memory: doc -> [(seq, id, words)]
    for st in textual:
        if st.doc is not None and st.words:
            doc_labels.setdefault(st.doc, []).append(st)

    recent: deque = deque(maxlen=4)  # [seq, line, record, normalised text or None]
    pending: dict[int, list[int]] = {}  # seq expected next -> text-label indexes waiting for it
    corpus_name = str(corpus) if isinstance(corpus, (str, Path)) else None
    dup_problems: list[Problem] = []
    join = " ".join

    def norm_of(item) -> str:
        if item[3] is None:
            item[3] = join(_split_norm(item[2]["text"] if isinstance(item[2], dict) else item[2].text))
        return item[3]

    def accept(li: int, item, iv) -> None:
        st = textual[li]
        seq = item[0]
        if seq in st.pieces or len(st.pieces) >= MAX_PIECES:
            return
        rec = item[2]  # a piece keeps its id and normalised length only, not its text
        st.pieces[seq] = ((rec["id"] if isinstance(rec, dict) else rec.id, len(norm_of(item))), iv[0], iv[1])
        t = st.t
        if iv[0] > 0:  # look back for the piece before, however short
            prev = next((r for r in recent if r[0] == seq - 1), None)
            if prev is not None and prev[0] not in st.pieces:
                r = _relate_near(norm_of(prev), t)
                if isinstance(r, tuple) and r[1] >= iv[0] - 1:
                    accept(li, prev, r)
        if iv[1] < len(t):
            pending.setdefault(seq + 1, []).append(li)

    seq = -1
    if isinstance(corpus, (str, Path)):
        path = Path(corpus)
        if not path.is_file():
            for _ in iter_chunks(path):  # raises the located CorpusError (missing file, folder)
                pass
        meter = _Meter(path.stat().st_size, "scan", progress, cancel)
        source = iter_lines(path, meter.update)
        in_memory = False
    else:
        source = ((ch.line, ch) for ch in corpus)
        in_memory = True
    loads = orjson.loads
    for lineno, raw in source:
        if in_memory:
            rec = raw
            cid, text = rec.id, rec.text
        else:  # parsed here, not in a generator: this loop runs a million times
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw or raw.isspace():
                continue
            try:
                rec = loads(raw)
                cid = rec["id"]
                text = rec["text"]
                if type(cid) is not str or type(text) is not str or not cid.strip():
                    raise ValueError
            except Exception:
                _bad_line(path, lineno)
        seq += 1
        item = [seq, lineno, rec, None]
        recent.append(item)
        toks = text.split()
        st = states.get(cid)
        if st is not None:
            if st.own is not None:
                dup_problems.append(
                    Problem(
                        corpus_name or "<chunks>",
                        lineno,
                        f"duplicate id {cid!r} (first at line {st.own.line})",
                        field="id",
                    )
                )
            st.own, st.own_norm = _chunk(rec, lineno), norm_of(item)
        if all_fp or len(toks) in short_lens:
            hits = by_fp.get(_fp(norm_of(item)))
            if hits:
                for h in hits:
                    if h.id != cid and len(h.exact) < MAX_HOLDERS:
                        h.exact.append(_chunk(rec, lineno))
        ws = anchor_keys.intersection(zip(toks, toks[1:], toks[2:]))
        if ws:
            c = norm_of(item)
            seen: dict[int, int] = {}
            for w in ws:
                for li in anchors[w]:
                    seen[li] = seen.get(li, 0) + 1
            for li, nh in seen.items():
                lst = textual[li]
                r = _relate(c, lst.t)
                if r is None:
                    lst.near_hit(cid, nh, seq, c)
                elif r == "holds":
                    if len(c) == len(lst.t):
                        if (
                            lst.id != cid
                            and len(lst.exact) < MAX_HOLDERS
                            and all(x.id != cid for x in lst.exact)
                        ):
                            lst.exact.append(_chunk(rec, lineno))
                    elif len(lst.holders) < MAX_HOLDERS:
                        lst.holders.append(_chunk(rec, lineno))
                else:
                    accept(li, item, r)
        if pending:
            waiting = pending.pop(seq, None)
            if waiting:
                c = norm_of(item)
                for li in waiting:
                    lst = textual[li]
                    if seq in lst.pieces:
                        continue
                    r = _relate_near(c, lst.t)
                    prev = lst.pieces.get(seq - 1)
                    if isinstance(r, tuple) and prev is not None and r[0] <= prev[2] + 1:
                        accept(li, item, r)
        if doc_labels:  # where each labelled document lies in the file (or, in memory, its chunks)
            doc = rec.get("doc") if isinstance(rec, dict) else rec.doc
            if doc is not None and doc in doc_labels:
                if in_memory:
                    doc_chunks.setdefault(doc, []).append((seq, cid, toks))
                else:
                    at = meter.done
                    r = doc_ranges.get(doc)
                    doc_ranges[doc] = (at, at) if r is None else (r[0], at)
        if span_docs:
            doc = rec.get("doc") if isinstance(rec, dict) else rec.doc
            if doc in span_docs:
                ch = _chunk(rec, lineno)
                if ch.start is not None and ch.end is not None:
                    lst = span_docs[doc]
                    starts = span_starts[doc]
                    lo = bisect_left(starts, ch.start - span_max[doc])
                    hi = bisect_left(starts, ch.end)
                    for s_ in lst[lo:hi]:
                        a, b = max(s_.start, ch.start), min(s_.end, ch.end)
                        if a < b:
                            s_.spans.append((ch, a - s_.start, b - s_.start))
    if dup_problems:
        raise CorpusError(dup_problems)

    report = StaleReport([], corpus_name, None, seq + 1)
    found = report._found
    verdict = {st.id: _judge(st, found) for st in order}
    # nothing holds or shares a passage of these texts: rank the chunks of their own document
    late = [st for st in order if verdict[st.id][4] == "text" and st.words and st.doc in doc_labels]
    if late:
        for doc, rows in _document_chunks(corpus, {st.doc for st in late}, doc_ranges, doc_chunks):
            for st in late:
                if st.doc == doc:
                    for seq_, cid_, words in rows:
                        k = len(st.words.intersection(words))
                        if k:
                            _push(st.nearby, (k / len(st.words), -seq_, cid_))
        for st in late:
            verdict[st.id] = _judge(st, found)

    need = []  # (entry, query text) for a second pass
    entries: list[StaleEntry] = []
    for case, question, expected in case_rows:
        for x in expected:
            status, cands, fix, expect, query = verdict[x]
            e = StaleEntry(case, x, status, list(cands), fix, expect)
            entries.append(e)
            if query == "question":
                need.append((e, question))
            elif query == "text":
                need.append((e, states[x].t))
    if need:
        df: dict[str, int] = {}
        for st in textual:
            for w in set(_WORD.findall(st.t)):
                df[w] = df.get(w, 0) + 1
        _similar(need, corpus, top_n, df, progress, cancel)
    report.labels = entries
    report.settle()  # which fixes are safe together (see settle), so the report says so
    return report


def _prefer(st: _Label, chunks: list[Chunk]) -> list[Chunk]:
    """When several chunks hold the text (a paragraph repeated in the documents), keep those
    of the label's document, and of those the ones over the label's old span, if any."""
    if st.doc is None or len(chunks) < 2:
        return chunks
    same = [c for c in chunks if c.doc == st.doc]
    if not same:
        return chunks
    if st.start is not None:
        over = [
            c
            for c in same
            if c.start is not None and c.end is not None and c.start < st.end and st.start < c.end
        ]
        if over:
            return over
    return same


def _judge(st: _Label, found: dict) -> tuple:
    """-> (status, candidates, fix, expect, similarity query: None | "text" | "question")."""
    own = st.own
    if st.fp is None:
        if own is not None:
            found[own.id] = own
            return "unrecorded", [(own.id, 1.0)], "auto", None, None
        return "unknown", [], "review", None, "question"
    if own is not None and _fp(st.own_norm) == st.fp:
        return "ok", [], None, None, None
    t = st.t
    # text evidence: identical chunks, then chunks that hold the whole text
    if own is not None and t is not None and t in st.own_norm:
        found[own.id] = own
        return "merged", [(own.id, _jaccard(len(t), len(st.own_norm), len(t)))], "auto", None, None

    def status_if(s):
        return "changed" if own is not None else s

    if st.exact:
        ex = _prefer(st, st.exact)
        for c in ex:
            found[c.id] = c
        return status_if("moved"), [(c.id, 1.0) for c in ex], "auto" if len(ex) == 1 else "review", None, None
    if st.holders:
        hs = _prefer(st, st.holders)
        lt = len(t)
        scored = sorted(((c, _jaccard(lt, len(normalize_text(c.text)), lt)) for c in hs), key=lambda p: -p[1])
        for c, _ in scored:
            found[c.id] = c
        return (
            status_if("merged"),
            [(c.id, s) for c, s in scored],
            "auto" if len(scored) == 1 else "review",
            None,
            None,
        )
    # span evidence (the new chunker may have normalised text differently)
    if st.spans:
        span = st.end - st.start
        same = [(c, a, b) for c, a, b in st.spans if a == 0 and b == span]
        if own is not None and any(c is own and c.start == st.start and c.end == st.end for c, _, _ in same):
            return "ok", [], None, None, None
        exact = [c for c, _, _ in same if c.start == st.start and c.end == st.end]
        if exact:
            for c in exact:
                found[c.id] = c
            return (
                status_if("moved"),
                [(c.id, 1.0) for c in exact],
                "auto" if len(exact) == 1 else "review",
                None,
                None,
            )
        if same:
            scored = sorted(
                ((c, _jaccard(span, c.end - c.start, span)) for c, _, _ in same), key=lambda p: -p[1]
            )
            for c, _ in scored:
                found[c.id] = c
            return (
                status_if("merged"),
                [(c.id, s) for c, s in scored],
                "auto" if len(scored) == 1 else "review",
                None,
                None,
            )
        if _covers_span(span, [(a, b) for _, a, b in st.spans]):
            pieces = _min_cover(span, sorted(st.spans, key=lambda p: p[0].start))
            cands = [(c.id, _jaccard(span, c.end - c.start, b - a)) for c, a, b in pieces]
            return status_if("split"), cands, "review", "all", None
        partial = sorted(st.spans, key=lambda p: -(p[2] - p[1]))[:TOP_N]
        return (
            status_if("missing"),
            [(c.id, _jaccard(span, c.end - c.start, b - a)) for c, a, b in partial],
            "review",
            None,
            None,
        )
    # text evidence: consecutive pieces that together cover the text
    if t is not None and st.pieces:
        run = _best_run(t, st.pieces)
        if run:
            cands = [(cid, _jaccard(len(t), n, b - a)) for (cid, n), a, b in run]
            return status_if("split"), cands, "review", "all", None
    if t is None:
        return status_if("missing"), [], "review", None, "question"
    if st.near:
        scored = sorted(((_dice(t, c), cid) for _, _, cid, c in st.near), key=lambda p: (-p[0], p[1]))
        return status_if("missing"), [(cid, sc) for sc, cid in scored], "review", None, None
    if st.nearby:  # nothing shares a passage: the most similar chunks of the same document
        scored = sorted(
            ((round(min(sc, 0.999), 3), -negseq, cid) for sc, negseq, cid in st.nearby),
            key=lambda p: (-p[0], p[1]),
        )
        return status_if("missing"), [(cid, sc) for sc, _, cid in scored], "review", None, None
    return status_if("missing"), [], "review", None, "text"


def _min_cover(length: int, pieces: list) -> list:
    """The fewest consecutive pieces (in order) that cover [0, length)."""
    best = pieces
    n = len(pieces)
    for i in range(n):
        end = 0
        for j in range(i, n):
            if pieces[j][1] > end:
                break
            end = max(end, pieces[j][2])
            if end >= length:
                if j - i + 1 < len(best):
                    best = pieces[i : j + 1]
                break
    return best


def _best_run(t: str, pieces: dict) -> list | None:
    """The shortest run of consecutive chunks whose pieces cover ``t``."""
    seqs = sorted(pieces)
    best = None
    for i, s0 in enumerate(seqs):
        ivs = []
        for j in range(i, len(seqs)):
            if seqs[j] != s0 + (j - i):
                break
            ivs.append(pieces[seqs[j]][1:])
            if _covers(t, ivs):
                run = [pieces[s] for s in seqs[i : j + 1]]
                if best is None or len(run) < len(best):
                    best = run
                break
    if best is not None and len(best) < 2:
        return None
    return best


def _query_terms(text: str, df: Mapping[str, int], limit: int = 8) -> list[str]:
    """The rarest content words of a query (rarity judged on the remembered texts, a sample
    of the corpus; words never seen there count as rarest)."""
    words = [w for w in dict.fromkeys(_WORD.findall(normalize_text(text))) if w not in _STOP and len(w) > 2]
    words.sort(key=lambda w: (df.get(w, 0), -len(w)))
    return words[:limit]


_PUNCT_CHARS = bytes(c for c in range(128) if not (chr(c).isalnum() or c == 95))  # incl. \\ of \\t
_PUNCT = bytes.maketrans(_PUNCT_CHARS, b" " * len(_PUNCT_CHARS))  # ASCII punctuation -> space


_WORDBYTE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") | frozenset(
    range(128, 256)
)
FEW_TERMS = 24  # up to this many query words, search whole blocks for them instead of splitting lines


def _lines_with_terms(path: Path, terms: set[bytes], meter: _Meter, counter: list):
    """Yield ``(line number, raw line, terms it contains as whole words)`` for the lines of
    ``path`` holding any of a few ``terms`` (lowercase UTF-8): each 4 MB block is searched
    once per term, so lines without them cost nothing. ``counter[0]`` ends as the line count."""
    rest = b""
    base = 0
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 22)
            if block:
                meter.update(block)
                buf = rest + block
                cut = buf.rfind(b"\n") + 1
                if cut == 0:
                    rest = buf
                    continue
                rest, buf = buf[cut:], buf[:cut]
            else:
                if not rest:
                    break
                buf, rest = rest + b"\n", b""
            low = buf.lower()
            hits: dict[int, set] = {}
            for t in terms:
                i = low.find(t)
                while i >= 0:
                    j = i + len(t)
                    ok_before = (
                        i == 0 or low[i - 1] not in _WORDBYTE or low[i - 2 : i] in (b"\\n", b"\\t", b"\\r")
                    )
                    if ok_before and (j >= len(low) or low[j] not in _WORDBYTE):
                        hits.setdefault(low.rfind(b"\n", 0, i) + 1, set()).add(t)
                    i = low.find(t, j)
            line, at = base, 0
            for start in sorted(hits):
                line += buf.count(b"\n", at, start)
                at = start
                yield line + 1, buf[start : buf.find(b"\n", start)], hits[start]
            base += buf.count(b"\n")
            if not block:
                break
    counter[0] = base


def _similar(need: list, corpus, top_n: int, df: Mapping[str, int], progress, cancel) -> None:
    """Second pass, only for the labels that nothing holds (and unknown ones): for each
    (entry, query), the top_n chunks sharing the most of the query's rare words, scored by
    the idf-weighted share of those words they contain. Lines are matched as bytes (ASCII
    punctuation and case folded away) and parsed only when they share a word; with few
    query words, whole blocks are searched for them instead of splitting every line."""
    qterms = [_query_terms(q, df) for _, q in need]
    post: dict[bytes, list[int]] = {}
    for qi, ts in enumerate(qterms):
        for w in ts:
            post.setdefault(w.encode(), []).append(qi)
    if not post:
        return
    vocab = set(post)
    cdf: dict[bytes, int] = dict.fromkeys(vocab, 0)
    keep = max(top_n * 4, 12)
    heaps: list[list] = [[] for _ in need]
    counter = [0]

    def matches():
        if isinstance(corpus, (str, Path)):
            meter = _Meter(Path(corpus).stat().st_size, "similar", progress, cancel)
            if len(vocab) <= FEW_TERMS:
                yield from _lines_with_terms(Path(corpus), vocab, meter, counter)
                return
            lines = iter_lines(Path(corpus), meter.update)
        else:
            lines = ((ch.line, orjson.dumps({"id": ch.id, "text": normalize_text(ch.text)})) for ch in corpus)
        table = _PUNCT
        n = 0
        for lineno, raw in lines:
            if not raw or raw.isspace():
                continue
            n += 1
            low = raw.lower()
            if b"\\n" in low:
                low = low.replace(b"\\n", b" ")
            shared = vocab.intersection(low.translate(table).split())
            if shared:
                yield lineno, raw, shared
        counter[0] = n

    for lineno, raw, shared in matches():
        acc: dict[int, list[bytes]] = {}
        for w in shared:
            cdf[w] += 1
            for qi in post[w]:
                acc.setdefault(qi, []).append(w)
        cid = None
        for qi, ws in acc.items():
            h = heaps[qi]
            if len(h) >= keep and (len(ws), -lineno) <= h[0][:2]:
                continue
            if cid is None:
                try:
                    cid = orjson.loads(raw.lstrip(b"\xef\xbb\xbf"))["id"]
                except Exception:
                    break
            item = (len(ws), -lineno, cid, tuple(ws))
            if len(h) < keep:
                heapq.heappush(h, item)
            else:
                heapq.heapreplace(h, item)
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


# ------------------------------------------------------------------ with the document


def check(
    doc, corpus_path=None, progress: Callable | None = None, cancel=None, top_n: int = TOP_N
) -> StaleReport:
    """Judge the labels of a :class:`~ragtriage.core.document.TestSetDocument` against
    ``corpus_path`` (a chunks file, streamed; or a loaded :class:`~ragtriage.core.corpus.Corpus`;
    default: the test set's own corpus). Raises :class:`CorpusError` (an ``InputError``)
    when there is no usable chunks file."""
    if isinstance(corpus_path, Mapping):  # an already loaded Corpus (id -> Chunk)
        report = check_labels(
            doc.cases, doc.labels, list(corpus_path.values()), progress=progress, cancel=cancel, top_n=top_n
        )
        report.corpus = getattr(corpus_path, "path", None)
        report.corpus_hash = getattr(corpus_path, "content_hash", None)
        return report
    path = Path(corpus_path) if corpus_path is not None else doc.corpus_path
    if path is None:
        raise CorpusError(
            Problem(
                str(doc.path),
                None,
                "no chunks file: the test set has no `corpus:` (give one with --corpus)",
                field="corpus",
            )
        )
    return check_labels(doc.cases, doc.labels, path, progress=progress, cancel=cancel, top_n=top_n)
