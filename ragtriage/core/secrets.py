"""Secrets never leave the process: one place that knows them and blanks them out.

An API key reaches ragtriage from the environment (``--api-key-env``,
``--judge-key-env``) or inside a URL (``http://user:pass@host``). A server may
echo either back in an error body, and that text is then recorded in the run
file, the CI reports and the terminal. Every system and every writer of
recorded or printed text passes it through :func:`redact`, which replaces each
registered secret with ``***``.
"""

from __future__ import annotations

import threading
from urllib.parse import unquote, urlsplit

MASK = "***"
_MIN_LEN = 4  # shorter values would blank ordinary words; no real key is this short

_lock = threading.Lock()
_secrets: set[str] = set()


def register(value: str | None) -> None:
    """Remember ``value`` (and its percent-decoded form) as a secret for the life of the process."""
    if not value or len(value) < _MIN_LEN:
        return
    with _lock:
        _secrets.add(value)
        decoded = unquote(value)
        if len(decoded) >= _MIN_LEN:
            _secrets.add(decoded)


def register_url(url: str) -> None:
    """Register the userinfo of ``url`` (``user:pass@``): the password, and the pair as written."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    if parts.password:
        register(parts.password)
    if "@" in parts.netloc:
        register(parts.netloc.rsplit("@", 1)[0])


def strip_userinfo(url: str) -> str:
    """``url`` without ``user:pass@``, for display and for the run file's meta."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``***`` (longest first)."""
    if not _secrets or not text:
        return text
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)
    for s in known:
        if s in text:
            text = text.replace(s, MASK)
    return text


def forget_all() -> None:
    """Tests only: start from no registered secret."""
    with _lock:
        _secrets.clear()
