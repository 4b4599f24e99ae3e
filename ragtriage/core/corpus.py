"""Chunks JSONL (formats.md §2): streaming reader with located errors.

``id`` and ``text`` are required, ``id`` is unique; ``doc``/``start``/``end``
are understood when present; every other field is kept in ``meta``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from .errors import CorpusError, Problem

MAX_PROBLEMS = 50


class Chunk:
    __slots__ = ("id", "text", "doc", "start", "end", "meta", "line")

    def __init__(self, id: str, text: str, doc=None, start=None, end=None, meta=None, line=0):
        self.id = id
        self.text = text
        self.doc = doc
        self.start = start
        self.end = end
        self.meta = meta or {}
        self.line = line

    def to_dict(self) -> dict:
        d = {"id": self.id, "text": self.text}
        if self.doc is not None:
            d["doc"] = self.doc
        if self.start is not None:
            d["start"] = self.start
        if self.end is not None:
            d["end"] = self.end
        d.update(self.meta)
        return d

    def __repr__(self) -> str:
        return f"Chunk({self.id!r}, {self.text[:40]!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Chunk) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable-ish record: unhashable, as a dataclass(eq=True)


def iter_lines(path: Path, on_block=None) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw bytes)`` of a JSONL file read in 4 MB blocks; ``on_block(block)``
    sees every block (a content hash, a progress meter)."""
    lineno = 0
    rest = b""
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 22)
            if not block:
                break
            if on_block is not None:
                on_block(block)
            parts = (rest + block).split(b"\n")
            rest = parts.pop()
            for raw in parts:
                lineno += 1
                yield lineno, raw
    if rest:
        yield lineno + 1, rest


def iter_chunks(path, problems: list[Problem] | None = None, hasher=None) -> Iterator[Chunk]:
    """Yield chunks one by one. Bad lines are appended to ``problems`` (if given)
    or raise :class:`CorpusError` at once. Duplicate ids are not checked here."""
    path = Path(path)
    name = str(path)
    if not path.exists():
        raise CorpusError(Problem(name, None, "chunks file not found"))
    if path.is_dir():
        raise CorpusError(Problem(name, None, "is a folder, not a chunks file"))
    if hasher is None:
        hasher = hashlib.blake2b(digest_size=6)
    loads = orjson.loads

    def bad(line, msg, field=None):
        p = Problem(name, line, msg, field=field)
        if problems is None:
            raise CorpusError(p)
        problems.append(p)
        if len(problems) >= MAX_PROBLEMS:
            problems.append(Problem(name, None, "too many problems; stopped reading"))
            raise CorpusError(problems)

    for lineno, raw in iter_lines(path, hasher.update):
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as e:
            if b"\x00" in raw:
                bad(lineno, "not a text file (NUL byte); expected one JSON object per line")
            else:
                bad(lineno, f"not valid JSON ({e.args[0] if e.args else e})")
            continue
        if not isinstance(obj, dict):
            bad(lineno, f"expected a JSON object, got {type(obj).__name__}")
            continue
        cid = obj.pop("id", None)
        text = obj.pop("text", None)
        if cid is None:
            bad(lineno, "is required", field="id")
            continue
        if not isinstance(cid, str) or not cid.strip():
            bad(lineno, "must be a non-empty string", field="id")
            continue
        if text is None:
            bad(lineno, f"chunk {cid!r}: is required", field="text")
            continue
        if not isinstance(text, str):
            bad(lineno, f"chunk {cid!r}: must be a string", field="text")
            continue
        doc = obj.pop("doc", None)
        start = obj.pop("start", None)
        end = obj.pop("end", None)
        if start is not None and not isinstance(start, int) or end is not None and not isinstance(end, int):
            bad(lineno, f"chunk {cid!r}: start/end must be whole numbers", field="start")
            continue
        yield Chunk(cid, text, doc, start, end, obj, lineno)


class Corpus(Mapping):
    """id -> :class:`Chunk`, in file order, with the file's content hash."""

    def __init__(self, chunks: dict[str, Chunk], path: str | None = None, content_hash: str | None = None):
        self._chunks = chunks
        self.path = path
        self.content_hash = content_hash

    def __getitem__(self, key: str) -> Chunk:
        return self._chunks[key]

    def __iter__(self):
        return iter(self._chunks)

    def __len__(self) -> int:
        return len(self._chunks)

    def __contains__(self, key) -> bool:
        return key in self._chunks

    def __repr__(self) -> str:
        return f"Corpus({self.path!r}, {len(self)} chunks)"

    @classmethod
    def from_chunks(cls, chunks, path=None) -> Corpus:
        return cls({c.id: c for c in chunks}, path)


def load_corpus(path) -> Corpus:
    """Read a chunks JSONL file completely; raise :class:`CorpusError` with every problem."""
    problems: list[Problem] = []
    hasher = hashlib.blake2b(digest_size=6)
    chunks: dict[str, Chunk] = {}
    name = str(path)
    import gc

    was = gc.isenabled()
    gc.disable()  # a million small objects: the cyclic GC would dominate
    try:
        for c in iter_chunks(path, problems, hasher):
            first = chunks.get(c.id)
            if first is not None:
                problems.append(
                    Problem(name, c.line, f"duplicate id {c.id!r} (first at line {first.line})", field="id")
                )
                if len(problems) >= MAX_PROBLEMS:
                    break
                continue
            chunks[c.id] = c
    finally:
        if was:
            gc.enable()
    if problems:
        raise CorpusError(problems)
    if not chunks and os.path.getsize(path) == 0:
        pass  # an empty corpus is allowed; validate warns about missing ids
    return Corpus(chunks, name, hasher.hexdigest())
