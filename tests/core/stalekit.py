"""What the stale-label tests build the same way: the real-splitter re-chunkings of the
pydocs pages with offsets known exactly (``test_stale_real_splitters.py`` says how), the
pydocs labels and their evidence, a re-chunking written as a chunks file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from ragtriage.core import staleness
from ragtriage.core.corpus import Chunk
from ragtriage.core.document import TestSetDocument
from ragtriage.core.staleness import LabelState, Scanner
from ragtriage.core.text import normalize_text
from tests.conftest import TESTSETS

PYDOCS = TESTSETS / "pydocs"
WINDOWS = PYDOCS / "pydocs-windows.chunks.jsonl"

INTRO = (
    "This page was revised for the new release. It now opens with a short overview of what "
    "follows, written for readers who arrive from a search engine and want to know quickly "
    "whether the answer to their question is on this page at all."
)


@dataclass(frozen=True)
class Span:
    id: str
    doc: str
    start: int
    end: int
    text: str


def _pages() -> dict[str, str]:
    """The page texts, rebuilt from the shipped paragraph chunks (one blank line between)."""
    pages: dict[str, list[dict]] = {}
    for line in (TESTSETS / "pydocs" / "pydocs-paragraphs.chunks.jsonl").read_bytes().splitlines():
        row = orjson.loads(line)
        pages.setdefault(row["doc"], []).append(row)
    out = {}
    for doc, rows in pages.items():
        text = "\n\n".join(r["text"] for r in rows)
        assert all(text[r["start"] : r["end"]] == r["text"] for r in rows)
        out[doc] = text
    return out


PAGES = _pages()


# ------------------------------------------------------------------ splitters


def _paragraphs(doc: str, text: str) -> list[tuple[int, int]]:
    out, at = [], 0
    for par in text.split("\n\n"):
        out.append((at, at + len(par)))
        at += len(par) + 2
    return out


def _langchain(size: int, overlap: int) -> Callable[[str, str], list[tuple[int, int]]]:
    def split(doc: str, text: str) -> list[tuple[int, int]]:
        lc = pytest.importorskip("langchain_text_splitters")
        splitter = lc.RecursiveCharacterTextSplitter(
            chunk_size=size, chunk_overlap=overlap, add_start_index=True
        )
        out = []
        for d in splitter.create_documents([text]):
            a = d.metadata["start_index"]
            assert text[a : a + len(d.page_content)] == d.page_content  # offsets are ground truth
            out.append((a, a + len(d.page_content)))
        return out

    return split


def _llama(size: int, overlap: int) -> Callable[[str, str], list[tuple[int, int]]]:
    def split(doc: str, text: str) -> list[tuple[int, int]]:
        pytest.importorskip("llama_index.core")
        from llama_index.core import Document
        from llama_index.core.node_parser import SentenceSplitter

        splitter = SentenceSplitter(chunk_size=size, chunk_overlap=overlap)
        out = []
        for n in splitter.get_nodes_from_documents([Document(text=text, id_=doc)]):
            a, b = n.start_char_idx, n.end_char_idx
            assert a is not None and b is not None and text[a:b] == n.get_content()
            out.append((a, b))
        return out

    return split


SPLITTERS = {
    "paragraphs": _paragraphs,
    "langchain-800": _langchain(800, 100),
    "langchain-400": _langchain(400, 50),
    "llama-sentence-256": _llama(256, 32),
}
_CACHE: dict[tuple[str, str, str], list[tuple[int, int]]] = {}


def chunk(name: str, pages: dict[str, str]) -> list[Span]:
    """Chunks ``page-N`` in page order, ids restarting at 0 on every page (so re-chunking
    reuses ids for other text)."""
    out = []
    for doc, text in pages.items():
        key = (name, doc, text)
        if key not in _CACHE:
            _CACHE[key] = SPLITTERS[name](doc, text)
        stem = doc.rsplit(".", 1)[0]
        out += [Span(f"{stem}-{i}", doc, a, b, text[a:b]) for i, (a, b) in enumerate(_CACHE[key])]
    return out


# ------------------------------------------------------------------ edits with known offsets


@dataclass
class Edited:
    pages: dict[str, str]
    edits: dict[str, list[tuple[int, int, str]]]  # doc -> (old start, old end, new text), in order

    def moved(self, doc: str, start: int, end: int) -> tuple[int, int] | None:
        """Where old ``[start, end)`` of ``doc`` is now, or None when an edit touched it."""
        shift = 0
        for a, b, new in self.edits.get(doc, []):
            if a < end and start < b or a == b and start < a < end:
                return None
            if b <= start:
                shift += len(new) - (b - a)
        return start + shift, end + shift


def edit(kind: str, old: list[Span]) -> Edited:
    """``none``; ``intro``: a paragraph on top of every page; ``words``: the intro, and one
    word changed in every fourth old chunk; ``section``: the intro, and three paragraphs
    from the middle of every page deleted."""
    edits: dict[str, list[tuple[int, int, str]]] = {doc: [] for doc in PAGES}
    if kind != "none":
        for doc in PAGES:
            edits[doc].append((0, 0, INTRO + "\n\n"))
    if kind == "words":
        for i, sp in enumerate(old):
            words = [(k, w) for k, w in enumerate(sp.text.split(" ")) if w.isalpha() and len(w) > 3]
            if i % 4 or len(words) < 3:
                continue
            k, w = words[len(words) // 2]
            at = sp.start + sum(len(x) + 1 for x in sp.text.split(" ")[:k])
            assert PAGES[sp.doc][at : at + len(w)] == w
            edits[sp.doc].append((at, at + len(w), w[::-1] + "q"))
    if kind == "section":
        for doc, text in PAGES.items():
            pars = _paragraphs(doc, text)
            mid = len(pars) // 2
            edits[doc].append((pars[mid][0], pars[mid + 3][0], ""))
    pages = {}
    for doc, text in PAGES.items():
        es = sorted(set(edits[doc]))
        edits[doc] = es
        out, at = [], 0
        for a, b, new in es:
            out += [text[at:a], new]
            at = b
        pages[doc] = "".join(out) + text[at:]
    return Edited(pages, edits)


# ------------------------------------------------------------------ the check


def holds(chunk_text: str, label_text: str) -> bool:
    return normalize_text(label_text) in normalize_text(chunk_text)


def run(old_name: str, new_name: str, kind: str, spans: bool):
    old = chunk(old_name, PAGES)
    labelled = [sp for i, sp in enumerate(old) if i % 2 == 0]
    ed = edit(kind, old)
    new = chunk(new_name, ed.pages)
    labels = {
        sp.id: {"text": sp.text, **({"doc": sp.doc, "start": sp.start, "end": sp.end} if spans else {})}
        for sp in labelled
    }
    cases = [(f"q-{sp.id}", f"what does {sp.id} say?", (sp.id,)) for sp in labelled]
    chunks = [Chunk(c.id, c.text, c.doc, c.start, c.end) if spans else Chunk(c.id, c.text) for c in new]
    report = staleness.check_labels(cases, labels, chunks)
    return labelled, ed, {c.id: c for c in new}, report


SCENARIOS = [
    (old, new, kind)
    for old, new in [
        ("paragraphs", "langchain-800"),
        ("paragraphs", "langchain-400"),
        ("paragraphs", "llama-sentence-256"),
        ("langchain-400", "llama-sentence-256"),
    ]
    for kind in ("none", "intro", "words", "section")
]


# ------------------------------------------------------------------ evidence, files


def pydocs_states() -> list[LabelState]:
    """A state per label the pydocs cases expect, as ``check_labels`` makes them."""
    doc = TestSetDocument.load(PYDOCS / "pydocs.yaml", use_cache=False)
    ids = dict.fromkeys(c for case in doc.cases for c in case.expected)
    return [LabelState(cid, doc.labels.get(cid)) for cid in ids]


def label_states(labels: dict) -> list[LabelState]:
    return [LabelState(cid, lab) for cid, lab in labels.items()]


def evidence_of(scanner: Scanner) -> dict[str, tuple]:
    """Everything the scan gathered per label, comparable."""
    return {
        st.id: (
            st.own.id if st.own else None,
            [c.id for c in st.exact],
            [c.id for c in st.holders],
            [c.id for c in st.contains],
            sorted((k, v[0][0], v[1], v[2]) for k, v in st.pieces.items()),
            sorted((c.id, a, b) for c, a, b in st.spans),
            sorted(st.near),
        )
        for st in scanner.states.values()
    }


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


SPLIT_CASES = [s for s in SCENARIOS if s[2] == "words"]  # every pair of splitters, edited pages


def splitter_corpus(tmp_path: Path, old_name: str, new_name: str, kind: str, spans: bool):
    """A real re-chunking as a chunks file (with a blank line and a one-word chunk), and its
    ``(cases, labels, path)``."""
    old = chunk(old_name, PAGES)
    labelled = [sp for i, sp in enumerate(old) if i % 2 == 0]
    new = chunk(new_name, edit(kind, old).pages)
    labels = {
        sp.id: {"text": sp.text, **({"doc": sp.doc, "start": sp.start, "end": sp.end} if spans else {})}
        for sp in labelled
    }
    cases = [(f"q-{sp.id}", f"what does {sp.id} say?", (sp.id,)) for sp in labelled]
    rows = [
        {"id": c.id, "text": c.text, **({"doc": c.doc, "start": c.start, "end": c.end} if spans else {})}
        for c in new
    ]
    rows.insert(len(rows) // 3, {"id": "blank-below", "text": "x"})
    path = write_jsonl(tmp_path / "new.chunks.jsonl", rows)
    with path.open("ab") as f:  # blank lines count as lines, not chunks
        f.write(b"\n   \n")
    return cases, labels, path
