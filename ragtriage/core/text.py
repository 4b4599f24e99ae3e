"""Text normalisation and fingerprints shared by labels and stale detection.

Two chunk texts are "the same" when they are equal after Unicode NFC, case
folding and collapsing every run of whitespace to one space: a re-chunking that
only moves line breaks does not make a label stale.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata

_WS = re.compile(r"\s+")


def collapse(text: str) -> str:
    """NFC, every run of whitespace (a no-break space, a tab, a line break) one space, trimmed;
    case and everything else kept. The one normalisation of text compared as written: a
    label's text with its chunk (staleness.md), ``must_contain`` and ``answer`` with the
    system's answer (evaluation.md; ``answer`` also ignores case and final punctuation)."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.split())


def normalize_text(text: str) -> str:
    """NFC, case-folded, whitespace collapsed and trimmed."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return _WS.sub(" ", text.casefold()).strip()


def fingerprint(text: str) -> str:
    """Short stable hash (12 hex digits) of the normalised text."""
    return hashlib.blake2b(normalize_text(text).encode("utf-8"), digest_size=6).hexdigest()


def file_hash(path: str | os.PathLike[str], chunk_size: int = 1 << 22) -> str:
    """Content hash of a file (12 hex digits), streaming."""
    h = hashlib.blake2b(digest_size=6)
    with open(path, "rb") as f:
        while True:
            block = f.read(chunk_size)
            if not block:
                break
            h.update(block)
    return h.hexdigest()
