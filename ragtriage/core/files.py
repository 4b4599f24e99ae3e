"""Writing files so that a crash never leaves half of one: temp file, fsync, replace."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path, data: bytes | str, *, encoding: str = "utf-8") -> None:
    """Write ``data`` to ``path`` atomically, keeping an existing file's permissions."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode(encoding)
    parent = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def append_line(path, line: bytes) -> None:
    """Add one line to ``path`` (created when missing) in a single ``write``, so that two
    writers' lines never interleave; a file a person left without a final newline gets one
    first. Never rewrites what is there. Raises ``OSError``."""
    p = Path(path)
    needs_newline = False
    if p.exists() and p.stat().st_size:
        with open(p, "rb") as f:
            f.seek(-1, os.SEEK_END)
            needs_newline = f.read(1) != b"\n"  # a hand edit without a final newline
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (b"\n" if needs_newline else b"") + line)
        os.fsync(fd)
    finally:
        os.close(fd)


def require_regular_file(path, what: str = "file") -> None:
    """Refuse an input that is not a regular file (a FIFO blocks forever, /dev/zero never ends).

    Raises :class:`~ragtriage.core.errors.InputError` located at ``path``; a missing file is
    left to the caller's own message.
    """
    import stat

    from .errors import InputError, Problem

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        raise InputError(Problem(str(path), None, f"cannot read this {what}: {e}")) from None
    if not stat.S_ISREG(mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(mode)
            else "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device or special file"
        )
        raise InputError(Problem(str(path), None, f"this {what} is {kind}, not a regular file (give a file)"))
