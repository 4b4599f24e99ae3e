"""Secrets never leave the process: one place that knows them and blanks them out.

An API key reaches ragtriage from the environment (``--api-key-env``,
``--judge-key-env``) or inside a URL (``http://user:pass@host``). A server may
echo either back in an error body, and that text is then recorded in the run
file, the CI reports and the terminal. Every system and every writer of
recorded or printed text passes it through :func:`redact`, which replaces each
registered secret with ``***``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO
from urllib.parse import unquote, urlsplit

MASK = "***"
_MIN_LEN = 4  # shorter values would blank ordinary words; no real key is this short

_lock = threading.Lock()
_secrets: set[str] = set()
_warned: set[str] = set()  # variables whose key needed stripping, said once per process


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
        register_basic(unquote(parts.username or ""), unquote(parts.password))
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
        _warned.clear()


def key_from_env(name: str) -> tuple[str | None, str | None]:
    """The API key in ``$name``, and a warning to print (or None).

    A key from a CI secret store or a ``.env`` file often ends in a newline, a space or
    CRLF. Sent as it is, the server may echo the stripped form back, which would then
    be unknown to :func:`redact`. So the key sent is stripped of surrounding
    whitespace, every form (as set, stripped, each side stripped) is registered, and
    the first time a variable needed stripping the warning says so (once per process)."""
    raw = os.environ.get(name)
    if raw is None:
        return None, None
    key = raw.strip()
    for form in (raw, key, raw.rstrip(), raw.lstrip(), raw.rstrip("\r\n")):
        register(form)
    if not key:
        return None, f"${name} is set but holds only whitespace: no key is sent" if raw else None
    if key != raw and name not in _warned:
        with _lock:
            _warned.add(name)
        return key, (
            f"${name}: the key had whitespace around it (a newline from a secret store or a .env "
            "file?); it is sent without it"
        )
    return key, None


def register_basic(user: str, password: str) -> str:
    """Register a Basic credential (the password and its base64 token); returns the header value."""
    import base64

    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    register(password)
    register(token)
    return f"Basic {token}"


def active() -> bool:
    """Whether any secret is registered (callers skip the redaction work when not)."""
    return bool(_secrets)


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` for UTF-8 bytes (a run-file line)."""
    if not _secrets:
        return data
    text = data.decode("utf-8", "surrogateescape")
    out = redact(text)
    return data if out is text else out.encode("utf-8", "surrogateescape")


class _RedactingStream:
    """A text stream that blanks registered secrets out of everything written to it and,
    with ``show``, passes the text through it (the CLI shows terminal escapes and bidi
    controls visibly: :func:`ragtriage.core.escape.visible`). ``.data`` is the same stream
    for data a command prints on purpose (an export to stdout, a progress bar's own
    escapes): redacted, not altered."""

    def __init__(self, stream: TextIO, show: Callable[[str], str] | None = None) -> None:
        self._stream = stream
        self._show = show

    def write(self, text: str) -> int:
        out = redact(text) if _secrets else text
        if self._show is not None:
            out = self._show(out)
        self._stream.write(out)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    @property
    def data(self) -> _RedactingStream:
        return _RedactingStream(self._stream) if self._show is not None else self

    def __getattr__(self, name: str) -> Any:  # the wrapped stream's own, whatever it is
        return getattr(self._stream, name)


@contextmanager
def redacting_streams(show: Callable[[str], str] | None = None) -> Iterator[None]:
    """While inside, ``sys.stdout`` and ``sys.stderr`` redact every secret written (and
    pass it through ``show`` when given)."""
    import sys

    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _RedactingStream(out, show), _RedactingStream(err, show)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def data_stream(stream: TextIO) -> TextIO:
    """``stream`` for data printed on purpose (not shown visibly; still redacted)."""
    return getattr(stream, "data", stream)
