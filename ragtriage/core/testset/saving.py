"""Saving a test set when others may save it too: lock, check, replace, remember.

Every writer of a test set (the app, the API, ``stale --fix``, ``import``) saves through
:meth:`TestSetDocument.save`, which calls :func:`write`. Between "has the file changed
since I loaded it?" and "replace it" another process could replace it too; the second
replace would then silently drop the first one's save. So :func:`write` holds an
advisory lock (``flock``) across the check and the replace, and afterwards remembers the
fingerprint of the bytes *it* wrote (the stat of its own file descriptor, not of whatever
is at the path a moment later).

Which lock, and why
-------------------
The lock is taken on the test set file itself, not on a lock file beside it: no
``.lock`` file is left in a person's folder (or in their ``git status``), and nothing
extra must be creatable there. A save replaces the file (a new inode), so whoever waited
on the old inode re-opens the path after getting the lock and locks the file that is
there now; the holder's replace is then seen as a change, and that save is refused with
:class:`ConflictError` rather than lost. A new file (``import -o NEW``, a save-as) is
created exclusively instead (linked into place: it exists complete or not at all).

``flock`` on Linux NFS clients is carried by the NFS lock protocol (NFSv4, or lockd for
v3). Where the file system has no locks at all (``ENOLCK``, ``EOPNOTSUPP``), the save goes
on unlocked with the same check as before: refusing every save on such a mount would be
worse than the race. A lock held longer than :data:`LOCK_WAIT` seconds (a process stopped
mid-save) makes the save fail with a message, never hang.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ConflictError
from ..files import atomic_write
from . import ondisk as _ondisk

try:
    import fcntl
except ImportError:  # not a POSIX system: no advisory locks
    fcntl = None  # type: ignore[assignment]

LOCK_WAIT = 10.0  # seconds a save waits for another process's save to finish
#: a file system without locks (the save goes on unlocked, checked as before)
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL, errno.EBADF}


@contextmanager
def locked(path: Path, wait: float | None = None) -> Iterator[bool]:
    """An exclusive advisory lock on the file now at ``path`` (True), or no lock (False)
    when there is no file yet or the file system has no locks. ``wait``: at most this many
    seconds for another holder (default :data:`LOCK_WAIT`), then :class:`ConflictError`."""
    if fcntl is None:
        yield False
        return
    wait = LOCK_WAIT if wait is None else wait
    deadline = time.monotonic() + wait
    pause = 0.001
    while True:
        fd = _open_for_lock(path)
        if fd is None:
            yield False
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() > deadline:
                raise ConflictError(
                    str(path),
                    f"{path}: another process has been saving it for {wait:g} s; not saved "
                    "(try again when it is done)",
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
            continue
        except OSError as e:
            os.close(fd)
            if e.errno in _NO_LOCKS:
                yield False
                return
            raise
        try:
            now = os.stat(path)
        except FileNotFoundError:
            now = None
        if now is None or now.st_ino != os.fstat(fd).st_ino or now.st_dev != os.fstat(fd).st_dev:
            os.close(fd)  # replaced while we waited: lock the file that is there now
            continue
        try:
            yield True
        finally:
            os.close(fd)  # closing the descriptor releases the lock
        return


def _open_for_lock(path: Path) -> int | None:
    flags = os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, os.O_RDWR | flags)  # NFS carries flock as a write lock: needs O_RDWR
    except FileNotFoundError:
        return None
    except (PermissionError, IsADirectoryError):
        pass
    try:
        return os.open(path, os.O_RDONLY | flags)
    except FileNotFoundError:
        return None


def check(path: Path, known: tuple[int, ...] | None, known_digest: str | None) -> None:
    """:class:`ConflictError` when the file at ``path`` is not the one loaded or last saved."""
    if known is None and not os.path.lexists(path):
        return
    if _ondisk.changed(path, known, known_digest):
        raise ConflictError(str(path))


def write(
    path: Path,
    target: Path,
    data: bytes,
    *,
    known: tuple[int, ...] | None,
    known_digest: str | None,
    check_first: bool,
    new: bool,
    allow_read_only: bool,
) -> tuple[tuple[int, ...], str]:
    """Replace ``target`` (``path`` itself, or a save-as) by ``data`` under the lock.

    ``check_first``: refuse (ConflictError) when ``path`` changed since it had ``known`` /
    ``known_digest``. ``new``: the document was never on disk, so the file is created
    exclusively (ConflictError when the name was taken meanwhile). Returns the
    fingerprint and digest of the bytes written, for the next save's check."""
    real = _ondisk.writable_target(target, allow_read_only)
    with locked(real):
        if check_first:
            check(path, known, known_digest)
        try:
            st = atomic_write(real, data, exclusive=new)
        except FileExistsError:
            raise ConflictError(
                str(target), f"{target}: already exists (made while this was being written); not overwritten"
            ) from None
    _ondisk.remove_stale_temp_files(real)
    return _ondisk.fingerprint(st), _ondisk.digest(data)
