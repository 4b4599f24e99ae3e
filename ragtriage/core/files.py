"""Writing files so that a crash never leaves half of one (temp file, fsync, replace), and
reading the files the tool opens on its own (a cache, a sidecar, a recovery file) with a
bound: a regular file of a sane size, never a FIFO that blocks or ``/dev/zero``."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import StrPath

#: errors of a file system that has no hard links (FAT, some FUSE mounts): ``exclusive``
#: then reserves the name with O_EXCL before replacing it
_NO_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}


def atomic_write(
    path: StrPath, data: bytes | str, *, encoding: str = "utf-8", exclusive: bool = False
) -> os.stat_result:
    """Write ``data`` to ``path`` atomically, keeping an existing file's permissions.

    Returns the stat of the file written (taken from its open descriptor after it took the
    name, so it is the written file's even if another process replaces ``path`` at once).
    With ``exclusive`` the name must be new: :class:`FileExistsError` if ``path`` exists,
    and the complete file appears at once (linked into place, never half-written)."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode(encoding)
    with _signals_held():  # a Ctrl-C or SIGTERM lands after the write, never between its steps
        return _atomic_write(path, data, exclusive)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs (main thread, POSIX; a write
    takes milliseconds): no temp file is left behind and no file half-replaced."""
    held = {signal.SIGINT, signal.SIGTERM}
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _atomic_write(path: Path, data: bytes, exclusive: bool) -> os.stat_result:
    parent = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    linked = False
    try:
        with os.fdopen(fd, "wb") as f:
            try:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            except OSError as e:  # a full disk names no file by itself: name the one being written
                raise OSError(e.errno, f"{e.strerror or e}; {path} was left as it was", str(path)) from None
            try:
                mode = os.stat(path).st_mode & 0o7777
            except FileNotFoundError:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(tmp, mode)
            if exclusive:
                linked = _link_new(tmp, path)
            else:
                os.replace(tmp, path)
            _sync_folder(parent)
            return os.fstat(f.fileno())
    except BaseException:
        if not linked:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise


def append_line(path: StrPath, line: bytes) -> None:
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


def _link_new(tmp: str, path: Path) -> bool:
    """Give the written ``tmp`` the new name ``path`` (FileExistsError if taken)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError as e:
        if e.errno not in _NO_LINKS:
            raise
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # the name is ours
        os.replace(tmp, path)
        return True
    os.unlink(tmp)
    return True


def _sync_folder(folder: Path) -> None:
    """The rename itself survives a power cut (best effort: not every system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device or special file"


def _size(n: int) -> str:
    return f"{n / (1 << 20):,.1f} MB" if n >= 1 << 20 else f"{n:,} bytes"


def read_bounded(path: StrPath, limit: int, what: str) -> bytes | None:
    """The bytes of a file the tool opens on its own (nobody named it on the command line):
    None when it does not exist; :class:`~ragtriage.core.errors.InputError` (located, with
    what to do) when it is not a regular file, is larger than ``limit`` bytes, or cannot be
    read. Opened without blocking, so a FIFO is refused at once instead of hanging."""
    from .errors import InputError, Problem

    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            msg = f"this {what} is a symbolic link that loops; remove it"
        else:
            msg = f"cannot read this {what} ({e.strerror or e}); remove it or fix its permissions"
        raise InputError(Problem(name, None, msg)) from None
    except ValueError:
        raise InputError(Problem(repr(name), None, f"not a usable path for a {what} (a NUL byte)")) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = kind_of(st.st_mode)
            raise InputError(
                Problem(
                    name,
                    None,
                    f"this {what} is {kind}, not a regular file; remove it (nothing is read from it)",
                )
            )
        if st.st_size > limit:
            raise InputError(
                Problem(
                    name,
                    None,
                    f"this {what} is {_size(st.st_size)}, more than the {_size(limit)} one can be; "
                    "move it away (nothing is read from it)",
                )
            )
        chunks = []
        left = limit + 1
        while left > 0:
            try:
                b = os.read(fd, min(left, 1 << 20))
            except OSError as e:
                raise InputError(
                    Problem(name, None, f"cannot read this {what} ({e.strerror or e})")
                ) from None
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        data = b"".join(chunks)
        if len(data) > limit:  # it grew while being read
            raise InputError(Problem(name, None, f"this {what} is more than {_size(limit)}; move it away"))
        return data
    finally:
        os.close(fd)


def require_bounded(path: StrPath, limit: int, what: str) -> None:
    """:func:`read_bounded`'s refusals without reading: a file the tool would open on its
    own (a recovery file, a triage sidecar) checked before the app starts, so it says so
    on the command line (exit 2) instead of hanging or filling memory."""
    from .errors import InputError, Problem

    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise InputError(
                Problem(str(path), None, f"this {what} is a symbolic link that loops; remove it")
            ) from None
        raise InputError(Problem(str(path), None, f"cannot read this {what} ({e.strerror or e})")) from None
    if not stat.S_ISREG(st.st_mode):
        kind = kind_of(st.st_mode)
        raise InputError(
            Problem(
                str(path),
                None,
                f"this {what} is {kind}, not a regular file; remove it (nothing is read from it)",
            )
        )
    if st.st_size > limit:
        raise InputError(
            Problem(
                str(path),
                None,
                f"this {what} is {_size(st.st_size)}, more than the {_size(limit)} one can be; move it away",
            )
        )


def require_regular_file(path: StrPath, what: str = "file") -> None:
    """Refuse an input that is not a regular file (a FIFO blocks forever, /dev/zero never ends).

    Raises :class:`~ragtriage.core.errors.InputError` located at ``path``; a missing file is
    left to the caller's own message.
    """
    from .errors import InputError, Problem

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        raise InputError(Problem(str(path), None, f"cannot read this {what}: {e}")) from None
    if not stat.S_ISREG(mode):
        kind = kind_of(mode)
        raise InputError(Problem(str(path), None, f"this {what} is {kind}, not a regular file (give a file)"))
