"""Issue 19 item 4 where there are no advisory locks (not POSIX, or a file system without
``flock``: some network mounts answer ENOLCK or EOPNOTSUPP).

There the owner record in the recovery file decides: a file whose owner is a running
process on this host belongs to a live window and is never offered, removed or written
by another; a file whose owner has ended (or that names another host) is offered. Both
ways of having no locks are driven: ``fcntl`` missing, and ``flock`` refusing."""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys

import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.tui import recovery as rec
from ragtriage.tui.edits import UpdateCase
from ragtriage.tui.session import Session, find_recoveries


class _NoFlock:
    """An ``fcntl`` whose ``flock`` fails the way a file system without locks fails."""

    LOCK_EX = 2
    LOCK_NB = 4

    def __init__(self, code: int) -> None:
        self.code = code
        self.calls = 0

    def flock(self, fd: int, op: int) -> None:
        self.calls += 1
        raise OSError(self.code, os.strerror(self.code))


@pytest.fixture(params=["no fcntl", "ENOLCK", "EOPNOTSUPP"])
def no_locks(request, monkeypatch):
    if request.param == "no fcntl":
        monkeypatch.setattr(rec, "fcntl", None)
        return None
    fake = _NoFlock(errno.ENOLCK if request.param == "ENOLCK" else errno.EOPNOTSUPP)
    monkeypatch.setattr(rec, "fcntl", fake)
    return fake


def _window(testset, notes: str) -> Session:
    s = Session(TestSetDocument.load(testset, use_cache=False))
    s.apply(UpdateCase("devolucion", {"notes": notes}))
    assert s.recovery_file.exists()
    return s


def _owned_by(path, **owner) -> bytes:
    """Rewrite the owner record of a recovery file (what another process would have written)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data["owner"] = {**data["owner"], **owner}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path.read_bytes()


def _ended_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_live_window_of_this_process_is_not_offered(testset, no_locks):
    s = _window(testset, "vivo")
    before = s.recovery_file.read_bytes()
    assert find_recoveries(testset) == []
    assert s.recovery_file.read_bytes() == before
    if no_locks is not None:
        assert no_locks.calls > 0  # the lock was tried and refused: the owner record decided


def test_a_live_window_of_another_process_is_not_offered_nor_touched(testset, no_locks):
    s = _window(testset, "de otro proceso")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        before = _owned_by(s.recovery_file, pid=other.pid)
        lock_before = s.recovery.lock_path.read_bytes()
        assert find_recoveries(testset) == []
        assert s.recovery_file.read_bytes() == before
        assert s.recovery.lock_path.read_bytes() == lock_before
    finally:
        other.kill()
        other.wait()


def test_an_ended_window_is_offered_with_its_edits(testset, no_locks):
    s = _window(testset, "de una ventana que ya no está")
    _owned_by(s.recovery_file, pid=_ended_pid())
    s.release_recovery()
    found = find_recoveries(testset)
    assert [r.path for r in found] == [s.recovery_file]
    assert found[0].described() == ["case devolucion: notes changed"]
    found[0].discard()
    assert not s.recovery_file.exists()
    assert find_recoveries(testset) == []


def test_a_window_on_another_host_is_offered(testset, no_locks):
    """No process check can reach another host: its file counts as left behind (the
    person is asked; restoring copies the edits, nothing is removed without an answer)."""
    s = _window(testset, "otra máquina")
    before = _owned_by(s.recovery_file, host=socket.gethostname() + "-otra")
    found = find_recoveries(testset)
    assert [r.path for r in found] == [s.recovery_file]
    found[0].release()  # escape: left for next time, unchanged
    assert s.recovery_file.read_bytes() == before


@pytest.mark.parametrize(
    "owner",
    [{}, {"pid": "1"}, {"pid": -5}, {"pid": 0}, {"pid": True}, {"pid": 2**70}, {"pid": 1.5}],
    ids=["empty", "pid-text", "pid-negative", "pid-zero", "pid-bool", "pid-huge", "pid-float"],
)
def test_a_forged_owner_record_is_not_a_live_window(testset, no_locks, owner):
    """A committed recovery file with nonsense in its owner record is offered like any
    orphan (never a crash, never a signal sent to process 0 or -5)."""
    s = _window(testset, "forjado")
    data = json.loads(s.recovery_file.read_text(encoding="utf-8"))
    data["owner"] = {"host": socket.gethostname(), **owner}
    s.recovery_file.write_text(json.dumps(data), encoding="utf-8")
    s.release_recovery()
    found = find_recoveries(testset)
    assert [r.path for r in found] == [s.recovery_file]
    assert found[0].source() == "an earlier session" or "pid" in found[0].source()
    found[0].release()


def test_the_window_keeps_writing_its_own_file_without_locks(testset, no_locks):
    s = _window(testset, "uno")
    s.apply(UpdateCase("devolucion", {"notes": "dos"}))
    data = json.loads(s.recovery_file.read_text(encoding="utf-8"))
    assert [op["op"] for op in data["ops"]] == ["update_case", "update_case"]
    assert data["owner"]["pid"] == os.getpid()
    s.save()
    assert not s.recovery_file.exists()
    assert not s.recovery.lock_path.exists()
