"""Pilot tests for the chunk picker finding what an expert types (issue 13, item 6)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input

from ragtriage.tui import make_app
from ragtriage.tui.screens.picker import PickerScreen

from .conftest import settle, text_of

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def shop_de(tmp_path):
    for name in ("shop-de.yaml", "shop-de.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    return tmp_path / "shop-de.yaml"


async def open_picker(app, pilot, case_id: str) -> PickerScreen:
    await settle(app, pilot)
    cases = app.screen
    cases.table.focus()
    assert cases.table.move_to(case_id)
    await pilot.press("p")
    await settle(app, pilot)
    picker = app.screen
    assert isinstance(picker, PickerScreen) and picker.case_id == case_id
    return picker


def status(picker: PickerScreen) -> str:
    return text_of(picker.query_one("#picker-status"))


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
@pytest.mark.parametrize(
    ("case_id", "chunk"),
    [("lieferzeit", "lieferung-2"), ("lieferpreis", "lieferung-1")],
)
async def test_the_german_questions_prefilled_from_a_case_find_their_chunk(shop_de, size, case_id, chunk):
    """Both found 0 chunks before: "bestelle" vs "Bestellung", "Postfiliale"+"schicken" vs
    the chunk's inflections. Stemmed in German (the test set's language), they are found."""
    app = make_app(shop_de, recovery=False)
    async with app.run_test(size=size) as pilot:
        picker = await open_picker(app, pilot, case_id)
        found = [cid for cid, _ in picker.results]
        assert chunk in found[:3]
        assert app.focused is picker.query_one("#results")  # results get focus when there are any


async def test_accents_and_umlauts_do_not_matter(shop_de, shop):
    app = make_app(shop_de, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(app, pilot, "rückgabe")
        await pilot.press("slash", "ctrl+u", *"Rucksendung")
        await settle(app, pilot)
        found = [cid for cid, _ in picker.results]
        assert found[0] == "rückgabe-3"  # the word itself; then "Sendungsnummer", by its part
        assert "rückgabe-3" not in found[1:]
    app = make_app(shop, recovery=False)  # Spanish
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(app, pilot, "plazo-entrega")
        await pilot.press("slash", "ctrl+u", *"GARANTIA")
        await settle(app, pilot)
        assert {cid for cid, _ in picker.results} >= {"garantía-1", "garantía-2"}


async def test_a_misspelt_word_falls_back_to_close_words_and_says_so(shop_de):
    app = make_app(shop_de, recovery=False)
    async with app.run_test(size=(120, 36)) as pilot:
        picker = await open_picker(app, pilot, "garantie")
        await pilot.press("slash", "ctrl+u", *"Garantei")
        await settle(app, pilot)
        assert picker.fuzzy and "garantie" in picker.fuzzy["garantei"]
        assert {cid for cid, _ in picker.results} >= {"garantie-1", "garantie-2"}
        assert "close words" in status(picker) and "garantei → garantie" in status(picker)
        await pilot.press("ctrl+u", *"Garantie")  # spelt right: an exact match, no fallback
        await settle(app, pilot)
        assert picker.results and not picker.fuzzy
        assert "close words" not in status(picker)


async def test_an_empty_query_lists_the_corpus_by_document(shop_de):
    app = make_app(shop_de, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(app, pilot, "lieferzeit")
        await pilot.press("slash", "ctrl+u")
        await settle(app, pilot)
        assert picker.browsing
        corpus = app.corpus
        listed = [cid for cid, _ in picker.results]
        assert sorted(listed) == sorted(c.id for c in corpus.values())  # every chunk, once
        docs = [corpus.get(cid).doc for cid in listed]
        assert docs == sorted(docs)  # grouped by document
        assert "11 chunks by document" in status(picker)
        await pilot.press("tab", "down", "space")  # browse, pick the second chunk
        await settle(app, pilot)
        assert listed[1] in app.session.doc.case("lieferzeit").expected


async def test_space_in_the_search_box_toggles_the_highlighted_hit_after_arrow_keys(shop_de):
    app = make_app(shop_de, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(app, pilot, "sonntag")  # no expected chunks yet
        query = picker.query_one("#query", Input)
        await pilot.press("slash", "ctrl+u", *"Garantie Rücksendung")  # spaces between words type
        await settle(app, pilot)
        assert query.value == "Garantie Rücksendung"
        assert app.focused is query
        first = picker.results[0][0]
        second = picker.results[1][0]
        await pilot.press("space")  # right after typing: a space, not a toggle
        await settle(app, pilot)
        assert query.value == "Garantie Rücksendung "
        assert app.session.doc.case("sonntag").expected == ()
        await pilot.press("down", "space")  # ↓ highlights the next hit; space toggles it
        await settle(app, pilot)
        assert app.focused is query
        assert query.value == "Garantie Rücksendung "
        assert app.session.doc.case("sonntag").expected == (second,)
        await pilot.press("up", "space")
        await settle(app, pilot)
        assert app.session.doc.case("sonntag").expected == (second, first)
        await pilot.press("space")  # still picking: toggles it back out
        await settle(app, pilot)
        assert app.session.doc.case("sonntag").expected == (second,)
        await pilot.press("x", "backspace", "space")  # typing again: space types
        await settle(app, pilot)
        assert query.value == "Garantie Rücksendung  "
        await pilot.press("down", "tab")  # Tab still moves focus, to the results
        assert app.focused is picker.query_one("#results")
        await pilot.press("slash", "space")  # back in the box: space types again
        await settle(app, pilot)
        assert app.focused is query and query.value == " "  # (/ selects the query: typing replaces it)
        assert app.session.doc.case("sonntag").expected == (second,)


async def test_the_picker_shows_what_the_users_system_retrieves(shop_de, monkeypatch):
    """`edit --system SPEC`: under the search results, the chunks the user's own system
    retrieves for the case's question, each one a key away from expected."""
    import sys
    import types

    asked = []

    def answer(question, k):
        asked.append(question)
        return {"ranking": ["garantie-2", "zahlung-1"], "answer": "siehe [garantie-2]"}

    mod = types.ModuleType("picker_users_system")
    mod.answer = answer
    monkeypatch.setitem(sys.modules, "picker_users_system", mod)
    app = make_app(shop_de, recovery=False, system="python:picker_users_system:answer")
    async with app.run_test(size=(120, 36)) as pilot:
        picker = await open_picker(app, pilot, "lieferzeit")
        lst = picker.query_one("#results")
        ids = [lst.get_option_at_index(i).id for i in range(lst.option_count)]
        assert ids[-2:] == ["system:garantie-2", "system:zahlung-1"]
        head = lst.get_option_at_index(len(ids) - 3)
        assert head.disabled and "what python:picker_users_system:answer retrieves" in head.prompt.plain
        assert asked == [app.doc.case("lieferzeit").question]  # asked once, in a worker
        lst.highlighted = len(ids) - 1
        await pilot.press("space")
        await settle(app, pilot)
        assert "zahlung-1" in app.doc.case("lieferzeit").expected
        assert len(asked) == 1  # the same question is not asked again
