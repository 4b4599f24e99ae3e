"""Recovery files: one per app window, owned and locked by the window that writes it.

A window's unsaved edits are logged beside the test set in
``.ragtriage-recovery-<name>.<pid>-<random>.json`` (written atomically: a temporary file
renamed over it), and the window holds an advisory lock (``flock``) on
``.ragtriage-recovery-<name>.<pid>-<random>.lock`` for as long as it lives; both files name
their owner (pid, host, start time). A crash, a kill or a closed terminal ends the process
and so releases the lock: the next window that opens the test set can take it, and only
then offers that file. A file whose lock is held belongs to a live window: it is never
offered, removed or written by another window (two windows on one test set each keep
their own edits). While a window offers an orphaned file it holds that file's lock, so a
third window does not offer it too.

The file an older version wrote (``.ragtriage-recovery-<name>.json``, no owner) is still
read and offered as before, locked while offered.

Where there are no advisory locks (not POSIX, or a file system without them), a file is
taken as a live window's when its owner record names this host and a running process.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..core.files import read_bounded

try:
    import fcntl
except ImportError:  # not POSIX: the owner record decides
    fcntl = None  # type: ignore[assignment]

RECOVERY_VERSION = 2
LOGGED = ("update_case", "add_case", "remove_case", "move_case", "set_label", "point_corpus", "batch")
RECOVERY_MAX = 64 << 20  # edits of a long session fit well within it
PREFIX = ".ragtriage-recovery-"
_ID = re.compile(r"\A(\d+)-([0-9a-f]{8})\Z")
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}


def recovery_path(testset: Path | str) -> Path:
    """The recovery file an older version wrote (one per test set, no owner): read, never written."""
    p = Path(testset)
    return p.with_name(f"{PREFIX}{p.name}.json")


def window_files(testset: Path | str, ext: str = ".json") -> list[Path]:
    """Every window's recovery file of ``testset`` (live or orphaned), and the old-style
    one; with ``ext=".lock"``, every window's lock file instead."""
    p = Path(testset)
    head = f"{PREFIX}{p.name}."
    try:
        names = os.listdir(p.parent)
    except OSError:
        return []
    found = [
        p.parent / n
        for n in names
        if n.startswith(head) and n.endswith(ext) and _ID.match(n[len(head) : -len(ext)])
    ]
    old = recovery_path(p)
    if ext == ".json" and os.path.lexists(old):
        found.append(old)
    return sorted(found)


def file_digest(path: Path) -> str | None:
    """A fingerprint of the bytes of ``path`` (None when it cannot be read)."""
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
    except OSError:
        return None


def _owner_record() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def _open_lock(path: Path, *, create: bool) -> int | None:
    flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(path, flags | (os.O_CREAT if create else 0), 0o600)
    except OSError:
        return None


class Lock:
    """An advisory lock held on an open file; :meth:`release` (or the process ending) lets go."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)  # closing the descriptor releases the lock

    def __del__(self) -> None:
        self.release()


def _try_lock(path: Path, owner: Callable[[], dict[str, Any] | None]) -> Lock | None:
    """The lock on ``path`` if no live window holds it (the file is created when missing),
    else None. ``owner``: the owner record, to judge by where there are no locks."""
    fd = _open_lock(path, create=True)
    if fd is None or fcntl is None:
        if fd is not None:
            os.close(fd)
        return _by_owner(owner())
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError as e:
        os.close(fd)
        return _by_owner(owner()) if e.errno in _NO_LOCKS else None
    return Lock(fd)


def _by_owner(owner: dict[str, Any] | None) -> Lock | None:
    return None if owner is not None and _alive(owner) else Lock(None)


def _alive(owner: dict[str, Any]) -> bool:
    """The owner record names a process running on this host (where no lock can tell)."""
    pid = owner.get("pid")
    if owner.get("host") != socket.gethostname() or type(pid) is not int or pid <= 0:
        return False  # a bool, a text or a forged number is no process
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or no pid at all (a forged record)
        return False
    except OSError:
        return True  # it exists, owned by someone else
    return True


def _lock_path(json_path: Path) -> Path:
    """A window file's lock file (``….json`` → ``….lock``)."""
    return json_path.with_name(json_path.name[: -len(".json")] + ".lock")


@dataclass
class Recovery:
    """The pending edits found beside a test set (entries as :meth:`Edit.record` writes them).

    One found by :func:`find_recoveries` holds its file's lock until :meth:`discard`
    (the file is removed) or :meth:`release` (left for next time)."""

    path: Path
    ops: list[dict[str, Any]]
    base_digest: str | None = None
    current_digest: str | None = None
    owner: dict[str, Any] = field(default_factory=dict)
    mtime: float = 0.0
    lock: Lock | None = field(default=None, repr=False)
    legacy: bool = False  # the one file of an older version (no owner, no lock file)

    @property
    def base_changed(self) -> bool:
        """The test set changed on disk after these edits were made."""
        return self.base_digest != self.current_digest

    def __len__(self) -> int:
        return sum(1 for op in self.ops if op["op"] not in ("undo", "redo"))

    def described(self, limit: int = 8) -> list[str]:
        """What a restore would re-apply, in words, one line an edit (undone ones left out):
        ``case precio-entrega: question, notes``."""
        kept: list[dict[str, Any]] = []
        undone: list[dict[str, Any]] = []
        for op in self.ops:
            if op["op"] == "undo":
                if kept:
                    undone.append(kept.pop())
            elif op["op"] == "redo":
                if undone:
                    kept.append(undone.pop())
            else:
                kept.append(op)
                undone.clear()
        lines = [_describe_op(op) for op in kept[:limit]]
        if len(kept) > limit:
            lines.append(f"… and {len(kept) - limit} more")
        return lines

    def source(self) -> str:
        """Which window left it, in words: ``a window started 2026-12-07 00:12 (pid 4242)``."""
        started, pid = self.owner.get("started"), self.owner.get("pid")
        if not isinstance(started, str) or not isinstance(pid, int):
            return "an earlier session"
        return f"a window started {started[:10]} {started[11:16]} (pid {pid})"

    def release(self) -> None:
        """Let go of the file's lock, leaving it for the next window."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def discard(self) -> None:
        """Remove the file (and its lock file), then let go of the lock."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        if not self.legacy:
            with contextlib.suppress(OSError):
                _lock_path(self.path).unlink()
        self.release()


_OP_WORDS = {
    "update_case": "changed",
    "add_case": "added",
    "remove_case": "deleted",
    "move_case": "moved",
    "set_label": "label of chunk",
    "point_corpus": "corpus pointed to",
    "batch": "several changes",
}


def _describe_op(op: dict[str, Any]) -> str:
    args = op.get("args") or []
    raw = op.get("kwargs")
    kwargs: dict[str, Any] = raw if isinstance(raw, dict) else {}
    name = op["op"]
    words = _OP_WORDS.get(name, name)
    typing = " (being typed)" if op.get("typing") else ""
    if name == "update_case":
        return f"case {args[0] if args else '?'}: {', '.join(kwargs) or 'no field'} {words}{typing}"
    if name == "add_case":
        return f"case {kwargs.get('id', '?')} {words}{typing}"
    if name in ("remove_case", "move_case"):
        return f"case {args[0] if args else '?'} {words}"
    return f"{words} {args[0] if args else ''}".rstrip()


def _read(path: Path) -> dict[str, Any] | None:
    try:
        raw = read_bounded(path, RECOVERY_MAX, "recovery file")  # never a FIFO, /dev/zero or huge
        data = json.loads(raw) if raw else None
    except (InputError, ValueError, RecursionError):  # RecursionError: nested past what json reads
        return None
    return data if isinstance(data, dict) else None


def _ops(data: dict[str, Any]) -> list[dict[str, Any]]:
    wanted = (*LOGGED, "undo", "redo")
    ops = data.get("ops")
    typing = data.get("typing")
    logged = (
        [op for op in ops if isinstance(op, dict) and op.get("op") in wanted] if isinstance(ops, list) else []
    )
    typed = [
        {**op, "typing": True}
        for op in (typing if isinstance(typing, list) else [])
        if isinstance(op, dict) and op.get("op") in ("update_case", "add_case")
    ]
    return logged + typed


def find_recoveries(testset: Path | str) -> list[Recovery]:
    """The recovery files of ``testset`` whose window is gone, newest first, each locked
    by the caller until it is discarded or released. A live window's file is left alone
    (not read, not touched); one whose lock file is left with no file beside it is tidied."""
    testset = Path(testset)
    legacy = recovery_path(testset)
    current = file_digest(testset)
    found: list[Recovery] = []
    for path in window_files(testset):
        old = path == legacy
        lock = _take_legacy(path) if old else _try_lock(_lock_path(path), partial(_owner_of, path))
        if lock is None:
            continue
        data = _read(path)
        ops = _ops(data) if data is not None else []
        if (data is None or old and not ops) and os.path.lexists(path):
            lock.release()  # unreadable (a FIFO, too big, not JSON) or not ours: left alone, not offered
            continue
        if not ops:
            Recovery(path, [], lock=lock, legacy=old).discard()  # nothing to restore: tidied away
            continue
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            mtime = 0.0
        assert data is not None
        owner = data.get("owner")
        owner = owner if isinstance(owner, dict) else {}
        found.append(Recovery(path, ops, data.get("base"), current, owner, mtime, lock, old))
    _tidy_locks(testset)
    found.sort(key=lambda r: r.mtime, reverse=True)
    return found


def _tidy_locks(testset: Path) -> None:
    """Remove the lock files a window left with no recovery file beside them (it ended
    between removing the one and the other), when no live window holds them."""
    for lock_path in window_files(testset, ".lock"):
        if os.path.lexists(lock_path.with_name(lock_path.name[: -len(".lock")] + ".json")):
            continue
        fd = _open_lock(lock_path, create=False)
        if fd is None or fcntl is None:
            if fd is not None:
                os.close(fd)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: a live window between its lock and its first write
            os.close(fd)
            continue
        with contextlib.suppress(OSError):
            lock_path.unlink()
        os.close(fd)


def _owner_of(path: Path) -> dict[str, Any] | None:
    data = _read(path)
    owner = data.get("owner") if data is not None else None
    return owner if isinstance(owner, dict) else None


def _take_legacy(path: Path) -> Lock | None:
    """The old-style file, locked itself while it is offered (never created); None while
    another window offers it."""
    if fcntl is None or not os.path.isfile(path):
        return Lock(None)
    fd = _open_lock(path, create=False)
    if fd is None:
        return Lock(None)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        pass
    return Lock(fd)


def find_recovery(testset: Path | str) -> Recovery | None:
    """The newest orphaned recovery file of ``testset`` (locked by the caller), or None;
    the others found are left for next time."""
    found = find_recoveries(testset)
    for other in found[1:]:
        other.release()
    return found[0] if found else None


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class RecoveryFile:
    """This window's own recovery file: created (with its lock) at the first write, kept
    locked while the window lives, removed when the document is the saved file again."""

    def __init__(self, testset: Path | str) -> None:
        self.testset = Path(testset)
        self.owner = _owner_record()
        self._id = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._lock: Lock | None = None
        # why the last write failed (disk full, a read-only folder), None after a good one;
        # ``warned``: the person was told of this failure already (told once, not every key)
        self.failure: str | None = None
        self.warned = False

    def take_warning(self) -> str | None:
        """What to tell the person once when edits stop reaching this file, else None."""
        if self.failure is None or self.warned:
            return None
        self.warned = True
        return self.failure

    @property
    def path(self) -> Path:
        return self.testset.with_name(f"{PREFIX}{self.testset.name}.{self._id}.json")

    @property
    def lock_path(self) -> Path:
        return self.testset.with_name(f"{PREFIX}{self.testset.name}.{self._id}.lock")

    def _own(self) -> bool:
        """Hold this window's lock, making the lock file (never an existing one) when needed."""
        if self._lock is not None:
            return True
        for _ in range(8):
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            try:
                fd = os.open(self.lock_path, flags, 0o600)
            except FileExistsError:  # someone's file by this name: another name, never theirs
                self._id = f"{os.getpid()}-{secrets.token_hex(4)}"
                continue
            except OSError:
                return False
            if fcntl is not None:
                with contextlib.suppress(OSError):  # no locks here: the owner record decides
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if not _same_file(fd, self.lock_path):  # tidied away by another window before we locked it
                os.close(fd)
                self._id = f"{os.getpid()}-{secrets.token_hex(4)}"
                continue
            with contextlib.suppress(OSError):
                os.write(fd, json.dumps(self.owner).encode())
            self._lock = Lock(fd)
            return True
        return False

    def write(self, data: dict[str, Any]) -> None:
        """Replace this window's file with ``data`` (atomically; errors are ignored: a
        read-only folder must not stop editing)."""
        if not self._own():
            self._failed(f"cannot create {self.lock_path.name} in {self.lock_path.parent}")
            return
        target = self.path
        try:
            fd, tmp = tempfile.mkstemp(prefix=".ragtriage-", dir=target.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({**data, "owner": self.owner}, f, ensure_ascii=False)
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as e:
            self._failed(f"cannot write {target.name} ({e.strerror or e})")
        else:
            self.failure, self.warned = None, False

    def _failed(self, why: str) -> None:
        if self.failure is None:
            self.failure = why

    def exists(self) -> bool:
        return self.path.exists()

    def discard(self) -> None:
        """Remove this window's file and its lock file (a later edit makes them again)."""
        if self._lock is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            self.lock_path.unlink()
        self._lock.release()
        self._lock = None

    def release(self) -> None:
        """Let go of the lock, keeping the file: what the window ending does (the next
        window then offers it)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None
