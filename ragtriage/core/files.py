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
