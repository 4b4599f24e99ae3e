"""The test set's file on disk: what identifies a version of it, where a save
writes, and what a killed save left behind."""

from __future__ import annotations

import glob
import hashlib
import os
import stat
import time
from pathlib import Path

from ..errors import Problem, TestSetError


def fingerprint(st: os.stat_result) -> tuple[int, ...]:
    """What changes whenever a file's content does: a same-size rewrite with its mtime put
    back (rsync -a, cp -p) still moves the ctime, and a replace gives a new inode."""
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def read(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """At most ``limit + 1`` bytes of the regular file at ``path``, and the stat of the very
    file read (from its descriptor): a save replacing it meanwhile cannot pair one
    version's bytes with another version's fingerprint."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise TestSetError(Problem(str(path), None, f"cannot read ({e.strerror or e})")) from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped for a FIFO or a device since it was looked at
            raise TestSetError(Problem(str(path), None, "is not a file"))
        return f.read(limit + 1), st


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_only_fs(path: Path) -> bool:
    """Is the folder of ``path`` on a file system mounted read-only?"""
    try:
        return bool(os.statvfs(path.parent if str(path.parent) else ".").f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def unsaveable(path: Path) -> str | None:
    """Why nothing can be saved at ``path`` (said when the app opens it), or None."""
    real = Path(os.path.realpath(path))
    if read_only_fs(real):
        return "is on a read-only file system: nothing can be saved here (work on a copy elsewhere)"
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return None
    if not mode & 0o222 or not os.access(real, os.W_OK):
        return "is read-only: edits cannot be saved (make it writable, e.g. chmod u+w)"
    if not os.access(real.parent, os.W_OK | os.X_OK):
        return f"its folder {real.parent} is not writable: edits cannot be saved"
    return None


def writable_target(target: Path, allow_read_only: bool) -> Path:
    """The file a save writes: a link's target; refused when read-only (unless allowed),
    on a read-only file system, or when it is not a regular file (a link to a device is
    never replaced by a file)."""
    real = Path(os.path.realpath(target)) if target.is_symlink() else target
    if read_only_fs(real):
        msg = "is on a read-only file system; nothing can be saved there (save a copy elsewhere)"
        raise TestSetError(Problem(str(target), None, msg))
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return real
    if not stat.S_ISREG(mode):
        raise TestSetError(
            Problem(str(target), None, "is not a regular file; a test set is saved only as one")
        )
    if not allow_read_only and (not mode & 0o222 or not os.access(real, os.W_OK)):
        msg = "is read-only; not replaced (make it writable, e.g. chmod u+w, to save)"
        raise TestSetError(Problem(str(target), None, msg))
    return real


def remove_stale_temp_files(path: Path, age: float = 3600.0) -> None:
    """Temp files a killed save left beside ``path`` (an hour old: not another save's)."""
    limit = time.time() - age
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        try:
            if tmp.is_file() and not tmp.is_symlink() and tmp.stat().st_mtime < limit:
                tmp.unlink()
        except OSError:
            pass


def changed(path: Path, known: tuple[int, ...] | None, known_digest: str | None) -> bool:
    """Has the file at ``path`` changed since it had the stat ``known`` and content ``known_digest``?"""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return known is not None
    if known is None:
        return True
    if fingerprint(st) == known:  # ctime and inode too: rsync -a / cp -p restore only the mtime
        return False
    return digest(path.read_bytes()) != known_digest
