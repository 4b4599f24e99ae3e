"""The Scanner fed one chunk at a time (`feed`, a parsed line or a Chunk) gathers the same
evidence as its scan of the chunks file: the pydocs labels against the re-chunked windows."""

from __future__ import annotations

from pathlib import Path

import orjson

from ragtriage.core.corpus import iter_chunks
from ragtriage.core.document import TestSetDocument
from ragtriage.core.staleness import LabelState, Scanner

PYDOCS = Path(__file__).resolve().parents[2] / "testsets" / "pydocs"
WINDOWS = PYDOCS / "pydocs-windows.chunks.jsonl"


def _states() -> list[LabelState]:
    doc = TestSetDocument.load(PYDOCS / "pydocs.yaml", use_cache=False)
    ids = dict.fromkeys(c for case in doc.cases for c in case.expected)
    return [LabelState(cid, doc.labels.get(cid)) for cid in ids]


def _evidence(scanner: Scanner) -> dict[str, tuple]:
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


def test_feeding_lines_or_chunks_gathers_what_the_scan_does():
    scanned = Scanner(_states(), str(WINDOWS), in_memory=False)
    scanned.scan(WINDOWS)
    lines = Scanner(_states(), str(WINDOWS), in_memory=False)
    for n, raw in enumerate(WINDOWS.read_bytes().splitlines(), 1):
        lines.feed(n, orjson.loads(raw))
    lines.finish()
    chunks = Scanner(_states(), None, in_memory=True)
    for ch in iter_chunks(WINDOWS):
        chunks.feed(ch.line, ch)
    chunks.finish()
    want = _evidence(scanned)
    assert any(e[1] or e[2] or e[4] for e in want.values())  # the re-chunking left evidence to compare
    assert _evidence(lines) == want
    assert _evidence(chunks) == want
    assert scanned.seq == lines.seq == chunks.seq > 0
