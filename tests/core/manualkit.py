"""Stale labels on real manuals, re-chunked by real splitters and edited as maintainers edit
(issue 20): the scenarios, their ground truth, and the score of a report.

The manuals are Debian's ``dpkg-split(1)`` and ``apt_preferences(5)`` in English, German and
Spanish (``testsets/manuals``, GPL-2+; rendered once with ``man -l``). Everything else is
made here, at test time: the chunkings (ten real splitters of langchain-text-splitters and
llama-index-core, each giving every chunk's offsets in its page), and the next version of
the pages, edited by kind:

========== ==============================================================================
none       nothing: a pure re-chunking
typo       a typo fixed in every 25th long word
insert     a new paragraph on top of every page and one in its middle
reorder    two sections of every page swapped
delete     a section of every page deleted
reformat   every paragraph re-flowed on one line (whitespace only)
numbers    every number changed, in turn ``2`` -> ``2.5``, ``2`` -> ``20``, ``2.0`` -> ``2.0.1``
spelling   de: ``ß`` -> ``ss`` (``Maßen`` -> ``Massen``); es: ``más`` -> ``mas``, ``sólo`` ->
           ``solo``; en: a pure case change (``APT`` -> ``Apt``)
split      the passage both pages hold (see below) broken in two paragraphs in its own page
========== ==============================================================================

Both versions of ``apt_preferences`` end with a copy of a long paragraph of ``dpkg-split``,
as maintainers copy a passage from page to page: its label (the ``dpkg-split`` chunk) must
never move to the copy in the other document without review.

Every character of an edited page knows where it was in the old one (``-1``: written new),
so where each label's text is now is known exactly: the text is *intact* when all its
non-space characters are still there, in order, with only whitespace between and around
them changed. A fix is **right** when its chunk holds the intact text at its new place in
the label's document (or a second copy of it in that document), **onto another document**
when its chunk is in another one, **wrong** otherwise. ``ok`` is false when the label's id
no longer holds its text (NFC, whitespace collapsed, nothing else folded).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ragtriage.core import staleness
from ragtriage.core.corpus import Chunk

MANUALS = Path(__file__).resolve().parents[2] / "testsets" / "manuals"
LANGS = ("en", "de", "es")
PAGES = ("dpkg-split.1", "apt_preferences.5")
COPY_FROM, COPY_TO = "dpkg-split.1", "apt_preferences.5"
KINDS = ("none", "typo", "insert", "reorder", "delete", "reformat", "numbers", "spelling", "split")

INSERTED = {
    "en": "This section was added in the new release. It explains the change in a few sentences, "
    "for readers who come from an older version of this manual.",
    "de": "Dieser Abschnitt ist in der neuen Ausgabe hinzugekommen. Er erklärt die Änderung in "
    "wenigen Sätzen, für Leser, die eine ältere Fassung dieses Handbuchs kennen.",
    "es": "Esta sección se añadió en la nueva versión. Explica el cambio en pocas frases, para "
    "quien conoce una versión anterior de este manual.",
}


def norm(text: str) -> str:
    """The freshness rule: NFC, whitespace collapsed, nothing else folded."""
    return " ".join(unicodedata.normalize("NFC", text).split())


# ------------------------------------------------------------------ the pages


def _paragraph_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S(?:.|\n(?![ \t]*\n))*", text)]


def _copied(text: str) -> str:
    """The long paragraph of ``dpkg-split`` that both pages hold."""
    pars = [text[a:b] for a, b in _paragraph_spans(text)]
    return max((p for p in pars if len(p) < 700), key=len)


def base_pages(lang: str) -> dict[str, str]:
    """The old version: the two manuals, ``apt_preferences`` ending with the copied paragraph."""
    pages = {p: (MANUALS / lang / f"{p}.txt").read_text(encoding="utf-8") for p in PAGES}
    pages[COPY_TO] = pages[COPY_TO].rstrip("\n") + "\n\n" + _copied(pages[COPY_FROM]) + "\n"
    return pages


# ------------------------------------------------------------------ edits with provenance


@dataclass
class Page:
    text: str
    origin: list[int]  # per character of text: its offset in the old page, -1 when new

    def new_of_old(self) -> dict[int, int]:
        return {o: i for i, o in enumerate(self.origin) if o >= 0}


Op = tuple[int, int, str]  # replace old [a, b) by the new text


def _sections(text: str) -> list[tuple[int, int]]:
    """The page's sections: a heading line at column 0 (``NAME``, ``BEZEICHNUNG``) to the next."""
    starts = [m.start() for m in re.finditer(r"(?m)^[^\s].*$", text)]
    starts = [s for i, s in enumerate(starts) if i > 0]  # (the first line is the page header)
    bounds = [0, *starts, len(text)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def apply(text: str, ops: list[Op], order: list[int] | None = None) -> Page:
    """The edited page: ``ops`` (inside sections, not overlapping) applied, then the
    sections put in ``order`` (indexes of :func:`_sections`; one left out is deleted)."""
    ops = sorted(ops)
    secs = _sections(text)
    if order is None:
        order = list(range(len(secs)))
    out_text: list[str] = []
    out_origin: list[int] = []
    for si in order:
        sa, sb = secs[si]
        at = sa
        for a, b, new in ops:
            if a < sa or a >= sb:
                continue
            assert b <= sb, "an edit crosses a section"
            out_text.append(text[at:a])
            out_origin.extend(range(at, a))
            out_text.append(new)
            out_origin.extend([-1] * len(new))
            at = b
        out_text.append(text[at:sb])
        out_origin.extend(range(at, sb))
    return Page("".join(out_text), out_origin)


def _words(text: str) -> list[re.Match[str]]:
    return list(re.finditer(r"[^\W\d_]{7,}", text))


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w])")


def _number_ops(text: str) -> list[Op]:
    ops: list[Op] = []
    for k, m in enumerate(_NUMBER.finditer(text)):
        n = m.group()
        if "." in n:
            new = n + ".1"  # 2.0 -> 2.0.1
        elif k % 2:
            new = n + ".5"  # 2 -> 2.5
        else:
            new = n + "0"  # item 2 -> item 20
        ops.append((m.start(), m.end(), new))
    return ops


def _spelling_ops(lang: str, text: str) -> list[Op]:
    if lang == "de":
        return [(m.start(), m.end(), "ss") for m in re.finditer("ß", text)]
    if lang == "es":
        swap = {"más": "mas", "sólo": "solo", "Sólo": "Solo"}
        return [(m.start(), m.end(), swap[m.group()]) for m in re.finditer(r"\b(?:más|sólo|Sólo)\b", text)]
    return [(m.start(), m.end(), "Apt") for m in re.finditer(r"\bAPT\b", text)][1::2]


def edit(lang: str, kind: str, pages: dict[str, str]) -> dict[str, Page]:
    out: dict[str, Page] = {}
    for doc, text in pages.items():
        ops: list[Op] = []
        order: list[int] | None = None
        secs = _sections(text)
        pars = _paragraph_spans(text)
        if kind == "typo":
            for m in [m for m in _words(text) if m.group()[2] != m.group()[3]][::25]:
                w = m.group()
                ops.append((m.start(), m.end(), w[:2] + w[3] + w[2] + w[4:]))
        elif kind == "insert":
            mid = pars[len(pars) // 2][0]
            top = secs[1][0] if len(secs) > 1 else 0  # (after the page header and NAME)
            ops += [(top, top, INSERTED[lang] + "\n\n"), (mid, mid, "       " + INSERTED[lang] + "\n\n")]
        elif kind == "reorder":
            order = list(range(len(secs)))
            i = len(secs) // 2
            order[i], order[i + 1] = order[i + 1], order[i]
        elif kind == "delete":
            order = [i for i in range(len(secs)) if i != len(secs) // 2]
        elif kind == "reformat":
            for a, b in pars:
                for m in re.finditer(r"\s*\n\s*", text[a:b]):
                    ops.append((a + m.start(), a + m.end(), " "))
        elif kind == "numbers":
            ops = _number_ops(text)
        elif kind == "spelling":
            ops = _spelling_ops(lang, text)
        elif kind == "split" and doc == COPY_FROM:
            p = _copied(text)
            a = text.index(p)
            cut = a + [m.end() for m in re.finditer(r"[.;:]\s", p)][0]
            ops.append((cut, cut, "\n\n       "))
        out[doc] = apply(text, ops, order)
    return out


# ------------------------------------------------------------------ splitters


Splitter = Callable[[str], list[tuple[int, int]]]


def _paragraphs(text: str) -> list[tuple[int, int]]:
    return _paragraph_spans(text)


def _offsets(text: str, contents: list[str], starts: list[int | None]) -> list[tuple[int, int]]:
    out, at = [], 0
    for c, a in zip(contents, starts):
        if a is None or text[a : a + len(c)] != c:
            a = text.find(c, max(0, at - len(c)))
        assert a >= 0 and text[a : a + len(c)] == c  # offsets are ground truth
        out.append((a, a + len(c)))
        at = a + 1
    return out


def _langchain(kind: str, size: int, overlap: int) -> Splitter:
    def split(text: str) -> list[tuple[int, int]]:
        lc = pytest.importorskip("langchain_text_splitters")
        logging.getLogger("langchain_text_splitters.base").setLevel(logging.ERROR)  # "a chunk longer than"
        if kind == "recursive":
            sp = lc.RecursiveCharacterTextSplitter(
                chunk_size=size, chunk_overlap=overlap, add_start_index=True
            )
        else:
            sp = lc.CharacterTextSplitter(
                separator="\n\n", chunk_size=size, chunk_overlap=overlap, add_start_index=True
            )
        docs = sp.create_documents([text])
        return _offsets(text, [d.page_content for d in docs], [d.metadata.get("start_index") for d in docs])

    return split


def _llama(kind: str, size: int, overlap: int) -> Splitter:
    def split(text: str) -> list[tuple[int, int]]:
        pytest.importorskip("llama_index.core")
        from llama_index.core import Document
        from llama_index.core.node_parser import SentenceSplitter, TokenTextSplitter

        cls = SentenceSplitter if kind == "sentence" else TokenTextSplitter
        nodes = cls(chunk_size=size, chunk_overlap=overlap).get_nodes_from_documents([Document(text=text)])
        return _offsets(text, [n.get_content() for n in nodes], [n.start_char_idx for n in nodes])

    return split


SPLITTERS: dict[str, Splitter] = {
    "paragraphs": _paragraphs,
    "lc-recursive-1000": _langchain("recursive", 1000, 100),
    "lc-recursive-500": _langchain("recursive", 500, 50),
    "lc-recursive-300": _langchain("recursive", 300, 0),
    "lc-character-800": _langchain("character", 800, 0),
    "llama-sentence-1024": _llama("sentence", 1024, 0),
    "llama-sentence-512": _llama("sentence", 512, 64),
    "llama-sentence-256": _llama("sentence", 256, 32),
    "llama-sentence-128": _llama("sentence", 128, 16),
    "llama-token-200": _llama("token", 200, 20),
}
_CACHE: dict[tuple[str, str], list[tuple[int, int]]] = {}


@dataclass(frozen=True)
class Span:
    id: str
    doc: str
    start: int
    end: int
    text: str


def chunk(name: str, pages: dict[str, str]) -> list[Span]:
    """Ids ``page-N`` restarting on every page: re-chunking reuses them for other text."""
    out = []
    for doc, text in pages.items():
        key = (name, text)
        if key not in _CACHE:
            _CACHE[key] = SPLITTERS[name](text)
        stem = doc.split(".")[0]
        out += [Span(f"{stem}-{i}", doc, a, b, text[a:b]) for i, (a, b) in enumerate(_CACHE[key])]
    return out


# ------------------------------------------------------------------ a scenario and its score


@dataclass
class Score:
    labels: int = 0
    auto: int = 0
    right: int = 0
    rights: list[str] = field(default_factory=list)  # the labels rightly fixed
    wrong: list[tuple[str, str, str]] = field(default_factory=list)  # (label, status, target)
    other_doc: list[tuple[str, str, str]] = field(default_factory=list)
    false_ok: list[str] = field(default_factory=list)
    review: int = 0
    held: int = 0  # review labels whose fix waits for another label's review (settle)
    top3: int = 0  # review labels with a right chunk among the first three candidates
    top3_of: int = 0  # review labels that have a right chunk at all

    def add(self, other: Score) -> None:
        for k in ("labels", "auto", "right", "review", "held", "top3", "top3_of"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.rights += other.rights
        self.wrong += other.wrong
        self.other_doc += other.other_doc
        self.false_ok += other.false_ok


def _joined(a: str, b: str, after: str) -> bool:
    """Do characters ``a`` | ``b`` (``after``: the one after ``b``) belong to one token: a word,
    an identifier, a number (``2|0``, ``2.|5``, ``2|.5``, ``-|5``)?"""
    w = lambda ch: ch.isalnum() or ch == "_"  # noqa: E731
    return (
        (w(a) and w(b))
        or (a in ".," and b.isdigit())
        or (a.isdigit() and b in ".," and after.isdigit())
        or (a in "-+" and b.isdigit())
        or (a.isdigit() and b == "%")
    )


def occurrences(text: str, t: str) -> list[int]:
    """Where ``t`` stands in ``text`` as whole tokens (not ``is 2.`` in ``is 2.5.``)."""
    out = []
    i = text.find(t)
    while i >= 0:
        j = i + len(t)
        before = i == 0 or not _joined(text[i - 1], text[i], text[i + 1 : i + 2])
        after = j == len(text) or not _joined(text[j - 1], text[j], text[j + 1 : j + 2])
        if before and after:
            out.append(i)
        i = text.find(t, i + 1)
    return out


def _where_now(sp: Span, page: Page, n2o: dict[int, int]) -> tuple[bool, tuple[int, int] | None]:
    """(intact, the span of the label's surviving text in the new page)."""
    old = [i for i in range(sp.start, sp.end) if not sp.text[i - sp.start].isspace()]
    now = [n2o.get(i, -1) for i in old]
    kept = [n for n in now if n >= 0]
    if len(kept) * 2 < len(old):
        return False, None
    region = (min(kept), max(kept) + 1)
    if len(kept) < len(old) or any(b <= a for a, b in zip(kept, kept[1:])):
        return False, region
    lo, hi = kept[0], kept[-1]
    inside = all(page.origin[i] >= 0 or page.text[i].isspace() for i in range(lo, hi + 1))
    inner_old = {page.origin[i] for i in range(lo, hi + 1) if not page.text[i].isspace()}
    n = len(page.text)
    edges = all(not 0 <= j < n or page.text[j].isspace() or page.origin[j] >= 0 for j in (lo - 1, hi + 1))
    return inside and edges and inner_old == set(old), region


def run(
    lang: str, old_name: str, new_name: str, kind: str, spans: bool
) -> tuple[Score, staleness.StaleReport]:
    """Label every chunk of the old chunking, re-chunk the edited pages, judge, score."""
    pages = base_pages(lang)
    old = chunk(old_name, pages)
    edited = edit(lang, kind, pages)
    new = chunk(new_name, {d: p.text for d, p in edited.items()})
    by_id = {c.id: c for c in new}
    n2o = {d: p.new_of_old() for d, p in edited.items()}
    labels = {
        sp.id: {"text": sp.text, **({"doc": sp.doc, "start": sp.start, "end": sp.end} if spans else {})}
        for sp in old
    }
    cases = [(f"q-{sp.id}", f"what does {sp.id} say?", (sp.id,)) for sp in old]
    chunks = [Chunk(c.id, c.text, c.doc, c.start, c.end) if spans else Chunk(c.id, c.text) for c in new]
    report = staleness.check_labels(cases, labels, chunks)
    score = Score()
    old_by_id = {sp.id: sp for sp in old}
    for e in report.labels:
        sp = old_by_id[e.label]
        score.labels += 1
        intact, region = _where_now(sp, edited[sp.doc], n2o[sp.doc])
        t = norm(sp.text)
        if e.status == "ok":
            own = by_id.get(e.label)
            if own is None or norm(own.text) != t:
                score.false_ok.append(e.label)
            continue
        if e.fix == "auto":
            score.auto += 1
            target = by_id[e.label if e.status == "unrecorded" else e.candidates[0][0]]
            if target.doc != sp.doc:
                score.other_doc.append((e.label, e.status, target.id))
                continue
            at_place = intact and region is not None and target.start <= region[0] and region[1] <= target.end
            # a text the old page held twice cannot be told apart by its words: either copy
            repeated = len(occurrences(norm(pages[sp.doc]), t)) > 1 and bool(
                occurrences(norm(target.text), t)
            )
            if at_place or repeated:
                score.right += 1
                score.rights.append(e.label)
            else:
                score.wrong.append((e.label, e.status, target.id))
            continue
        score.review += 1
        score.held += bool(e.note and "another case still expects" in e.note)
        if region is not None:
            right = {c.id for c in new if c.doc == sp.doc and c.start < region[1] and region[0] < c.end}
            if right:
                score.top3_of += 1
                score.top3 += any(cid in right for cid, _ in e.candidates[:3])
    return score, report


PAIRS = [("paragraphs", n) for n in SPLITTERS] + [("lc-recursive-500", "paragraphs")]
