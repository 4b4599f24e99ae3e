"""What the LlamaIndex and LangChain adapters share: chunk ids that are the same in every
process, the chunks file, and a pipeline's answer turned into a §3 result.

Chunk ids (the same rule for both frameworks):

1. a chunk's own id, when it has one that is not a random uuid4 (both frameworks give
   every node or stored document a fresh ``uuid4`` in each process unless told
   otherwise; an id you or :func:`ordinal_ids` gave is kept);
2. otherwise ``DOC:START-END``: the document's file name and the character span of the
   chunk in it, the same for the same chunking in every process;
3. without a span, ``DOC#HASH`` (the chunk text's fingerprint); without a document
   name, ``chunk-HASH``.

:func:`ordinal_ids` gives readable ids instead (``errors-3``: the document's stem and
the chunk's position in it), for the ``assign_ids`` helpers that set them on the
pipeline's own nodes or documents before it is indexed, so that the pipeline's rankings
name them too.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ..core.files import atomic_write
from ..core.text import fingerprint

#: a uuid4 as both frameworks make them by default: random in every process
_UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", re.I)
#: what a chunk id may not hold: whitespace (the test set's rule) and the characters a
#: ``[id]`` citation is parsed by
_NOT_IN_ID = re.compile(r"[\s\[\],;]+")
#: numbered citations as LlamaIndex's CitationQueryEngine asks the model to write them:
#: ``[1]``, ``[2, 3]``
NUMBERED = re.compile(r"\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]")


def is_random_id(value: object) -> bool:
    """Whether ``value`` is no id at all or a random uuid4 (new in every process)."""
    if not isinstance(value, str) or not value.strip():
        return True
    return len(value) >= 36 and bool(_UUID4.match(value.strip()))  # a uuid4 has 36 characters


def clean_id(text: str) -> str:
    """``text`` usable as a chunk id: no whitespace, no ``[ ] , ;`` (each run becomes ``_``)."""
    return _NOT_IN_ID.sub("_", text.strip()).strip("_") or "chunk"


def doc_name(*candidates: object) -> str | None:
    """The first usable document name among ``candidates`` (a file name, or the last part
    of a path or URL); a random uuid is no name."""
    for c in candidates:
        if isinstance(c, (str, os.PathLike)) and str(c).strip() and not is_random_id(str(c)):
            text = str(c).strip().rstrip("/\\")
            name = re.split(r"[\\/]", text)[-1]
            if name:
                return name
    return None


@functools.lru_cache(maxsize=4096)
def _clean_name(doc: str) -> str:
    return clean_id(doc)


def derived_id(own: object, doc: str | None, start: object, end: object, text: str) -> str:
    """The chunk id of the module rules: ``own`` unless random, else from the document name
    and span, else from the text."""
    if not is_random_id(own):
        return str(own)
    if doc and isinstance(start, int) and isinstance(end, int):
        return f"{_clean_name(doc)}:{start}-{end}"
    if doc:
        return f"{_clean_name(doc)}#{fingerprint(text)[:8]}"
    return f"chunk-{fingerprint(text)}"


def ordinal_ids(keys: Sequence[tuple[str | None, str]]) -> list[str]:
    """Readable ids for chunks given as ``(document name, text)`` in their documents' order:
    ``STEM-N`` (N from 1 within each document; a stem two documents share keeps its
    extension; no document: ``chunk-N``)."""
    stems: dict[str, str] = {}
    taken: dict[str, str] = {}
    for name, _ in keys:
        if name is None or name in stems:
            continue
        stem = clean_id(Path(name).stem or name)
        if stem in taken and taken[stem] != name:
            stem = clean_id(name)
        taken[stem] = name
        stems[name] = stem
    counts: dict[str, int] = {}
    out = []
    for name, _ in keys:
        stem = stems[name] if name is not None else "chunk"
        counts[stem] = counts.get(stem, 0) + 1
        out.append(f"{stem}-{counts[stem]}")
    return out


class ChunkRow(NamedTuple):
    """One line of the chunks file (formats.md §2)."""

    id: str
    text: str
    doc: str | None = None
    start: int | None = None
    end: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "text": self.text}
        if self.doc is not None:
            d["doc"] = self.doc
        if self.start is not None and self.end is not None:
            d["start"], d["end"] = self.start, self.end
        return d


@contextlib.contextmanager
def no_gc():
    """The cyclic GC off while many small objects are made (rows of a 100k-node corpus):
    with every node of the pipeline alive, each collection walks them all."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class DuplicateChunkId(ValueError):
    """Two different chunks would get the same id."""


def write_chunks(rows: Iterable[ChunkRow], path: str | os.PathLike[str]) -> list[str]:
    """Write the chunks file atomically (never half-written); the ids, in file order.

    The same id twice with the same text (a chunk listed twice, e.g. by two retrievers'
    docstores) is written once; with different texts it is :class:`DuplicateChunkId`."""
    seen: dict[str, ChunkRow] = {}
    lines = []
    for row in rows:
        first = seen.get(row.id)
        if first is not None:
            if first.text == row.text:
                continue
            raise DuplicateChunkId(
                f"two different chunks would both be {row.id!r} ({first.text[:40]!r}… and "
                f"{row.text[:40]!r}…): give the documents distinct file names, or ids of your own"
            )
        seen[row.id] = row
        lines.append(orjson.dumps(row.to_dict()))
    atomic_write(path, b"\n".join(lines) + (b"\n" if lines else b""))
    return list(seen)


def number_citations(answer: str, ids: Sequence[str]) -> str:
    """``[1]`` → ``[ID]`` where ID is the chunk of numbered source 1 (``ids[0]``); a number
    with no source is left as written (it then shows as a citation the generator did not see)."""

    def one(m: re.Match[str]) -> str:
        out = []
        for part in m.group(1).split(","):
            n = int(part)
            out.append(ids[n - 1] if 1 <= n <= len(ids) else part.strip())
        unique = list(dict.fromkeys(out))
        return "[" + ", ".join(unique) + "]"

    return NUMBERED.sub(one, answer)


def result(
    ranking: Sequence[tuple[str, float | None]],
    *,
    answer: str | None = None,
    has_answer: bool = False,
    prompt_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """A §3 result: ``ranking`` as ``(chunk id, score)`` best first (an id met again is
    dropped, its first score kept); ``scores`` only when every score is a finite number;
    ``answer`` when the pipeline answers (``has_answer``), even ``None`` (an abstention)."""
    ids: list[str] = []
    scores: list[float | None] = []
    for cid, score in ranking:
        if cid in ids:
            continue
        ids.append(cid)
        scores.append(score)
    out: dict[str, Any] = {"ranking": ids}
    if ids and all(isinstance(s, (int, float)) and s == s and abs(s) != float("inf") for s in scores):
        out["scores"] = [float(s) for s in scores]  # type: ignore[arg-type]
    if has_answer:
        out["answer"] = answer
    if prompt_ids is not None:
        out["prompt_ids"] = list(dict.fromkeys(prompt_ids))
    return out


def text_of(value: object) -> str | None:
    """An answer as text: a string, a chat message's ``content`` (its text blocks joined),
    or None."""
    if value is None or isinstance(value, str):
        return value
    content = getattr(value, "content", value)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b if isinstance(b, str) else b.get("text", "") if isinstance(b, dict) else getattr(b, "text", "")
            for b in content
        ]
        return "".join(p for p in parts if isinstance(p, str))
    return str(value)
