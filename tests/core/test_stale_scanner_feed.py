"""The Scanner fed one chunk at a time (`feed`, a parsed line or a Chunk) gathers the same
evidence as its scan of the chunks file: the pydocs labels against the re-chunked windows."""

from __future__ import annotations

import orjson

from ragtriage.core.corpus import iter_chunks
from ragtriage.core.staleness import Scanner
from tests.core.stalekit import WINDOWS, evidence_of, pydocs_states


def test_feeding_lines_or_chunks_gathers_what_the_scan_does():
    scanned = Scanner(pydocs_states(), str(WINDOWS), in_memory=False)
    scanned.scan(WINDOWS)
    lines = Scanner(pydocs_states(), str(WINDOWS), in_memory=False)
    for n, raw in enumerate(WINDOWS.read_bytes().splitlines(), 1):
        lines.feed(n, orjson.loads(raw))
    lines.finish()
    chunks = Scanner(pydocs_states(), None, in_memory=True)
    for ch in iter_chunks(WINDOWS):
        chunks.feed(ch.line, ch)
    chunks.finish()
    want = evidence_of(scanned)
    assert any(e[1] or e[2] or e[4] for e in want.values())  # the re-chunking left evidence to compare
    assert evidence_of(lines) == want
    assert evidence_of(chunks) == want
    assert scanned.seq == lines.seq == chunks.seq > 0
