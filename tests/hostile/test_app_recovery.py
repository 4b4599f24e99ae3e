"""Issue 19 items 3 and 4, the app: typed text reaches the recovery file on SIGTERM and
SIGHUP; no recovery file is left when the document is the saved file; the recovery
prompt says what it would restore. Driven through Pilot."""

from __future__ import annotations

import json
import signal

import pytest

from ragtriage.tui import make_app
from ragtriage.tui.dialogs.common import Choice
from ragtriage.tui.session import find_recovery, recovery_path, window_files
from tests.tui.conftest import settle

SIZE = (100, 30)


async def test_an_edit_and_its_undo_leave_no_recovery_file(testset):
    """``j u ctrl+z q``: the file is the saved one again; nothing is offered on the next open."""
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "u")
        await settle(app, pilot)
        assert app.session.recovery_file.exists()  # the edit is logged while it is unsaved
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert not window_files(testset)  # undone back to the saved file
        await pilot.press("q")
        await settle(app, pilot)
    assert app.return_code == 0
    assert find_recovery(testset) is None


async def test_a_clean_quit_removes_a_log_that_restores_nothing(testset):
    """A recovery file left by an older version (an edit, then its undo) is not offered."""
    ops = [{"op": "update_case", "args": ["precio-entrega"], "kwargs": {"topic": "x"}}, {"op": "undo"}]
    recovery_path(testset).write_text(json.dumps({"version": 1, "ops": ops}))
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not isinstance(app.screen, Choice)
        await pilot.press("q")
        await settle(app, pilot)
    assert not recovery_path(testset).exists()


async def test_the_recovery_prompt_lists_what_it_restores(testset):
    ops = [
        {"op": "update_case", "args": ["precio-entrega"], "kwargs": {"question": "¿y [b]esto[/b]?"}},
        {"op": "remove_case", "args": ["devolucion-plazo"], "kwargs": {}},
    ]
    recovery_path(testset).write_text(json.dumps({"version": 1, "ops": ops}))
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, Choice)
        shown = " ".join(str(app.screen.question).split())
        assert "case precio-entrega: question changed" in shown
        assert "case devolucion-plazo deleted" in shown
        await pilot.press("r")
        await settle(app, pilot)
        assert app.doc.case("precio-entrega").question == "¿y [b]esto[/b]?"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_typed_text_reaches_the_recovery_file_on_a_signal(testset, sig):
    """A field is applied on enter, tab or escape; a SIGTERM or a closed terminal before that
    would lose what was typed. The handler applies it (so it is logged) and exits."""
    app = make_app(testset)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")  # the editor on the first case, the question focused
        await settle(app, pilot)
        await pilot.press("end", *" tecleado")
        await pilot.pause()
        assert find_recovery(testset) is None  # typed, not yet applied
        app.on_terminal_signal(int(sig))
        await settle(app, pilot)
    assert app.return_code == 128 + int(sig)
    rec = find_recovery(testset)
    assert rec is not None
    assert any("tecleado" in json.dumps(op, ensure_ascii=False) for op in rec.ops)
    assert testset.read_text("utf-8").count("tecleado") == 0  # recovered, not saved
