"""Which labels a test set needs, and what a label records about a chunk."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .regions import Coll
from .render import UnwritableText, surrogate_problems

if TYPE_CHECKING:
    from .document import TestSetDocument


def label_ids(cases: Coll, labels: Coll, prune: bool) -> tuple[list[str], list[str]]:
    """(expected chunk ids without a label, labels no case expects any more when pruning)."""
    expected = []
    seen: set[str] = set()
    for it in cases.items:
        for cid in it.data.get("expected", ()):
            if cid not in seen:
                seen.add(cid)
                expected.append(cid)
    have = {it.key for it in labels.items}
    need = [c for c in expected if c not in have]
    removed = [c for c in have if c not in seen] if prune else []
    return need, removed


def plan(doc: TestSetDocument, corpus: Any, when: str, prune: bool) -> dict[str, dict[str, Any] | None]:
    """The labels to record (chunk id -> label) and to drop (-> None) for ``doc``; reads it
    only (:meth:`TestSetDocument.label_plan`). Raises ``UnwritableText`` when a chunk's text
    cannot be written to the file."""
    need, removed = label_ids(doc._cases, doc._labels, prune)
    if not need and not removed:
        return {}
    found, corpus_hash = chunks_for(need, corpus, doc.corpus_path) if need else ({}, None)
    bad = surrogate_problems(str(doc.path), ((c, found[c].text) for c in need if c in found), chunks=True)
    if bad:
        raise UnwritableText(bad)
    out: dict[str, dict[str, Any] | None] = {
        cid: label_of(found[cid], when, corpus_hash) for cid in need if cid in found
    }
    out.update(dict.fromkeys(removed))
    return out


def chunks_for(need: list[str], corpus: Any, corpus_path: Path | None) -> tuple[dict[str, Any], str | None]:
    """(the needed chunks found, the corpus content hash) from ``corpus`` (a Corpus or a
    mapping id -> Chunk) or, if None, streamed from the chunks file (only the needed ids kept)."""
    if corpus is not None:
        return {c: corpus[c] for c in need if c in corpus}, getattr(corpus, "content_hash", None)
    if corpus_path is None or not corpus_path.exists():
        return {}, None
    from ..corpus import iter_chunks

    found: dict[str, Any] = {}
    hasher = hashlib.blake2b(digest_size=6)
    want = set(need)
    for ch in iter_chunks(corpus_path, problems=[], hasher=hasher):
        if ch.id in want and ch.id not in found:
            found[ch.id] = ch
    return found, hasher.hexdigest()


def label_of(chunk: Any, when: str, corpus_hash: str | None) -> dict[str, Any]:
    """What a label records: the chunk's fingerprint, text and place, when, and which corpus."""
    from ..text import fingerprint

    return {
        "sha": fingerprint(chunk.text),
        "text": chunk.text,
        "doc": chunk.doc,
        "start": chunk.start,
        "end": chunk.end,
        "when": when,
        "corpus": corpus_hash,
    }
