"""Verdicts cached by content: a re-run of an unchanged case costs no call.

The key is a hash of everything the verdict depends on — the judge's endpoint
(its base URL, without any userinfo) and model, the prompt version and language,
the sampling settings, question, answer, the chunk texts the generator saw, the
reference — so another endpoint serving a model of the same name, a changed
chunk or answer is asked again and nothing else is. The cache is one
append-only JSONL file (``key``, ``supported``, ``correct``, ``reason``,
``mac``): loading 100,000 verdicts is one read, and a line written by a run that
was killed mid-way is skipped, not fatal. ``mac`` is a keyed MAC
(:mod:`ragtriage.core.cachekey`) over the line's fields: a line this user's
ragtriage did not write (a cache restored from elsewhere, a forged verdict) is
ignored, so the cache can make a run cheaper but never change a verdict. A cache
file that is not a regular file or is larger than :data:`MAX_BYTES` is not used
(the judge says so and asks every case).

Default place: ``$RAGTRIAGE_CACHE_DIR/judge.jsonl``, else
``$XDG_CACHE_HOME/ragtriage/judge.jsonl`` (``~/.cache`` when unset).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import orjson

from .. import cachekey
from ..errors import InputError
from ..files import kind_of, read_bounded

CacheEntry = tuple[bool, bool | None, str]
MAX_BYTES = 1 << 30  # about five million verdicts


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


def _mac(key: str, supported: object, correct: object, reason: object) -> str | None:
    tag = cachekey.mac(orjson.dumps([key, supported, correct, reason]))
    return None if tag is None else tag.hex()


def unusable(path: Path | None) -> str | None:
    """Why the cache file at ``path`` cannot be used (not a regular file, too big), or None."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"the judge's cache cannot be read ({e.strerror or e}); not used"
    if not stat.S_ISREG(st.st_mode):
        return f"the judge's cache is {kind_of(st.st_mode)}, not a regular file; not used (remove it)"
    if st.st_size > MAX_BYTES:
        return f"the judge's cache is over {MAX_BYTES >> 20} MB; not used (remove it)"
    return None


class JudgeCache:
    """Key -> (supported, correct, reason), read once, appended to as verdicts come."""

    def __init__(self, path: Path | None):
        self.path = path if unusable(path) is None else None
        self._data: dict[str, CacheEntry] = {}
        self._f: BinaryIO | None = None
        if self.path is not None:
            self._load(self.path)

    def _load(self, path: Path) -> None:
        try:
            raw_bytes = read_bounded(path, MAX_BYTES, "judge cache")
        except InputError:  # swapped for a FIFO or grown since it was looked at
            self.path = None
            return
        if not raw_bytes:
            return
        data = self._data
        k = cachekey.key()
        for raw in raw_bytes.splitlines():
            try:
                obj = orjson.loads(raw)
                entry = (obj["supported"], obj["correct"], obj["reason"])
                tag = obj["mac"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut off by a killed run: that verdict is asked again
            if k is not None and isinstance(tag, str) and tag == _mac(obj["key"], *entry):
                data[obj["key"]] = entry  # written here; any other line is not trusted

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
        tag = _mac(key, sup, cor, reason)
        if tag is None:
            return  # no key to sign it with: kept for this run only
        line = orjson.dumps(
            {"key": key, "supported": sup, "correct": cor, "reason": reason, "mac": tag},
            option=orjson.OPT_APPEND_NEWLINE,
        )
        self._f.write(line)  # one write per line: concurrent runs interleave whole lines
        self._f.flush()

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None
