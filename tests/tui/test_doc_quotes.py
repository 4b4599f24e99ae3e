"""Pilot tests for documents and quotes in the app (issue 24, item 3), on the demo set
testsets/folien-de/: D picks a whole document, Q a sentence as a quote, the Cases detail
and Triage show document ranks and where quotes resolve, Stale review the quotes that do
not resolve, with candidates, applied only when a person picks one."""

from __future__ import annotations

import json
import shutil

import pytest
from textual.widgets import Input

from ragtriage.core.gold_view import sentences
from ragtriage.core.quotes import resolve_cases
from ragtriage.core.testset import TestSetDocument
from ragtriage.tui import make_app
from ragtriage.tui.screens.picker import PickerScreen

from .conftest import ROOT, settle, text_of, until

FOLIEN = ROOT / "testsets" / "folien-de"


@pytest.fixture
def folien(tmp_path):
    for name in ("folien-de.yaml", "folien-de-zitate.yaml", "folien-de.chunks.jsonl"):
        shutil.copy(FOLIEN / name, tmp_path / name)
    return tmp_path


async def open_picker(app, pilot, case_id: str, query: str | None = None) -> PickerScreen:
    await settle(app, pilot)
    cases = app.screen
    cases.table.focus()
    assert cases.table.move_to(case_id)
    await pilot.press("p")
    await settle(app, pilot)
    picker = app.screen
    assert isinstance(picker, PickerScreen) and picker.case_id == case_id
    if query is not None:
        await pilot.press("slash", "ctrl+u", *query, "enter")
        await settle(app, pilot)
    return picker


async def highlight(pilot, picker: PickerScreen, chunk_id: str) -> None:
    """Move the results' highlight to ``chunk_id`` with real keys (j)."""
    lst = picker.query_one("#results")
    lst.focus()
    await pilot.press("home")
    for _ in range(lst.option_count):
        if lst.get_option_at_index(lst.highlighted).id == chunk_id:
            return
        await pilot.press("j")
    raise AssertionError(f"{chunk_id} not listed")


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_D_toggles_the_results_document_as_an_undoable_edit_saved_in_place(folien, size):
    ts = folien / "folien-de.yaml"
    before = ts.read_text("utf-8")
    app = make_app(ts)  # with its recovery file, as a person runs it
    async with app.run_test(size=size) as pilot:
        picker = await open_picker(app, pilot, "erster-tag", "Hotel Übernachtung")
        hotel = next(cid for cid, _ in picker.results if app.corpus.get(cid).doc == "reisekosten.md")
        await highlight(pilot, picker, hotel)
        await pilot.press("D")
        await settle(app, pilot)
        case = lambda: app.session.doc.case("erster-tag")  # noqa: E731
        assert case().expected_docs == ("einarbeitung.md", "reisekosten.md")
        assert "reisekosten.md" in text_of(picker.query_one("#picker-case"))
        ops = json.loads(app.session.recovery_file.read_text("utf-8"))["ops"]
        assert ops[-1]["op"] == "update_case" and ops[-1]["args"] == ["erster-tag"]
        assert ops[-1]["kwargs"]["expected_docs"] == ["einarbeitung.md", "reisekosten.md"]
        await pilot.press("D")  # again: out
        await settle(app, pilot)
        assert case().expected_docs == ("einarbeitung.md",)
        await pilot.press("ctrl+z")  # undo the removal: in again
        await settle(app, pilot)
        assert case().expected_docs == ("einarbeitung.md", "reisekosten.md")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    after = ts.read_text("utf-8")
    assert TestSetDocument.load(ts, use_cache=False).case("erster-tag").expected_docs == (
        "einarbeitung.md",
        "reisekosten.md",
    )
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert len(before.splitlines()) == len(after.splitlines()) and len(changed) == 1  # one line
    assert "reisekosten.md" in changed[0][1] and changed[0][0].strip().startswith("expected_docs")
    assert after.startswith("# Nordlicht Software GmbH")  # the comments stay


async def test_D_on_a_chunk_without_a_document_says_so_and_changes_nothing(folien):
    chunks = folien / "folien-de.chunks.jsonl"
    with chunks.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "lose-1", "text": "Ein loser Zettel ohne Foliensatz."}) + "\n")
    app = make_app(folien / "folien-de.yaml", recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(app, pilot, "erster-tag", "loser Zettel")
        await highlight(pilot, picker, "lose-1")
        await pilot.press("D")
        await settle(app, pilot)
        assert app.session.doc.case("erster-tag").expected_docs == ("einarbeitung.md",)
        assert not app.session.unsaved


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_Q_takes_the_sentence_in_the_preview_as_a_quote_that_resolves_to_the_chunk(folien, size):
    app = make_app(folien / "folien-de.yaml", recovery=False)
    async with app.run_test(size=size) as pilot:
        picker = await open_picker(app, pilot, "erster-tag")
        chunk_id = picker.results[0][0]
        await highlight(pilot, picker, chunk_id)
        parts = [s for _a, _b, s in sentences(app.corpus.get(chunk_id).text)]
        assert len(parts) >= 2
        assert picker.current_sentence() == parts[0]
        await pilot.press("right")
        assert picker.current_sentence() == parts[1]
        preview = text_of(picker.query_one("#picker-preview"))
        assert parts[1][:30] in preview and f"sentence 2/{len(parts)}" in preview
        await pilot.press("Q")
        await settle(app, pilot)
        case = app.session.doc.case("erster-tag")
        assert case.evidence == (parts[1],)
        gold = resolve_cases([case], app.corpus)["erster-tag"]  # the core resolver finds it again
        assert gold.complete and chunk_id in gold.ids
        assert "❝" in text_of(picker.query_one("#picker-preview"))  # shown as quoted
        await pilot.press("left", "Q")  # a second quote: the first sentence
        await settle(app, pilot)
        assert app.session.doc.case("erster-tag").evidence == (parts[1], parts[0])
        await pilot.press("Q")  # the same sentence again: removed
        await settle(app, pilot)
        assert app.session.doc.case("erster-tag").evidence == (parts[1],)
        await pilot.press("ctrl+z", "ctrl+z", "ctrl+z")
        await settle(app, pilot)
        assert app.session.doc.case("erster-tag").evidence == ()


async def test_Q_in_the_search_box_types_a_letter(folien):
    app = make_app(folien / "folien-de.yaml", recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(app, pilot, "erster-tag")
        await pilot.press("slash", "ctrl+u", "Q", "D")
        await settle(app, pilot)
        assert picker.query_one("#query", Input).value == "QD"
        case = app.session.doc.case("erster-tag")
        assert case.evidence == () and case.expected_docs == ("einarbeitung.md",)


def _gold_of(path, case_id: str):
    from ragtriage.core.corpus import load_corpus

    doc = TestSetDocument.load(path, use_cache=False)
    corpus = load_corpus(path.parent / "folien-de.chunks.jsonl")
    return resolve_cases([doc.case(case_id)], corpus)[case_id], corpus


async def cases_detail(app, pilot, case_id: str) -> str:
    cases = app.screen
    cases.table.focus()
    assert cases.table.move_to(case_id)
    await settle(app, pilot)
    cases.flush_detail()
    await pilot.pause()
    return text_of(cases.query_one("#detail-text"))


async def test_the_cases_detail_shows_where_each_quote_resolves_now(folien):
    ts = folien / "folien-de-zitate.yaml"
    edited = "Ein neues Passwort braucht mindestens zehn Zeichen."  # the slide says zwölf
    ts.write_text(
        ts.read_text("utf-8").replace("Ein neues Passwort braucht mindestens zwölf Zeichen.", edited),
        "utf-8",
    )
    gold, corpus = _gold_of(ts, "erster-tag")
    (chunk,) = gold.ids
    app = make_app(ts, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: app.stale.quotes is not None)
        detail = await cases_detail(app, pilot, "erster-tag")
        assert "evidence" in detail and "“Dein erster Arbeitstag beginnt um 9:30 Uhr" in detail
        assert f"→ {chunk} ({corpus.get(chunk).doc})" in detail
        detail = await cases_detail(app, pilot, "passwort")
        assert f"“{edited}”" in detail and "✗ found nowhere in the corpus" in detail
        assert "candidates" in detail  # the slide it came from is proposed, not chosen


async def test_document_ranks_from_the_run_in_the_cases_detail_and_triage(folien):
    from ragtriage.core.evaluate import evaluate

    ts = folien / "folien-de.yaml"
    run = folien / "run.jsonl"
    evaluate(ts, "builtin", out=run)
    records = {r["id"]: r for r in map(json.loads, run.read_text("utf-8").splitlines()) if "id" in r}
    hit = next(r for r in records.values() if r.get("doc_hit"))
    app = make_app(ts, run, recovery=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        detail = await cases_detail(app, pilot, hit["id"])
        (want,) = hit["expected_docs"]
        rank = hit["doc_ranking"].index(want) + 1
        assert "expected documents" in detail
        assert f"{want}  at document rank {rank}" in detail
        assert f"✓ doc_hit@3: an expected document at document rank {hit['doc_rank']}" in detail
        assert "draft" not in detail  # documents are gold: not a case waiting for its chunks
        await pilot.press("t")
        await settle(app, pilot)
        triage = app.screen
        assert triage.table.move_to(hit["id"])
        await settle(app, pilot)
        shown = text_of(triage.query_one("#triage-detail"))
        assert f"{want}  at document rank {rank}" in shown and "doc_hit@3" in shown
        assert "no expected chunk yet" not in shown


@pytest.fixture
def zitate(folien):
    """folien-de-zitate.yaml with one quote edited (found nowhere now) and one sentence
    copied into a second deck (the quote holding it is ambiguous)."""
    ts = folien / "folien-de-zitate.yaml"
    ts.write_text(
        ts.read_text("utf-8").replace(
            "Ein neues Passwort braucht mindestens zwölf Zeichen.",
            "Ein neues Passwort braucht mindestens zehn Zeichen.",
        ),
        "utf-8",
    )
    with (folien / "folien-de.chunks.jsonl").open("a", encoding="utf-8") as f:
        f.write(
            json.dumps({"id": "faq-1", "doc": "faq.md", "text": "Du hast 30 Urlaubstage im Jahr."}) + "\n"
        )
    return ts


async def open_stale_review(app, pilot):
    from ragtriage.tui.screens.stale import StaleScreen

    await settle(app, pilot)
    await until(pilot, lambda: app.stale.quotes is not None)
    await pilot.press("l")
    await settle(app, pilot)
    assert isinstance(app.screen, StaleScreen)
    return app.screen


async def to_quote(pilot, screen, case_id: str) -> None:
    await pilot.press("home")
    for _ in range(20):
        q = screen._current_quote()
        if q is not None and q.case == case_id:
            return
        await pilot.press("j")
    raise AssertionError(f"no quote of {case_id} listed")


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_stale_review_lists_unresolved_quotes_and_applies_only_a_pick(zitate, size):
    app = make_app(zitate, recovery=False)
    async with app.run_test(size=size) as pilot:
        screen = await open_stale_review(app, pilot)
        assert {(q.case, q.resolution.status) for q in screen.quote_entries} == {
            ("passwort", "missing"),
            ("urlaubstage", "ambiguous"),
        }
        assert "✓ no stale label · 2 quotes to review" in text_of(screen.query_one("#stale-status"))
        await to_quote(pilot, screen, "passwort")
        detail = text_of(screen.query_one("#stale-text"))
        assert "“Ein neues Passwort braucht mindestens zehn Zeichen.”" in detail
        assert "found nowhere" in detail
        q = screen._current_quote()
        right = next(
            i
            for i, (cid, _s, _d) in enumerate(q.resolution.candidates)
            if "zwölf" in app.corpus.get(cid).text
        )
        assert f"{right + 1} writes “Ein neues Passwort braucht mindestens zwölf Zeichen.”" in detail
        await pilot.press("enter", "a", "F")  # never automatic: nothing written
        await settle(app, pilot)
        assert not app.session.unsaved
        await pilot.press(str(right + 1))
        await settle(app, pilot)
        case = app.session.doc.case("passwort")
        assert case.evidence == ("Ein neues Passwort braucht mindestens zwölf Zeichen.",)
        assert resolve_cases([case], app.corpus)["passwort"].complete
        await until(pilot, lambda: [q.case for q in screen.quote_entries] == ["urlaubstage"])
        await to_quote(pilot, screen, "urlaubstage")
        detail = text_of(screen.query_one("#stale-text"))
        assert "several documents" in detail and "adds faq.md to expected_docs" in detail
        assert "holds the quote" in detail and "100%" not in detail
        q = screen._current_quote()
        deck = next(i for i, (_c, _s, d) in enumerate(q.resolution.candidates) if d == "einarbeitung.md")
        await pilot.press(str(deck + 1))
        await settle(app, pilot)
        assert app.session.doc.case("urlaubstage").expected_docs == ("einarbeitung.md",)
        await until(pilot, lambda: not screen.quote_entries)
        gold = resolve_cases([app.session.doc.case("urlaubstage")], app.corpus)["urlaubstage"]
        assert gold.complete and all(app.corpus.get(c).doc == "einarbeitung.md" for c in gold.ids)
        await pilot.press("ctrl+z")  # one undo step each
        await settle(app, pilot)
        assert app.session.doc.case("urlaubstage").expected_docs == ()


async def test_L_keeps_a_quote_for_later_and_writes_nothing(zitate):
    app = make_app(zitate, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_stale_review(app, pilot)
        await to_quote(pilot, screen, "passwort")
        await pilot.press("L")
        await settle(app, pilot)
        assert not app.session.unsaved
        assert screen._current_quote().case == "urlaubstage"  # moved on to the next
        first = screen.query_one("#stale-list").get_option_at_index(0)
        assert str(first.prompt).startswith("later")
        assert [q.case for q in screen.quote_entries] == ["passwort", "urlaubstage"]  # still listed
        await pilot.press("escape")
        await settle(app, pilot)
        assert "2 quotes unresolved" in text_of(app.screen.query_one("#status"))
