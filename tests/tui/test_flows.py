"""Pilot tests: each flow of the authoring app, pressing real keys on a real test set."""

from __future__ import annotations

from ragtriage.core.document import TestSetDocument
from ragtriage.tui import make_app
from ragtriage.tui.dialogs.common import Choice, HelpScreen
from ragtriage.tui.screens.cases import CasesScreen
from ragtriage.tui.screens.editor import EditorScreen
from ragtriage.tui.screens.picker import PickerScreen
from ragtriage.tui.screens.stale import StaleScreen
from ragtriage.tui.session import window_files

from .conftest import GOLDEN, settle, text_of

SIZE = (120, 36)


async def test_loads_every_case_and_shows_the_first(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, CasesScreen)
        assert [r.id for r in screen.rows.rows][:3] == ["precio-entrega", "plazo-entrega", "devolucion"]
        assert len(screen.rows) == 8
        assert screen.table.current_id == "precio-entrega"
        detail = text_of(screen.query_one("#detail-text"))
        assert "Enviamos a toda la península" in detail  # the expected chunk's text
        assert app.corpus is not None and app.index is not None


async def test_filter_as_you_type_and_open_a_case(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"garant")
        await pilot.pause()
        screen = app.screen
        assert [screen.rows.visible(i).id for i in range(len(screen.rows))] == ["garantía"]
        await pilot.press("enter")  # leave the filter box, keep the filter
        await pilot.press("enter")  # open the case
        await settle(app, pilot)
        assert isinstance(app.screen, EditorScreen)
        assert app.screen.case_id == "garantía"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, CasesScreen)
        await pilot.press("escape")  # clears the filter
        await pilot.pause()
        assert len(app.screen.rows) == 8


async def test_j_k_g_G_move_and_sort(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.screen.table
        await pilot.press("j", "j")
        assert table.current_id == "devolucion"
        await pilot.press("k")
        assert table.current_id == "plazo-entrega"
        await pilot.press("G")
        assert table.current_id == "domingo"
        await pilot.press("home")
        assert table.current_id == "precio-entrega"
        await pilot.press("s")  # sort by id, cursor stays on its case
        await pilot.pause()
        assert app.screen.rows.sort_column == "id"
        assert app.screen.rows.visible(0).id == "contra-reembolso"
        assert table.current_id == "precio-entrega"


async def test_edit_a_question_and_save_matches_golden_file(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        assert editor.focused.id == "f-question"
        await pilot.press("home", "ctrl+k", *"Cuánto cuesta enviarlo a una oficina?")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert not app.session.dirty
    assert shop.read_bytes() == (GOLDEN / "shop-question-edited.yaml").read_bytes()
    assert not window_files(shop)


async def test_field_errors_show_as_you_type_and_bad_values_are_never_written(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        editor = app.screen
        editor.query_one("#f-id").focus()
        await pilot.press("end", *" x")  # an id with a space
        await pilot.pause()
        assert "whitespace" in text_of(editor.query_one("#e-id"))
        await pilot.press("tab")
        await pilot.pause()
        assert app.session.doc.case("precio-entrega")  # not renamed
        editor.query_one("#f-id").focus()
        await pilot.press("end", "backspace", "backspace")
        await pilot.pause()
        assert text_of(editor.query_one("#e-id")) == ""
        await pilot.press("home", "ctrl+k", *"devolucion")  # the id of another case
        await pilot.pause()
        assert "already" in text_of(editor.query_one("#e-id"))


async def test_add_a_case_through_the_picker(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen) and editor.case_id is None
        await pilot.press(*"seguimiento", "tab", *"envíos", "tab", *"Cómo sé dónde está mi paquete?")
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert picker.query_one("#query").value == "Cómo sé dónde está mi paquete?"
        assert picker.results and picker.results[0][0] == "entrega-3"
        await pilot.press("space")  # the first result
        await settle(app, pilot)
        assert app.session.doc.case("seguimiento").expected == ("entrega-3",)
        assert picker.shown[0] == ("entrega-3", True)  # marked ● expected
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, EditorScreen)
        assert app.screen.query_one("#f-expected").value == "entrega-3"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    doc = TestSetDocument.load(shop, use_cache=False)
    case = doc.case("seguimiento")
    assert (case.topic, case.question, case.expected) == (
        "envíos",
        "Cómo sé dónde está mi paquete?",
        ("entrega-3",),
    )
    assert doc.index_of("seguimiento") == 1  # right after the case the cursor was on
    assert doc.labels["entrega-3"].text.startswith("Cuando el paquete sale")  # label recorded on save


async def test_toggle_a_chunk_out_and_expect_all(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("G", "k", "p")  # garantía
        await settle(app, pilot)
        assert app.screen.case_id == "garantía"
        await pilot.press("A")  # expect all -> any
        await settle(app, pilot)
        assert app.session.doc.case("garantía").expect == "any"
        results = [cid for cid, _ in app.screen.results]
        target = results.index("garantía-2")
        await pilot.press(*["down"] * target, "space")
        await settle(app, pilot)
        assert app.session.doc.case("garantía").expected == ("garantía-1",)


async def test_delete_with_confirmation_and_undo(shop):
    original = shop.read_bytes()
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "x")
        await pilot.pause()
        assert isinstance(app.screen, Choice)
        await pilot.press("n")  # changed my mind
        await pilot.pause()
        assert "plazo-entrega" in app.session.doc
        await pilot.press("x", "y")
        await settle(app, pilot)
        assert "plazo-entrega" not in app.session.doc
        assert [r.id for r in app.screen.rows.rows][1] == "devolucion"
        assert app.session.dirty
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert "plazo-entrega" in app.session.doc
        assert app.session.doc.text.encode() == original
        await pilot.press("ctrl+y")
        await settle(app, pilot)
        assert "plazo-entrega" not in app.session.doc
        await pilot.press("ctrl+z", "ctrl+s")
        await settle(app, pilot)
    assert shop.read_bytes() == original


async def test_toggle_unanswerable(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("G", "u")  # domingo: unanswerable -> answerable draft
        await settle(app, pilot)
        assert not app.session.doc.case("domingo").unanswerable
        assert app.screen.rows.rows[-1].flags == ("draft",)
        await pilot.press("home", "u")  # precio-entrega: becomes unanswerable, its chunk dropped
        await settle(app, pilot)
        case = app.session.doc.case("precio-entrega")
        assert case.unanswerable and case.expected == ()
        assert "∅ unanswerable" in app.screen.rows.rows[0].flags_text
        await pilot.press("f")  # next flagged: the draft
        assert app.screen.table.current_id == "domingo"


async def test_resolve_a_stale_label_after_rechunking(shop):
    app = make_app(shop, corpus_path=shop.parent / "rechunked.chunks.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.stale.ids == {"precio-entrega"}
        assert "⚠ stale" in app.screen.rows.rows[0].flags_text
        await pilot.press("l")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, StaleScreen)
        shown = text_of(screen.query_one("#stale-text"))
        assert "Enviamos a toda la península" in shown and "envios-oficina-1" in shown
        await pilot.press("enter")  # accept the first candidate
        await settle(app, pilot)
        assert app.session.doc.case("precio-entrega").expected == ("envios-oficina-1",)
        assert not app.stale.report
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    doc = TestSetDocument.load(shop, use_cache=False)
    assert doc.case("precio-entrega").expected == ("envios-oficina-1",)
    assert "envios-oficina-1" in doc.labels and "entrega-1" not in doc.labels


async def test_mark_unanswerable_from_stale_review(shop):
    app = make_app(shop, corpus_path=shop.parent / "rechunked.chunks.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("l")
        await settle(app, pilot)
        await pilot.press("u")
        await settle(app, pilot)
        assert app.session.doc.case("precio-entrega").unanswerable
        assert not app.stale.report


async def test_quit_with_unsaved_changes_asks(shop):
    original = shop.read_bytes()
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("u", "q")
        await pilot.pause()
        assert isinstance(app.screen, Choice)
        await pilot.press("escape")  # cancel: keep editing
        await pilot.pause()
        assert isinstance(app.screen, CasesScreen) and app.is_running
        assert app.session.recovery_file.exists()
        await pilot.press("q", "d")  # discard
        await pilot.pause()
    assert app.return_code == 0
    assert shop.read_bytes() == original
    assert not window_files(shop)


async def test_quit_and_save(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("G", "u", "q", "s")
        await pilot.pause()
    assert not TestSetDocument.load(shop, use_cache=False).case("domingo").unanswerable


async def test_quit_without_changes_does_not_ask(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_unsaved_edits_survive_a_crash(shop):
    original = shop.read_bytes()
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("x", "y", "G", "u")  # delete precio-entrega, domingo answerable
        await settle(app, pilot)
        # the terminal is killed here: no save, no quit dialog
    assert shop.read_bytes() == original
    assert window_files(shop)

    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, Choice)
        await pilot.press("r")  # restore
        await settle(app, pilot)
        doc = app.session.doc
        assert "precio-entrega" not in doc and not doc.case("domingo").unanswerable
        assert app.session.dirty
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    assert not window_files(shop)
    assert "precio-entrega" not in TestSetDocument.load(shop, use_cache=False)


async def test_save_refuses_a_file_changed_on_disk_and_offers_reload(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("G", "u")
        await settle(app, pilot)
        changed = shop.read_text("utf-8").replace("# Tienda online", "# Tienda online (edited elsewhere)")
        shop.write_text(changed, "utf-8")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, Choice)
        assert shop.read_text("utf-8") == changed  # not overwritten
        await pilot.press("r")  # reload from disk and re-apply my edit
        await settle(app, pilot)
        assert not app.session.doc.case("domingo").unanswerable
        assert "(edited elsewhere)" in app.session.doc.text
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    text = shop.read_text("utf-8")
    assert "(edited elsewhere)" in text
    assert not TestSetDocument.load(shop, use_cache=False).case("domingo").unanswerable


async def test_help_is_built_from_the_bindings_and_never_opens_while_typing(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", "question_mark")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        assert app.screen.query_one("#filter").value == "?"
        await pilot.press("escape", "question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        help_text = text_of(app.screen.query_one("#help-text"))
        for words in ("Filter", "Unanswerable", "Stale", "Save", "Undo", "Quit"):
            assert words in help_text
        await pilot.press("escape", "f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_command_palette_lists_every_screen_action(shop):
    app = make_app(shop)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        names = [c.title for c in app.get_system_commands(app.screen)]
        for words in (
            "Filter",
            "Pick",
            "New",
            "Duplicate",
            "Delete",
            "Unanswerable",
            "Flagged",
            "Stale",
            "Sort",
            "Save",
            "Undo",
            "Redo",
            "Quit",
            "Help",
        ):
            assert words in names


async def test_reasons_from_a_run_file(shop, tmp_path):
    from ragtriage.core.evaluate import evaluate

    run = evaluate(shop, "builtin", out=tmp_path / "run.jsonl")
    reasons = {r["id"]: r["reason"] for r in run.cases}
    app = make_app(shop, run_path=tmp_path / "run.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        rows = app.screen.rows.rows
        assert {r.id: r.reason for r in rows} == reasons
        first_fail = next(
            r.id for r in rows if r.reason not in ("supported-correct", "appropriate-abstention") or r.flags
        )
        app.screen.table.action_first()
        await pilot.press("f")  # next flagged includes failures
        assert app.screen.table.current_id == first_fail or rows[0].id == first_fail


async def test_a_file_that_is_not_a_run_is_said_and_the_cases_stay(shop, tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_text('{"type": "meta"}\n{"type": "case", "id": "precio-entrega"}\n', encoding="utf-8")
    app = make_app(shop, run_path=run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert len(app.screen.rows.rows) == len(app.doc) and not app.screen.table.show_reason
        assert any(n.message.startswith("run not loaded: ") and "k:" in n.message for n in app._notifications)


async def test_works_at_80_by_24(shop):
    app = make_app(shop)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        table = app.screen.table
        assert table.size.width >= 70 and table.size.height >= 8
        await pilot.press("G")
        assert table.current_id == "domingo"
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, EditorScreen)


async def test_a_bad_test_set_stops_the_app_with_its_problems(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ncases:\n  - id: a\n    question: x\n    expeced: [c]\n", encoding="utf-8")
    app = make_app(bad)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
    assert app.return_code == 2
    assert any("did you mean 'expected'" in p.message for p in app.load_error.problems)
