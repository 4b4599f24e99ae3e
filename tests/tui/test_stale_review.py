"""Pilot tests of the stale review on a real re-chunking (testsets/pydocs/: Python docs, one
chunk per paragraph re-chunked into ~600-character windows), pressing real keys.

What the app writes is compared with what ``ragtriage stale --fix`` writes on a second copy,
and with the engine's report: the screen shows and applies the engine's proposal only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragtriage.core import staleness
from ragtriage.core.document import TestSetDocument
from ragtriage.tui import make_app
from ragtriage.tui.screens.stale import StaleScreen

from .conftest import ROOT, settle, text_of

PYDOCS = ROOT / "testsets" / "pydocs"
WINDOWS = "pydocs-windows.chunks.jsonl"
SIZES = [(80, 24), (120, 36)]


def _copy(folder: Path) -> Path:
    folder.mkdir()
    for name in ("pydocs.yaml", "pydocs-paragraphs.chunks.jsonl", WINDOWS):
        shutil.copy(PYDOCS / name, folder / name)
    return folder / "pydocs.yaml"


@pytest.fixture
def pydocs(tmp_path) -> Path:
    return _copy(tmp_path / "app")


@pytest.fixture
def fixed_by_cli(tmp_path) -> TestSetDocument:
    """A second copy after ``ragtriage stale --fix --corpus pydocs-windows…``."""
    from ragtriage.cli import main

    ts = _copy(tmp_path / "cli")
    assert main(["stale", str(ts), "--corpus", str(ts.parent / WINDOWS), "--fix"]) == 1  # reviews remain
    return TestSetDocument.load(ts, use_cache=False)


def screen_text(app) -> str:
    """What the terminal shows, line by line."""
    comp = app.screen._compositor
    return "\n".join("".join(seg.text for seg in strip) for strip in comp.render_strips(comp.size))


def marked_text(app) -> str:
    """The highlighted (reverse) text on screen, runs joined by one space (a run may wrap)."""
    comp = app.screen._compositor
    runs = [
        seg.text.strip()
        for strip in comp.render_strips(comp.size)
        for seg in strip
        if seg.style and seg.style.reverse and any(ch.isalnum() for ch in seg.text)
    ]
    return " ".join(" ".join(runs).split()) + "\n"


def toasts(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def open_review(app, pilot) -> StaleScreen:
    await settle(app, pilot)
    await pilot.press("l")  # Cases: review the stale labels
    await settle(app, pilot)
    assert isinstance(app.screen, StaleScreen)
    return app.screen


async def go_to(app, pilot, case: str, label: str) -> None:
    """Move the list's cursor with real keys onto (case, label): j or k from where it is, or
    home then j when that is shorter."""
    entries = app.stale.report
    at = next(i for i, e in enumerate(entries) if e.case == case and e.label == label)
    cur = app.screen._current()
    now = next((i for i, e in enumerate(entries) if e is cur), None)
    if now is None or at < abs(at - now):
        keys = ["home", *["j"] * at]
    else:
        keys = ["j"] * (at - now) if at >= now else ["k"] * (now - at)
    if keys:
        await pilot.press(*keys)
    await pilot.pause()
    e = app.screen._current()
    assert (e.case, e.label) == (case, label)


@pytest.mark.parametrize("size", SIZES)
async def test_enter_applies_every_automatic_fix_exactly_as_stale_fix(pydocs, fixed_by_cli, size):
    app = make_app(pydocs, corpus_path=pydocs.parent / WINDOWS)
    async with app.run_test(size=size) as pilot:
        await open_review(app, pilot)
        pressed = 0
        while True:
            auto = [e for e in app.stale.report if e.fix == "auto"]
            if not auto:
                break
            await go_to(app, pilot, auto[0].case, auto[0].label)
            await pilot.press("enter")
            await settle(app, pilot)
            pressed += 1
            assert pressed <= 44
        assert pressed == 24  # the 24 the CLI fixes (testsets/pydocs/README.md)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    doc = TestSetDocument.load(pydocs, use_cache=False)
    for case in fixed_by_cli.cases:
        assert doc.case(case.id).expected == case.expected, case.id
    assert doc.case("append-vs-extend").expected == ("datastructures-0",)
    for cid in {c for case in doc.cases for c in case.expected}:  # the labels hold the same text
        assert doc.labels[cid].text == fixed_by_cli.labels[cid].text, cid


@pytest.mark.parametrize("size", SIZES)
async def test_a_review_label_is_applied_only_when_a_person_chooses(pydocs, size):
    app = make_app(pydocs, corpus_path=pydocs.parent / WINDOWS)
    async with app.run_test(size=size) as pilot:
        screen = await open_review(app, pilot)
        await go_to(app, pilot, "insert-at-front", "datastructures-9")
        entry = screen._current()
        assert entry.fix == "review" and entry.expect == "all"
        shown = text_of(screen.query_one("#stale-text"))
        assert "a accepts datastructures-0 + datastructures-1, expect: all" in shown
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.doc.case("insert-at-front").expected == ("datastructures-9",)  # not applied
        assert any("needs review, enter does not apply it" in m for m in toasts(app))
        await pilot.press("a")  # the proposal the CLI prints: both windows, expect: all
        await settle(app, pilot)
        case = app.doc.case("insert-at-front")
        assert case.expected == ("datastructures-0", "datastructures-1") and case.expect == "all"
        assert not any(e.case == "insert-at-front" for e in app.stale.report)
        # a review label with two windows holding its text: a does not choose for the person;
        # 2 is held back (datastructures-13 is the stale label of pop-without-index), 1 is taken
        await go_to(app, pilot, "tuple-in-comprehension", "datastructures-52")
        assert [c for c, _ in screen._current().candidates] == ["datastructures-12", "datastructures-13"]
        await pilot.press("a", "enter", "2")
        await settle(app, pilot)
        assert app.doc.case("tuple-in-comprehension").expected == ("datastructures-52",)
        assert any("held back" in m and "expected by pop-without-index" in m for m in toasts(app))
        await pilot.press("1")
        await settle(app, pilot)
        assert app.doc.case("tuple-in-comprehension").expected == ("datastructures-12",)


@pytest.mark.parametrize("size", SIZES)
async def test_an_id_another_case_still_expects_is_held_back_with_the_reason(pydocs, size):
    app = make_app(pydocs, corpus_path=pydocs.parent / WINDOWS)
    async with app.run_test(size=size) as pilot:
        screen = await open_review(app, pilot)
        # delete-by-index is split over datastructures-18 + 19; datastructures-18 is the old
        # (stale) label of index-in-a-range
        await go_to(app, pilot, "delete-by-index", "datastructures-70")
        assert "held back: datastructures-18 is still expected by index-in-a-range" in text_of(
            screen.query_one("#stale-text")
        )
        await pilot.press("a")
        await pilot.press("1")
        await settle(app, pilot)
        assert app.doc.case("delete-by-index").expected == ("datastructures-70",)
        held = [m for m in toasts(app) if "held back" in m]
        assert len(held) == 2 and all(
            "datastructures-18 is still expected by index-in-a-range" in m for m in held
        )
        await go_to(app, pilot, "index-in-a-range", "datastructures-18")  # resolve that case first
        await pilot.press("a")
        await settle(app, pilot)
        assert app.doc.case("index-in-a-range").expected == ("datastructures-2", "datastructures-3")
        await go_to(app, pilot, "delete-by-index", "datastructures-70")  # now it may take the id
        await pilot.press("a")
        await settle(app, pilot)
        assert app.doc.case("delete-by-index").expected == ("datastructures-18", "datastructures-19")
        before = len(app.stale.report)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert len(app.stale.report) == before
    doc = TestSetDocument.load(pydocs, use_cache=False)
    report = staleness.check(doc, pydocs.parent / WINDOWS)
    stale_cases = {e.case for e in report.stale}
    assert not stale_cases & {"delete-by-index", "index-in-a-range"}
    assert len(report.stale) == 44 - 2


@pytest.mark.parametrize("size", SIZES)
async def test_after_a_save_corpus_names_the_chunks_checked_against(pydocs, size):
    app = make_app(pydocs, corpus_path=pydocs.parent / WINDOWS)
    async with app.run_test(size=size) as pilot:
        await open_review(app, pilot)
        await go_to(app, pilot, "remove-missing-value", "datastructures-11")
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert any(f"corpus: now {WINDOWS}" in m for m in toasts(app))
    text = pydocs.read_text()
    assert f"\ncorpus: {WINDOWS}\n" in text
    assert "# Labelled against pydocs-paragraphs.chunks.jsonl" in text  # comments kept
    doc = TestSetDocument.load(pydocs, use_cache=False)
    report = staleness.check(doc)  # what validate checks: the test set's own corpus
    assert "remove-missing-value" not in {e.case for e in report.stale}
    assert len(report.stale) == 43


@pytest.mark.parametrize("size", SIZES)
async def test_the_screen_names_the_corpus_and_never_a_bare_all_clear(pydocs, size):
    app = make_app(pydocs)  # the CLI's hint without --corpus: the test set's own (old) chunks
    async with app.run_test(size=size) as pilot:
        screen = await open_review(app, pilot)
        status = text_of(screen.query_one("#stale-status"))
        assert status.startswith("✓ no stale label against pydocs-paragraphs.chunks.jsonl")
        assert "the test set's corpus:" in status
        detail = text_of(screen.query_one("#stale-text"))
        assert "If the documents were re-chunked" in detail
        assert "ragtriage edit pydocs.yaml --corpus NEW.chunks.jsonl" in detail
        await pilot.press("l")  # check again: the same honest answer
        await settle(app, pilot)
        assert "against pydocs-paragraphs.chunks.jsonl" in text_of(screen.query_one("#stale-status"))
    app = make_app(pydocs, corpus_path=pydocs.parent / WINDOWS)
    async with app.run_test(size=size) as pilot:
        screen = await open_review(app, pilot)
        status = text_of(screen.query_one("#stale-status"))
        assert f"checked against {WINDOWS} (--corpus" in status and "24 auto, 20 review" in status


@pytest.mark.parametrize("size", SIZES)
async def test_candidates_fit_the_terminal_highlighted_and_rows_say_auto_or_review(pydocs, size):
    app = make_app(pydocs, corpus_path=pydocs.parent / WINDOWS)
    async with app.run_test(size=size) as pilot:
        screen = await open_review(app, pilot)
        await go_to(app, pilot, "insert-at-front", "datastructures-9")
        seen = screen_text(app)
        marked = marked_text(app)
        for _ in range(6):  # pgdn until the second candidate is on screen
            if "[2] datastructures-1" in seen:
                break
            await pilot.press("pagedown")
            await pilot.pause()
            seen += screen_text(app)
            marked += marked_text(app)
        assert "[1] datastructures-0" in seen and "[2] datastructures-1" in seen
        assert screen._current().label == "datastructures-9"  # pgdn scrolled the text, not the list
        # the remembered text is highlighted inside each window: the end of window 0 (where
        # "Insert an item" starts) and the start of window 1 (up to "a.append(x).")
        assert "list.insert(i, x)" in seen
        assert "Insert an item at a" in marked
        assert "is equivalent to a.append(x)." in marked
        assert "list.insert(i, x)" not in marked and "list.remove(x)" not in marked
        # the rows: auto or review and the case, then the label whole on the next line: no id
        # broken over two lines
        lines = screen_text(app).splitlines()
        for mark, case, label in (
            ("auto", "append-vs-extend", "datastructures-5 · changed"),
            ("review", "insert-at-front", "datastructures-9 · changed"),
        ):
            at = next(n for n, line in enumerate(lines) if f"{mark}  " in line and f"{case}  " in line)
            assert label in lines[at + 1]
