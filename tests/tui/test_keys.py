"""One key, one meaning: the key table (help, docs/spec/tui.md) and the screens agree, and
the keys that used to change meaning between screens do what the table says."""

from __future__ import annotations

import re

import pytest

from ragtriage.tui import make_app
from ragtriage.tui.app import RagtriageApp
from ragtriage.tui.dialogs.common import HelpScreen
from ragtriage.tui.keys import KEY_TABLE, intro_keys, key_table_markdown
from ragtriage.tui.screens.cases import CasesScreen
from ragtriage.tui.screens.editor import EditorScreen
from ragtriage.tui.screens.grading import GradingScreen
from ragtriage.tui.screens.picker import ChunkList, PickerScreen, QueryInput
from ragtriage.tui.screens.stale import StaleScreen
from ragtriage.tui.screens.triage import TriageScreen
from ragtriage.tui.widgets.case_table import CaseTable
from ragtriage.tui.widgets.triage_table import TriageTable

from .conftest import ROOT, settle, text_of

SIZES = [(80, 24), (120, 36)]

LISTS = (CasesScreen, CaseTable, TriageScreen, TriageTable, StaleScreen, PickerScreen, ChunkList)

# the same meaning under two action names (a screen's own spelling of it)
SAME = {
    "toggle_unanswerable": "unanswerable",
    "cursor_down": "down",
    "cursor_up": "up",
    "move(1)": "down",
    "move(-1)": "up",
    "select": "edit",
    "app.help": "help",
    "app.request_quit": "request_quit",
    "focus_query": "filter",
    "scroll_detail(3)": "scroll_detail_down",
    "scroll_detail(-3)": "scroll_detail_up",
    "accept_all": "accept",  # Stale review: accept the proposal shown, as a accepts on Triage
    "page_detail(1)": "page_down",  # Stale review pages the candidates it is about
    "page_detail(-1)": "page_up",
}
# escape is "back" everywhere; on Cases it first clears the filter (the table says so)
ESCAPE = {"back", "clear_filter", "cancel"}
# enter is the list's main action (the table says so): the editor on a case, the proposed
# candidate on a stale label
ENTER = {"edit", "accept_proposed"}


def _bindings(cls) -> list:
    return [b for b in cls.BINDINGS if hasattr(b, "key")]


def test_every_key_of_the_lists_means_one_thing_on_every_screen():
    meanings: dict[str, set[str]] = {}
    for cls in LISTS:
        for b in _bindings(cls):
            for key in b.key.split(","):
                if key == "escape":
                    assert b.action in ESCAPE, (cls.__name__, b.action)
                    continue
                if key == "enter":
                    assert SAME.get(b.action, b.action) in ENTER, (cls.__name__, b.action)
                    continue
                meanings.setdefault(key, set()).add(SAME.get(b.action, b.action))
    clashes = {k: v for k, v in meanings.items() if len(v) > 1 and not k.isdigit()}
    assert not clashes
    # the old clashes, each resolved one way
    assert meanings["x"] == {"delete"} and meanings["r"] == {"replace"} and meanings["a"] == {"accept"}
    assert meanings["p"] == {"pick"} and meanings["n"] == {"add"} and meanings["g"] == {"grade"}


def test_every_bound_key_is_in_the_table_and_has_an_id():
    table_keys = {k for keys, _what, _where in KEY_TABLE for k in keys.replace("/", " ").split()}
    # the editor's forms are named in the text: "(ctrl+o in the editor)"
    table_keys |= {m for _k, what, _w in KEY_TABLE for m in re.findall(r"(?:ctrl\+\w+|f\d+)", what)}
    table_keys |= {"question_mark", "slash", "pagedown", "pageup", "down", "up", "tab", "shift+tab"}
    table_keys |= {str(n) for n in range(1, 10)}
    for cls in (*LISTS, EditorScreen):
        for b in _bindings(cls):
            assert b.id, (cls.__name__, b.key)  # users can rebind it
            for key in b.key.split(","):
                assert key in table_keys, (cls.__name__, key)


SCREENS = (CasesScreen, EditorScreen, PickerScreen, StaleScreen, TriageScreen, GradingScreen)
# the widgets each screen's keys also come from (their bindings are active on the screen)
WIDGETS = {CasesScreen: (CaseTable,), TriageScreen: (TriageTable,), PickerScreen: (ChunkList, QueryInput)}


def _keys_of(cls) -> set[str]:
    keys: set[str] = set()
    owners = {k for c in (RagtriageApp, cls, *WIDGETS.get(cls, ())) for k in c.__mro__}  # Textual's too
    for owner in owners:
        for b in _bindings(owner) if "BINDINGS" in vars(owner) else ():
            keys |= set(b.key.split(","))
            if b.key_display:
                keys |= set(b.key_display.split(","))
    names = {"question_mark": "?", "slash": "/", "pagedown": "pgdn", "pageup": "pgup"}
    return keys | {names[k] for k in keys if k in names}


@pytest.mark.parametrize("cls", SCREENS, ids=lambda c: c.__name__)
def test_every_key_a_screens_help_names_is_bound_there(cls):
    """The help text of every screen names its keys in braces ({l} checks again); each one
    is a key of that screen (its own bindings, its list's, or the app's): help and keys agree."""
    named = intro_keys(cls.HELP_INTRO)
    assert named, f"{cls.__name__}: its help names no key"
    unbound = [k for k in named if k not in _keys_of(cls)]
    assert not unbound, f"{cls.__name__}: help names {unbound}, which the screen does not bind"


def test_the_help_check_catches_a_key_the_screen_does_not_bind():
    class Wrong(StaleScreen):
        HELP_INTRO = "{r} checks again"  # the old help: l does

    assert "r" not in _keys_of(Wrong) and "l" in _keys_of(Wrong)


def test_the_spec_prints_the_same_table():
    spec = (ROOT / "docs" / "spec" / "tui.md").read_text("utf-8")
    assert key_table_markdown() in spec


@pytest.mark.parametrize("size", SIZES)
async def test_help_shows_the_key_table(shop, size):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        shown = text_of(app.screen.query_one("#help-text"))
        assert "One key, one meaning" in shown
        for keys, what, _where in KEY_TABLE:
            assert keys in shown and what in shown
        await pilot.press("escape")
        assert isinstance(app.screen, CasesScreen)


@pytest.mark.parametrize("size", SIZES)
async def test_editor_uses_ctrl_and_the_cases_letter(shop, size):
    """d duplicates on Cases, ctrl+d in the editor; n / ctrl+n a new case; f8 deletes in both."""
    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        app.screen.table.focus()
        first = app.screen.table.current_id
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, EditorScreen)
        await pilot.press("ctrl+d")
        await settle(app, pilot)
        copy = app.screen.case_id
        assert copy != first and copy in app.doc
        assert app.doc.case(copy).question == app.doc.case(first).question
        await pilot.press("f8", "y")
        await settle(app, pilot)
        assert copy not in app.doc
        assert isinstance(app.screen, CasesScreen)
        before = len(app.doc)
        await pilot.press("n")
        await settle(app, pilot)
        assert isinstance(app.screen, EditorScreen) and app.screen.case_id is None
        await pilot.press("escape")
        await settle(app, pilot)
        assert len(app.doc) == before


@pytest.mark.parametrize("size", SIZES)
async def test_triage_keys_note_pick_summary(shop_run, size):
    ts, run = shop_run
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        triage = app.screen
        assert isinstance(triage, TriageScreen)
        cid = triage.table.current_id
        await pilot.press("o", *"revisar", "ctrl+s")  # ctrl+s applies the note dialog
        await settle(app, pilot)
        note = app.run_session.note(cid)
        assert note is not None and note.note == "revisar" and note.by == "tester"
        assert not app.session.dirty
        summary = triage.query_one("#triage-summary-pane")
        shown = summary.display
        await pilot.press("i")
        assert summary.display is not shown
        await pilot.press("p")
        await settle(app, pilot)
        assert isinstance(app.screen, PickerScreen) and app.screen.case_id == cid
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is triage
