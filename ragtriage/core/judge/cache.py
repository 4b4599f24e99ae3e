"""Verdicts cached by content: a re-run of an unchanged case costs no call.

The key is a hash of everything the verdict depends on — judge model, prompt
version and language, question, answer, the chunk texts the generator saw,
the reference — so a changed chunk or answer is asked again and nothing else
is. The cache is one append-only JSONL file (``key``, ``supported``,
``correct``, ``reason``): loading 100,000 verdicts is one read, and a line
written by a run that was killed mid-way is skipped, not fatal.

Default place: ``$RAGTRIAGE_CACHE_DIR/judge.jsonl``, else
``$XDG_CACHE_HOME/ragtriage/judge.jsonl`` (``~/.cache`` when unset).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import orjson

CacheEntry = tuple[bool, bool | None, str]


def default_cache_path() -> Path:
    base = os.environ.get("RAGTRIAGE_CACHE_DIR")
    if base:
        return Path(base) / "judge.jsonl"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "ragtriage" / "judge.jsonl"


def text_digest(text: str, memo: dict[str, str] | None = None) -> str:
    """32 hex digits of one chunk text; ``memo`` spares re-hashing a chunk many cases share."""
    if memo is not None:
        d = memo.get(text)
        if d is not None:
            return d
    d = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    if memo is not None:
        memo[text] = d
    return d


def cache_key(
    model: str,
    prompt: str,
    question: str,
    answer: str,
    chunk_texts: Sequence[str],
    reference: tuple[str, str] | None,
    memo: dict[str, str] | None = None,
) -> str:
    """32 hex digits naming one verdict's inputs (``prompt``: version and language).

    Chunk texts enter by their digest (:func:`text_digest`, memoised across cases,
    32 characters each); every other part behind a header of its length, so no
    two different inputs give the same bytes by moving text between parts."""
    digests = "".join([text_digest(t, memo) for t in chunk_texts])
    if reference is None:
        ref = "-"
    else:
        kind, text = reference
        ref = f"{len(kind)},{len(text)}|{kind}{text}"
    data = (
        f"{len(model)},{len(prompt)},{len(question)},{len(answer)},{len(chunk_texts)}|"
        f"{model}{prompt}{question}{answer}{digests}{ref}"
    )
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class JudgeCache:
    """Key -> (supported, correct, reason), read once, appended to as verdicts come."""

    def __init__(self, path: Path | None):
        self.path = path
        self._data: dict[str, CacheEntry] = {}
        self._f: BinaryIO | None = None
        if path is not None and path.is_file():
            self._load(path)

    def _load(self, path: Path) -> None:
        data = self._data
        for raw in path.read_bytes().splitlines():
            try:
                obj = orjson.loads(raw)
                data[obj["key"]] = (obj["supported"], obj["correct"], obj["reason"])
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut off by a killed run: that verdict is asked again

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: str) -> CacheEntry | None:
        return self._data.get(key)

    def put(self, key: str, entry: CacheEntry) -> None:
        self._data[key] = entry
        if self.path is None:
            return
        if self._f is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._f = open(self.path, "ab")
        sup, cor, reason = entry
        line = orjson.dumps(
            {"key": key, "supported": sup, "correct": cor, "reason": reason}, option=orjson.OPT_APPEND_NEWLINE
        )
        self._f.write(line)  # one write per line: concurrent runs interleave whole lines
        self._f.flush()

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None
