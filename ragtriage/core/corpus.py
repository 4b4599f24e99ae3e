"""Chunks JSONL (formats.md §2): streaming reader with located errors.

``id`` and ``text`` are required, ``id`` is unique; ``doc``/``start``/``end``
are understood when present; every other field is kept in ``meta``.
"""

from __future__ import annotations

import hashlib
import os
import weakref
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


def _too_long(path: Path, line: int, max_line: int) -> None:
    msg = f"a line longer than {max_line >> 20} MB: not a chunks file (one JSON object per line)"
    raise CorpusError(Problem(str(path), line, msg))


#: the longest line a chunks file may hold; a longer one is not a chunk (``/dev/zero``, a dump)
MAX_LINE = 64 << 20


def iter_lines(
    path: Path, on_block=None, max_line: int = MAX_LINE, lo: int = 0, hi: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw bytes)`` of a JSONL file read in 4 MB blocks; ``on_block(block)``
    sees every block (a content hash, a progress meter). A line longer than ``max_line``
    bytes raises :class:`CorpusError` at its line, so memory stays bounded. ``lo``-``hi``:
    only those bytes (both at a line's start, or ``hi`` the end), lines numbered from ``lo``."""
    lineno = 0
    rest = b""
    with open(path, "rb") as f:
        f.seek(lo)
        left = -1 if hi is None else hi - lo
        while True:
            block = f.read(1 << 22 if left < 0 else min(1 << 22, left))
            left -= len(block)
            if not block:
                break
            if on_block is not None:
                on_block(block)
            parts = (rest + block).split(b"\n")
            rest = parts.pop()
            for raw in parts:
                lineno += 1
                if len(raw) > max_line:
                    _too_long(path, lineno, max_line)
                yield lineno, raw
            if len(rest) > max_line:
                _too_long(path, lineno + 1, max_line)
    if rest:
        yield lineno + 1, rest


def _short(name: str) -> str:
    return name if len(name) <= 200 else f"{name[:60]}…{name[-20:]} ({len(name):,} characters)"


def _setting_line(doc, key: str) -> int | None:
    """The line of a top-level setting in the test set's text (for ``file:line``)."""
    import re

    pat = re.compile(rf"{key}\s*:")
    for i, line in enumerate(doc.text.split("\n"), 1):
        if pat.match(line):
            return i
    return None


def require_readable(path, doc=None) -> None:
    """:class:`CorpusError` unless ``path`` is a chunks file that can be read: the same
    words for every command (a missing file, a link that loops, a name too long, a
    FIFO or device, a file whose first byte cannot be read such as ``/proc/self/mem``).
    ``doc``: the test set whose ``corpus:`` named it, so the message is at its line."""
    import errno
    import os
    import stat as _stat

    name = str(path)
    if "\x00" in name:
        raise CorpusError(Problem(repr(name), None, "not a usable path (a NUL byte)"))
    why = None
    try:
        st = os.stat(path)
        if _stat.S_ISDIR(st.st_mode):
            why = "is a folder, not a chunks file"
        elif not _stat.S_ISREG(st.st_mode):
            from .files import kind_of

            why = f"this chunks file is {kind_of(st.st_mode)}, not a regular file (give a file)"
        else:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                os.read(fd, 1)
            finally:
                os.close(fd)
    except FileNotFoundError:
        why = "chunks file not found"
    except OSError as e:
        if e.errno == errno.ELOOP:
            why = "is a symbolic link that loops (a link to itself, or a ring of links); fix the link"
        elif e.errno == errno.ENAMETOOLONG:
            why = "file name too long for this system"
        else:
            why = f"cannot read this chunks file ({e.strerror or e})"
    if why is None:
        return
    if doc is not None and getattr(doc, "corpus_path", None) is not None and str(doc.corpus_path) == name:
        raise CorpusError(
            Problem(str(doc.path), _setting_line(doc, "corpus"), f"{_short(name)}: {why}", field="corpus")
        )
    raise CorpusError(Problem(_short(name), None, why))


def iter_chunks(path, problems: list[Problem] | None = None, hasher=None) -> Iterator[Chunk]:
    """Yield chunks one by one. Bad lines are appended to ``problems`` (if given)
    or raise :class:`CorpusError` at once. Duplicate ids are not checked here."""
    path = Path(path)
    name = str(path)
    require_readable(path)
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
        if not (_whole(start) and _whole(end)):
            bad(lineno, f"chunk {cid!r}: start/end must be whole numbers", field="start")
            continue
        yield Chunk(cid, text, doc, start, end, obj, lineno)


def _whole(v: object) -> bool:
    """None or a whole number (``true`` is not 1 here)."""
    return v is None or (isinstance(v, int) and not isinstance(v, bool))


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


_LOADED: tuple[tuple, weakref.ref] | None = None  # the last corpus read whole, while it lives


def _stat_key(path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def loaded_corpus(path) -> Corpus | None:
    """The corpus :func:`load_corpus` read from ``path`` if it is still in memory and the file
    has not changed since (same inode, size and modification time), else None: a second
    reader (the clusters of the intervals) need not read a million chunks again."""
    if _LOADED is None:
        return None
    key, ref = _LOADED
    c = ref()
    return c if c is not None and _stat_key(path) == key else None


def load_corpus(path) -> Corpus:
    """Read a chunks JSONL file completely; raise :class:`CorpusError` with every problem."""
    global _LOADED
    key = _stat_key(path)
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
    corpus = Corpus(chunks, name, hasher.hexdigest())
    if key is not None and key == _stat_key(path):  # unchanged while it was read
        _LOADED = (key, weakref.ref(corpus))
    return corpus
