"""Pilot tests for what a new user ran into (QA pass): each one failed before its fix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input

from ragtriage.core.evaluate import evaluate
from ragtriage.tui import make_app
from ragtriage.tui.screens.cases import CasesScreen
from ragtriage.tui.screens.picker import PickerScreen

from .conftest import settle, until

ROOT = Path(__file__).resolve().parents[2]
SIZE = (120, 36)


async def test_picker_with_no_results_takes_typing_in_the_search_box(shop):
    """The question of an unanswerable case finds nothing: typing must search, not fire
    the list's keys (``a`` silently switched expect any/all while the user typed a word)."""
    app = make_app(shop, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.table.focus()
        await pilot.press("G", "p")  # domingo: "¿Abrís los domingos?" matches no chunk
        await settle(app, pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        await until(pilot, lambda: picker._searched == "¿Abrís los domingos?")
        assert picker.results == []
        # the focus moves to the search box once the empty result is shown (a message later)
        await until(pilot, lambda: isinstance(app.focused, Input) and app.focused.id == "query")
        await pilot.press("ctrl+u", *"garantía")
        await settle(app, pilot)
        await until(pilot, lambda: picker._searched == "garantía")
        assert picker.query_one("#query", Input).value == "garantía"
        assert app.session.doc.case("domingo").expect == "any"  # no stray `a` toggled it
        assert picker.results and picker.results[0][0].startswith("garantía")


async def test_picker_with_results_still_starts_on_the_list(shop):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.table.focus()
        await pilot.press("p")  # precio-entrega: its question finds entrega-1
        await settle(app, pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen) and picker.results
        assert app.focused is picker.query_one("#results")


async def test_cases_screen_shows_the_reason_recomputed_in_triage(shop_run):
    """A relabel in triage changes the case's reason; back on Cases the reason column
    must say the same as triage (it kept the run file's old reason)."""
    ts, run = shop_run
    app = make_app(ts, run, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        cases = app.screen
        assert isinstance(cases, CasesScreen)
        row = {r.id: r for r in cases.rows.rows}["plazo-entrega"]
        assert row.reason == "retrieval-miss"
        cases.table.focus()
        await pilot.press("t")
        await settle(app, pilot)
        triage = app.screen
        triage.table.action_first()
        await settle(app, pilot)
        assert triage.table.current_id == "plazo-entrega"
        await pilot.press("a", "2")  # accept devolver-3 (rank 2): found now, answer still wrong
        await settle(app, pilot)
        assert triage.state.record("plazo-entrega")["reason"] == "wrong-answer"
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is cases
        row = {r.id: r for r in cases.rows.rows}["plazo-entrega"]
        assert row.reason == "wrong-answer"


async def test_cases_screen_shows_the_reason_of_a_relabel_from_an_earlier_triage(shop_run):
    """Relabel in ``ragtriage triage``, quit; ``edit --run`` then ``t`` recomputes the case from
    the stored ranking: back on Cases, the reason column must show that, not the run file's."""
    ts, run = shop_run
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        triage = app.screen
        triage.table.action_first()
        await settle(app, pilot)
        assert triage.table.current_id == "plazo-entrega"
        await pilot.press("a", "2")
        await settle(app, pilot)
        assert triage.state.record("plazo-entrega")["reason"] == "wrong-answer"
        await pilot.press("q")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "Choice"  # unsaved: quit asks first
        await pilot.press("s")  # save and quit
        await settle(app, pilot)

    app = make_app(ts, run, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        cases = app.screen
        cases.table.focus()
        await pilot.press("t")
        await settle(app, pilot)
        assert app.screen.state.record("plazo-entrega")["reason"] == "wrong-answer"
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is cases
        row = {r.id: r for r in cases.rows.rows}["plazo-entrega"]
        assert row.reason == "wrong-answer"


@pytest.fixture
def shop_de(tmp_path):
    for name in ("shop-de.yaml", "shop-de.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    return tmp_path / "shop-de.yaml"


async def test_picker_with_no_hit_but_an_expected_chunk_listed_takes_typing_in_the_search_box(shop_de):
    """lieferzeit's question (reworded to share no word with the corpus: the picker stems
    "bestelle" to find "Bestellung") finds nothing; the list still shows its expected
    chunk (lieferung-2) below the empty results. Typing must still go to the search."""
    text = shop_de.read_text(encoding="utf-8")
    old = "question: Ich brauche es bis Freitag – schafft ihr das, wenn ich heute bestelle?"
    assert old in text
    shop_de.write_text(text.replace(old, "question: Schafft ihr das bis Freitag?"), encoding="utf-8")
    app = make_app(shop_de, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        cases = app.screen
        cases.table.focus()
        assert cases.table.move_to("lieferzeit")
        await pilot.press("p")
        await settle(app, pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert picker.results == []
        assert picker.shown == [("lieferung-2", True)]
        assert isinstance(app.focused, Input) and app.focused.id == "query"
        await pilot.press("ctrl+u", *"Lager am selben Tag")
        await settle(app, pilot)
        assert app.session.doc.case("lieferzeit").expect == "any"  # no stray `a`
        assert app.session.doc.case("lieferzeit").expected == ("lieferung-2",)  # no stray space
        assert picker.results and picker.results[0][0] == "lieferung-2"


async def test_undo_of_a_delete_puts_the_cursor_back_on_the_restored_case(shop):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        cases = app.screen
        cases.table.focus()
        assert cases.table.move_to("reembolso")
        await pilot.press("x", "y")
        await settle(app, pilot)
        assert "reembolso" not in [c.id for c in app.session.doc.cases]
        assert cases.table.current_id != "reembolso"
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert [c.id for c in app.session.doc.cases][3] == "reembolso"
        assert cases.table.current_id == "reembolso"
        await pilot.press("G", "ctrl+y")  # redo the delete: nothing to show, the cursor stays put
        await settle(app, pilot)
        assert "reembolso" not in [c.id for c in app.session.doc.cases]
        assert cases.table.current_id == "domingo"


async def test_undo_of_an_edit_elsewhere_shows_the_case_it_changed(shop):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        cases = app.screen
        cases.table.focus()
        await pilot.press("G", "u")  # domingo: unanswerable -> answerable again (a draft)
        await settle(app, pilot)
        assert not app.session.doc.case("domingo").unanswerable
        await pilot.press("home")
        assert cases.table.current_id == "precio-entrega"
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert app.session.doc.case("domingo").unanswerable
        assert cases.table.current_id == "domingo"


async def test_triage_dead_end_with_nothing_retrieved_says_where_to_pick_a_chunk(shop_de):
    """A case that retrieves nothing: `a` and `r` have nothing to offer and said only that;
    a new user did not know the picker is one key away (p, as on Cases)."""
    from ragtriage.core.document import TestSetDocument

    doc = TestSetDocument.load(shop_de)
    doc.update_case("lieferzeit", question="Qué? xyzzy")  # no word of the corpus at all
    doc.save()
    run = shop_de.parent / "run.jsonl"
    evaluate(shop_de, "builtin", out=run)
    app = make_app(shop_de, run, mode="triage", recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        triage = app.screen
        triage.table.action_first()
        await settle(app, pilot)
        assert triage.table.current_id == "lieferzeit"
        assert not triage.state.record("lieferzeit").get("ranking")
        await pilot.press("a", "r")
        await settle(app, pilot)
        messages = [n.message for n in app._notifications]
        assert any(m.startswith("nothing was retrieved") and "p searches" in m for m in messages)
        assert any(m.startswith("no other retrieved chunk") and "p searches" in m for m in messages)
        assert type(app.screen).__name__ == "TriageScreen"
        await pilot.press("p")  # the hint holds: the picker on this case
        await settle(app, pilot)
        assert isinstance(app.screen, PickerScreen) and app.screen.case_id == "lieferzeit"


async def test_editor_warns_at_the_field_about_an_expected_chunk_not_in_the_corpus(shop):
    """A typo in `expected` was taken silently; the case only showed ⚠ stale afterwards.
    `validate` warns about it, so the field does too (a warning: the value is still applied)."""
    from ragtriage.tui.screens.editor import EditorScreen

    from .conftest import text_of

    app = make_app(shop, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.table.focus()
        await pilot.press("enter")  # precio-entrega
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        editor.query_one("#f-expected", Input).focus()
        await pilot.press("end", *", entrega-9")
        await pilot.pause()
        box = editor.query_one("#e-expected")
        assert box.display and "entrega-9" in text_of(box) and "corpus" in text_of(box)
        assert box.has_class("-warning")  # not the red of an error that blocks saving
        assert "entrega-1" not in text_of(box)
        await pilot.press("tab")
        await settle(app, pilot)
        assert app.session.doc.case("precio-entrega").expected == ("entrega-1", "entrega-9")
        editor.query_one("#f-expected", Input).focus()
        await pilot.press(*["backspace"] * len(", entrega-9"))
        await pilot.pause()
        assert not editor.query_one("#e-expected").display


async def test_a_run_that_fails_before_any_case_keeps_the_earlier_run_on_screen(shop_run):
    """ctrl+r with a system that cannot start (a typo in the spec) emptied the triage view —
    the run the user was working on vanished — and left a run file with no case behind."""
    ts, run = shop_run
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        triage = app.screen
        assert len(triage.state) == 8
        await pilot.press("ctrl+r")
        dialog = app.screen
        assert type(dialog).__name__ == "RunDialog"
        dialog.query_one("#run-system").value = "python:no_such_module_qa:answer"
        out = Path(dialog.query_one("#run-out").value)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert app.screen is triage and not app.run_session.running
        assert len(triage.state) == 8  # the earlier run, still there
        assert app.run_session.path == run and app.run_path == run
        assert triage.state.record("plazo-entrega")["reason"] == "retrieval-miss"
        assert not out.exists()
        messages = [n.message for n in app._notifications]
        assert any("no_such_module_qa" in m and "run.jsonl" in m for m in messages)


async def test_edit_with_the_run_of_another_test_set_says_so(shop_run, shop_de):
    """`edit shop-de.yaml --run <a run of shop-es>` showed an empty reason column silently."""
    _ts, run = shop_run
    app = make_app(shop_de, run, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        messages = [n.message for n in app._notifications]
        assert any("has no case of shop-de.yaml" in m for m in messages)


async def test_edit_with_its_own_run_does_not_warn(shop_run):
    ts, run = shop_run
    app = make_app(ts, run, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not any("has no case" in n.message for n in app._notifications)
