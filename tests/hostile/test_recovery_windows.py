"""Issue 19 items 3 and 4: one recovery file per window, and text logged as it is typed.

Two windows on one test set each own their recovery file (a lock held for the window's
life): the second neither offers, removes nor writes the first one's file while the first
lives, and offers it once the first is gone. Text typed into a field and not applied yet
reaches the recovery file a moment after the last key, and on SIGTERM; the next open
offers it back as an edit of that field. Driven through Pilot, and through a real
terminal (a pty) for the process that is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.tui import make_app
from ragtriage.tui.dialogs.common import Choice
from ragtriage.tui.edits import UpdateCase
from ragtriage.tui.screens.editor import EditorScreen
from ragtriage.tui.session import Session, find_recoveries, find_recovery, recovery_path, window_files
from tests.tui.conftest import settle, until

SIZE = (100, 30)
ROOT = Path(__file__).resolve().parents[2]


def _window(testset: Path, notes: str) -> Session:
    """Another window on the test set, with one unsaved edit (its recovery file written)."""
    s = Session(TestSetDocument.load(testset, use_cache=False))
    s.apply(UpdateCase("devolucion", {"notes": notes}))
    assert s.recovery_file.exists()
    return s


def _question(app) -> str:
    return " ".join(str(app.screen.question).split())


# -- two windows, one test set -----------------------------------------------------------------
def test_a_live_window_file_is_never_offered_and_a_dead_one_is(testset):
    first = _window(testset, "de la primera ventana")
    second = _window(testset, "de la segunda")
    assert first.recovery_file != second.recovery_file
    assert find_recoveries(testset) == []  # both live: neither is anyone's to offer
    before = first.recovery_file.read_bytes()
    first.release_recovery()  # the first window is gone (a crash releases its lock)
    found = find_recoveries(testset)
    assert [r.path for r in found] == [first.recovery_file]
    assert found[0].described() == ["case devolucion: notes changed"]
    assert first.recovery_file.read_bytes() == before
    # while one window offers it, a third does not offer it too
    assert find_recoveries(testset) == []
    found[0].release()
    assert [r.path for r in find_recoveries(testset)] == [first.recovery_file]


def test_several_orphaned_files_are_offered_newest_first(testset):
    older = _window(testset, "antes")
    newer = _window(testset, "después")
    os.utime(older.recovery_file, (1_000_000, 1_000_000))
    older.release_recovery()
    newer.release_recovery()
    found = find_recoveries(testset)
    assert [r.path for r in found] == [newer.recovery_file, older.recovery_file]
    assert all("pid" in r.source() for r in found)


def test_an_orphaned_lock_file_without_edits_is_tidied_and_a_person_file_is_never_taken(testset):
    s = _window(testset, "x")
    name = s.recovery_file.name
    s.release_recovery()
    s.recovery_file.unlink()  # crashed between removing its file and its lock file
    assert find_recoveries(testset) == []
    assert not window_files(testset) and not (testset.parent / name.replace(".json", ".lock")).exists()
    # a file already at the name a window would take is someone's: a new name, never theirs
    mine = Session(TestSetDocument.load(testset, use_cache=False))
    theirs = mine.recovery.lock_path
    theirs.write_text("someone's\n")
    mine.apply(UpdateCase("devolucion", {"notes": "mía"}))
    assert theirs.read_text() == "someone's\n" and mine.recovery.lock_path != theirs


async def test_a_second_app_window_leaves_the_first_ones_edits_alone(testset):
    """The first window (a Session holding its lock) has an unsaved edit; a second app on
    the same file offers nothing, writes its own file, and a discarding quit does not touch
    the first one's. Once the first is gone, the next window offers its edits."""
    first = _window(testset, "de la primera ventana")
    before = first.recovery_file.read_bytes()
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not isinstance(app.screen, Choice)  # nothing to offer: its owner lives
        await pilot.press("u")  # an edit of its own
        await settle(app, pilot)
        assert app.session.recovery_file.exists() and app.session.recovery_file != first.recovery_file
        await pilot.press("q")
        await settle(app, pilot)
        assert isinstance(app.screen, Choice)
        await pilot.press("d")  # quit, discarding this window's edits
        await settle(app, pilot)
    assert app.return_code == 0
    assert first.recovery_file.read_bytes() == before
    assert window_files(testset) == [first.recovery_file]

    first.release_recovery()
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, Choice)
        assert "case devolucion: notes changed" in _question(app)
        assert f"pid {os.getpid()}" in _question(app)
        await pilot.press("r")
        await settle(app, pilot)
        assert app.doc.case("devolucion").notes == "de la primera ventana"
        # restored into this window's own file; the orphan is gone
        assert window_files(testset) == [app.session.recovery_file]


async def test_two_orphans_are_asked_about_one_after_the_other(testset):
    older = _window(testset, "antes")
    os.utime(older.recovery_file, (1_000_000, 1_000_000))
    newer = Session(TestSetDocument.load(testset, use_cache=False))
    newer.apply(UpdateCase("plazo-entrega", {"notes": "después"}))
    older.release_recovery()
    newer.release_recovery()
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, Choice) and "(1 of 2)" in app.screen.title_text
        assert "case plazo-entrega" in _question(app)  # the newest first
        await pilot.press("r")
        await settle(app, pilot)
        assert isinstance(app.screen, Choice) and "(2 of 2)" in app.screen.title_text
        assert "case devolucion" in _question(app)
        await pilot.press("escape")  # not now: left for next time
        await settle(app, pilot)
        assert app.doc.case("plazo-entrega").notes == "después"
        assert app.doc.case("devolucion").notes != "antes"
    assert older.recovery_file.exists() and not newer.recovery_file.exists()
    left = [r.path for r in find_recoveries(testset)]  # this window's own, and the one left
    assert older.recovery_file in left and newer.recovery_file not in left


# -- text as it is typed -----------------------------------------------------------------------
async def test_typed_text_reaches_the_recovery_file_without_enter(testset):
    """Typed and never applied (no enter, tab or escape): a moment after the last key it is
    in the recovery file; the window then dies, and the next open offers it back."""
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, EditorScreen)
        await pilot.press("end", *" tecleado")
        assert app.doc.case("precio-entrega").question.count("tecleado") == 0  # not applied

        def logged() -> bool:
            f = app.session.recovery_file
            return f.exists() and "tecleado" in f.read_text("utf-8")

        await until(pilot, logged)
        data = json.loads(app.session.recovery_file.read_text("utf-8"))
        assert data["ops"] == [] and data["typing"][0]["args"] == ["precio-entrega"]
    # the run_test block ended the window without a commit: the text is only in "typing"
    rec = find_recovery(testset)
    assert rec is not None and rec.described() == ["case precio-entrega: question changed (being typed)"]
    rec.release()
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, Choice)
        assert "question changed (being typed)" in _question(app)
        await pilot.press("r")
        await settle(app, pilot)
        assert app.doc.case("precio-entrega").question.endswith(" tecleado")


async def test_text_with_an_error_is_logged_on_sigterm_and_its_valid_fields_restored(testset):
    """A field with an error is not applied, not even by the signal handler: what the form
    holds is logged as typed instead; a restore keeps the fields that are valid."""
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("end", *" a medias", "shift+tab", "shift+tab")  # question applied; to the id
        await pilot.press("end", *" con espacio")  # an id with spaces: not valid
        await pilot.pause()
        app.on_terminal_signal(int(signal.SIGTERM))  # what the loop's handler calls
        await settle(app, pilot)
    assert app.return_code == 128 + signal.SIGTERM
    data = json.loads(next(p for p in window_files(testset)).read_text("utf-8"))
    typed = json.dumps(data["typing"], ensure_ascii=False)
    assert "con espacio" in typed
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, Choice)
        await pilot.press("r")
        await settle(app, pilot)
        assert app.doc.case("precio-entrega").question.endswith(" a medias")  # applied on tab
        assert "precio-entrega con espacio" not in app.doc


async def test_an_applied_field_leaves_nothing_typed_behind(testset):
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("end", *"!")
        app.screen.log_typing()  # what the pause after the last key does
        assert json.loads(app.session.recovery_file.read_text("utf-8"))["typing"]
        await pilot.press("enter")  # applied: an edit now, no longer "being typed"
        await settle(app, pilot)
        data = json.loads(app.session.recovery_file.read_text("utf-8"))
        assert data["typing"] == [] and data["ops"][-1]["op"] == "update_case"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert not window_files(testset)


# -- a real terminal, a real process -----------------------------------------------------------
class _Terminal:
    """``ragtriage edit`` in a pseudo-terminal of 80×24, its output drained by a thread."""

    def __init__(self, testset: Path) -> None:
        import fcntl
        import pty
        import struct
        import termios

        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ragtriage", "edit", str(testset)],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=testset.parent,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.fd = master
        self.out = bytearray()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.out += chunk

    def wait_for(self, cond, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if cond():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{what} not reached; output: {bytes(self.out[-2000:])!r}")

    def shows(self, text: str) -> bool:
        return text.encode() in self.out

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        self._reader.join(5)
        os.close(self.fd)


@pytest.fixture
def terminal(testset):
    t = _Terminal(testset)
    yield t
    t.close()


def _typed_into_file(testset: Path, text: str) -> bool:
    return any(text in p.read_text("utf-8") for p in window_files(testset) if p.exists())


def _open_editor(t: _Terminal, testset: Path) -> None:
    t.wait_for(lambda: t.shows("precio-entrega"), "the cases on screen")
    t.type("\r")
    t.wait_for(lambda: t.shows("unique, no spaces"), "the editor")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_killed_terminal_keeps_what_was_typed(testset, terminal, sig):
    """Type, no enter, then SIGTERM (or SIGHUP) to the real process: the recovery file
    holds the text, the process leaves with 128 + the signal, the next open offers it."""
    t = terminal
    _open_editor(t, testset)
    t.type("\x05 sin enter")  # ctrl+e: to the end of the question, then the text
    t.wait_for(lambda: t.shows("sin enter"), "the text echoed")
    t.proc.send_signal(sig)
    assert t.proc.wait(30) == 128 + sig
    assert _typed_into_file(testset, "sin enter")
    assert "sin enter" not in testset.read_text("utf-8")  # kept, not saved
    rec = find_recovery(testset)
    assert rec is not None and any("question" in line for line in rec.described())
    probe = Session(TestSetDocument.load(testset, use_cache=False), recovery=False)
    probe.replay(rec)
    assert probe.doc.case("precio-entrega").question.endswith(" sin enter")


def test_a_window_killed_outright_leaves_what_was_typed_for_the_next(testset, terminal):
    """SIGKILL: no handler runs. Whatever was typed a moment before is in the recovery file
    (logged as typed); while the process lives no other window offers or touches it, and
    once it is dead the next window does."""
    t = terminal
    _open_editor(t, testset)
    t.type("\x05 a medio escribir")
    t.wait_for(lambda: _typed_into_file(testset, "a medio escribir"), "the text in the recovery file")
    live = window_files(testset)
    before = [p.read_bytes() for p in live]
    assert find_recoveries(testset) == []  # its owner lives
    assert [p.read_bytes() for p in live] == before
    t.proc.kill()
    t.proc.wait(30)
    rec = find_recovery(testset)
    assert rec is not None and rec.path == live[0]
    assert rec.described() == ["case precio-entrega: question changed (being typed)"]


def test_the_old_single_recovery_file_is_still_offered(testset):
    """A file an older version left (one per test set, no owner) is read as before."""
    ops = [{"op": "update_case", "args": ["devolucion"], "kwargs": {"notes": "vieja"}}]
    recovery_path(testset).write_text(json.dumps({"version": 1, "ops": ops}))
    rec = find_recovery(testset)
    assert rec is not None and rec.legacy and rec.source() == "an earlier session"
    assert find_recoveries(testset) == []  # offered by one window at a time
    rec.discard()
    assert not recovery_path(testset).exists() and not window_files(testset)


def test_a_file_at_the_old_name_that_holds_no_edits_is_left_alone(testset):
    """Nothing to offer, and not this version's to remove: it stays as it is."""
    recovery_path(testset).write_text('{"notes": "no es un registro de cambios"}\n')
    assert find_recoveries(testset) == []
    assert recovery_path(testset).read_text() == '{"notes": "no es un registro de cambios"}\n'
