"""Pilot tests of a domain expert's day without a shell (issue 13): one save and undo
model, no lost keys, no dead ends, a run from the Cases screen. Real app, real keys,
at 80×24 and 120×36."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from ragtriage.tui import make_app
from ragtriage.tui.dialogs.common import Choice
from ragtriage.tui.screens.cases import CasesScreen
from ragtriage.tui.screens.editor import EditorScreen

from .conftest import goto, settle

SIZES = [(80, 24), (120, 36)]


def type_at_once(app, keys: list[str]) -> None:
    """Keys arriving together, as from a fast typist or a paste: no pause between them
    (``pilot.press`` waits for each key to be handled, which hides lost keys)."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


@pytest.mark.parametrize("size", SIZES)
async def test_one_ctrl_z_undoes_a_triage_relabel_even_after_a_save(shop_run, size):
    ts, run = shop_run
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "garantía")
        before = app.doc.case("garantía")
        reason = screen.state.record("garantía")["reason"]
        await pilot.press("u")
        await settle(app, pilot)
        assert app.doc.case("garantía").unanswerable
        assert app.session.dirty  # one save policy: nothing is written until ctrl+s
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert not app.session.dirty
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert app.doc.case("garantía") == before
        assert screen.state.record("garantía")["reason"] == reason
        toasts = [n.message for n in app._notifications]
        assert "undone: garantía: expected, unanswerable" in toasts  # says what it undid


@pytest.mark.parametrize("size", SIZES)
async def test_leave_and_drop_puts_the_case_back_as_it_was(shop, size):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        cid = app.screen.table.current_id
        before = app.doc.case(cid)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, EditorScreen)
        await pilot.press("shift+tab", "end", *" nuevo", "tab")  # topic: valid, applied on leaving
        await settle(app, pilot)
        assert app.doc.case(cid).topic != before.topic
        await pilot.press("ctrl+u")  # question emptied: an error
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, Choice)
        await pilot.press("y")  # leave, drop them
        await settle(app, pilot)
        assert isinstance(app.screen, CasesScreen)
        assert app.doc.case(cid) == before


async def test_the_palettes_quit_asks_about_unsaved_changes(shop):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("u")  # a change
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        await pilot.press(*"quit")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, Choice)
        assert app.return_code is None
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, CasesScreen)


@pytest.mark.parametrize("size", SIZES)
async def test_keys_typed_as_the_editor_opens_reach_its_field(shop, size):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        cid = app.screen.table.current_id
        question = app.doc.case(cid).question
        type_at_once(app, ["enter", *" yes"])  # typed while the editor mounts
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        assert editor.form_fields()["question"] == question + " yes"
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, CasesScreen)
        assert app.doc.case(cid).question == question + " yes"
        assert len(app.doc) == 8  # no key went to the Cases screen (x deletes, a adds there)
        type_at_once(app, ["n", *"nuevo-1"])  # a new case, its id typed at once
        await settle(app, pilot)
        assert app.screen.form_fields()["id"] == "nuevo-1"


@pytest.mark.parametrize("size", SIZES)
async def test_enter_typed_after_moves_opens_the_case_the_moves_reached(shop, size):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        ids = [c.id for c in app.doc.cases]
        type_at_once(app, ["j", "j", "enter"])  # a burst, as a fast typist or tmux send-keys gives it
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        assert editor.form_fields()["id"] == ids[2]


@pytest.mark.parametrize("size", SIZES)
async def test_renaming_an_id_then_escape_lands_on_the_renamed_case(shop, size):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        cid = app.screen.table.current_id
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("shift+tab", "shift+tab", "end", *"-bis", "escape")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, CasesScreen)
        assert screen.table.current_id == f"{cid}-bis"
        assert f"{cid}-bis" in app.doc and cid not in app.doc


@pytest.mark.parametrize("size", SIZES)
async def test_standalone_triage_reaches_cases_with_escape_and_comes_back(shop_run, size):
    ts, run = shop_run
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        triage = app.screen
        assert type(triage).__name__ == "TriageScreen"
        failures = triage.state.failures()
        await pilot.press("escape")
        await settle(app, pilot)
        cases = app.screen
        assert isinstance(cases, CasesScreen)
        assert len(cases.rows) == len(app.doc)
        assert cases.table.show_reason and app.run_session.has_reasons()  # the run's reasons in the table
        await pilot.press("t")
        await settle(app, pilot)
        assert app.screen is triage  # kept: the run is not read again
        assert triage.state.failures() == failures
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is cases


@pytest.mark.parametrize("size", SIZES)
async def test_run_from_the_cases_screen_without_a_run(shop_run, size):
    ts, _run = shop_run
    app = make_app(ts, None, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("t")
        await settle(app, pilot)
        assert isinstance(app.screen, CasesScreen)  # no run yet: nothing to triage
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "RunDialog"
        await pilot.press("ctrl+s")  # builtin, the test set's k, a new run file under runs/
        await settle(app, pilot)
        triage = app.screen
        assert type(triage).__name__ == "TriageScreen"
        assert len(triage.state) == len(app.doc) and not app.run_session.running
        # as `ragtriage run` without --out: runs/ of the current folder, never beside the test set
        assert app.run_path is not None and app.run_path.parent == Path("runs") and app.run_path.exists()
        assert app.run_path.with_name(app.run_path.stem + ".triage.json").exists()
        assert not list(ts.parent.glob("shop-es-*.jsonl"))
        await pilot.press("escape")
        await settle(app, pilot)
        cases = app.screen
        assert isinstance(cases, CasesScreen)
        assert {c.id for c in app.doc.cases if app.run_session.reason(c.id)} == {c.id for c in app.doc.cases}
        assert cases.table.show_reason
        await pilot.press("t")
        await settle(app, pilot)
        assert app.screen is triage


async def test_cases_shows_reasons_rescored_against_the_current_test_set(shop_run):
    """`edit --run` on a test set changed since the run, then an edit on Cases: the reason
    column says what Triage would say, not what the run file stored."""
    from ragtriage.core.document import TestSetDocument

    ts, run = shop_run
    doc = TestSetDocument.load(ts, use_cache=False)
    doc.update_case("garantía", unanswerable=True, expected=None)  # changed since the run
    doc.save()
    app = make_app(ts, run, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert (
            app.run_session.reason("garantía") == "appropriate-abstention"
        )  # the run stored unnecessary-abstention
        cases = app.screen
        await goto(pilot, cases, "garantía")
        await pilot.press("u")  # answerable again: no expected chunk yet
        await settle(app, pilot)
        assert app.run_session.reason("garantía") != "appropriate-abstention"
        await pilot.press("t")
        await settle(app, pilot)
        triage = app.screen
        assert triage.state.record("garantía")["reason"] == app.run_session.reason("garantía")


async def test_at_80_by_24_J_and_K_scroll_the_detail_panes_from_the_list(shop_run):
    ts, run = shop_run
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        triage = app.screen
        await goto(pilot, triage, "tarjeta-rechazada")
        pane = triage.query_one("#triage-case")
        assert pane.max_scroll_y > 0  # the answer and must-contain lines are below the fold
        await pilot.press("J", "J", "J")
        assert pane.scroll_y > 0
        assert triage.table.current_id == "tarjeta-rechazada"  # the list keeps its cursor
        await pilot.press("K", "K", "K", "K")
        assert pane.scroll_y == 0
        await pilot.press("escape")
        await settle(app, pilot)
        cases = app.screen
        await goto(pilot, cases, "garantía")
        cases.flush_detail()
        await pilot.pause()
        detail = cases.query_one("#detail")
        assert detail.max_scroll_y > 0  # two expected chunks: more than the pane shows
        await pilot.press("J")
        assert detail.scroll_y > 0


@pytest.mark.parametrize("size", SIZES)
async def test_standalone_triage_edits_on_cases_refresh_the_reason_column(shop_run, size):
    """`ragtriage triage RUN`, escape to Cases, relabel there: the reason column follows
    (it kept the reason the run had, while Triage said another), and so does Triage."""
    ts, run = shop_run
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        triage = app.screen
        before = triage.state.record("garantía")["reason"]
        await pilot.press("escape")
        await settle(app, pilot)
        cases = app.screen
        assert isinstance(cases, CasesScreen)
        await goto(pilot, cases, "garantía")
        assert app.run_session.reason("garantía") == before
        await pilot.press("u")  # unanswerable: the stored answer is now judged against that
        await settle(app, pilot)
        now = app.run_session.reason("garantía")
        assert now != before
        row = next(r for r in cases.rows.rows if r.id == "garantía")
        assert row.reason == now  # what the table shows
        await pilot.press("ctrl+z")  # an undo recomputes the column too
        await settle(app, pilot)
        assert app.run_session.reason("garantía") == before
        await pilot.press("u")
        await settle(app, pilot)
        await pilot.press("t")
        await settle(app, pilot)
        assert app.screen is triage
        assert triage.state.record("garantía")["reason"] == app.run_session.reason("garantía") == now
