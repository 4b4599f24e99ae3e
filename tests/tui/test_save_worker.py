"""Pilot tests: ctrl+s works on a copy in a worker, so the interface answers while it saves.

A gate holds the worker at one step (working out the labels, or writing the file) while keys
are pressed; then it lets go and the test looks at the file, the document, the status line
and the recovery file."""

from __future__ import annotations

import json
import threading

import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.tui import make_app
from ragtriage.tui.dialogs.common import Choice
from ragtriage.tui.session import window_files

from .conftest import settle, text_of

SIZE = (120, 36)


class Gate:
    """Holds the first call of ``TestSetDocument.<step>`` made off the interface thread."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, step: str) -> None:
        self.reached, self.go, self.used = threading.Event(), threading.Event(), False
        real = getattr(TestSetDocument, step)

        def gated(doc, *args, **kwargs):
            if not self.used and threading.current_thread() is not threading.main_thread():
                self.used = True
                self.reached.set()
                self.go.wait(20)
            return real(doc, *args, **kwargs)

        monkeypatch.setattr(TestSetDocument, step, gated)

    async def held(self, pilot) -> None:
        for _ in range(2000):
            if self.reached.is_set():
                return
            await pilot.pause(0.005)
        raise AssertionError("the save's worker never reached the gate")


def status(app) -> str:
    return text_of(app.screen.query_one("#status"))


@pytest.mark.parametrize("step", ["label_plan", "save"])
async def test_keys_are_answered_while_the_save_runs(shop, monkeypatch, step):
    gate = Gate(monkeypatch, step)
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.screen.table
        await pilot.press("u", "ctrl+s")
        await gate.held(pilot)
        assert "saving…" in status(app)
        at = table.cursor
        await pilot.press("j")  # the worker is stuck: the key is handled all the same
        await pilot.pause()
        assert table.cursor == at + 1
        gate.go.set()
        await settle(app, pilot)
        assert "● unsaved" not in status(app) and "saving…" not in status(app)
    assert TestSetDocument.load(shop, use_cache=False).case("precio-entrega").unanswerable
    assert not window_files(shop)


async def test_an_edit_while_the_file_is_written_stays_unsaved_and_recoverable(shop, monkeypatch):
    gate = Gate(monkeypatch, "save")
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("u", "ctrl+s")  # precio-entrega unanswerable: its label is dropped too
        await gate.held(pilot)
        await pilot.press("G", "u")  # domingo answerable again, while the file is written
        await pilot.pause()
        gate.go.set()
        await settle(app, pilot)
        on_disk = TestSetDocument.load(shop, use_cache=False)
        assert on_disk.case("precio-entrega").unanswerable  # what was there at ctrl+s is saved
        assert on_disk.case("domingo").unanswerable  # the later edit is not
        assert not app.doc.case("domingo").unanswerable
        assert app.session.dirty and "● unsaved" in status(app)
        logged = json.loads(app.session.recovery_file.read_text("utf-8"))["ops"]
        assert len(logged) == 1  # only the unsaved edit is left to recover
        toasts = [n.message for n in app._notifications]
        assert any("edits made while saving are not saved yet" in t for t in toasts)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert not app.session.dirty and "● unsaved" not in status(app)
    assert not TestSetDocument.load(shop, use_cache=False).case("domingo").unanswerable
    assert not window_files(shop)


async def test_an_edit_while_the_labels_are_worked_out_is_saved_with_them(shop, monkeypatch):
    gate = Gate(monkeypatch, "label_plan")
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        expected = app.doc.case("precio-entrega").expected
        await pilot.press("u", "ctrl+s")
        await gate.held(pilot)
        await pilot.press("G", "u")  # before the labels are recorded: the save starts again
        await pilot.pause()
        gate.go.set()
        await settle(app, pilot)
        assert not app.session.dirty and "● unsaved" not in status(app)
        on_disk = TestSetDocument.load(shop, use_cache=False)
        assert on_disk.case("precio-entrega").unanswerable and not on_disk.case("domingo").unanswerable
        assert on_disk.labels.keys() == app.doc.labels.keys()  # recorded after the edit, saved
        # every chunk still expected is labelled, and none that no case expects any more
        assert on_disk.labels.keys() == {c for case in on_disk.cases for c in case.expected}
        assert expected and not set(expected) <= on_disk.labels.keys()  # precio-entrega's went
        await pilot.press("ctrl+z")  # one step: domingo's edit (the labels go with it)
        await settle(app, pilot)
        assert app.doc.case("domingo").unanswerable


async def test_quit_while_saving_waits_for_the_save(shop, monkeypatch):
    gate = Gate(monkeypatch, "save")
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("u", "ctrl+s")
        await gate.held(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, Choice)  # not saved yet: asked, as for any unsaved edit
        await pilot.press("s")
        await pilot.pause(0.05)
        assert app.is_running  # still waiting on the file
        gate.go.set()
        for _ in range(400):
            if not app.is_running:
                break
            await pilot.pause(0.01)
    assert app.return_code == 0
    assert TestSetDocument.load(shop, use_cache=False).case("precio-entrega").unanswerable
    assert not window_files(shop)


async def test_a_conflict_found_by_the_worker_is_offered(shop, monkeypatch):
    gate = Gate(monkeypatch, "save")
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("u", "ctrl+s")
        await gate.held(pilot)
        changed = shop.read_text("utf-8").replace("# Tienda online", "# Tienda online (edited elsewhere)")
        shop.write_text(changed, "utf-8")
        gate.go.set()
        await settle(app, pilot)
        assert isinstance(app.screen, Choice)
        assert shop.read_text("utf-8") == changed  # not overwritten
        assert app.session.dirty and app.session.saving is None
