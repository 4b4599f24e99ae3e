"""Layout by width: Triage stacks below 100 columns (as the stale review does); at 160
columns and more the detail panes and the Cases question column use the width."""

from __future__ import annotations

import pytest

from ragtriage.tui import make_app
from ragtriage.tui.screens.triage import TriageScreen

from .conftest import settle


@pytest.mark.parametrize("size", [(80, 24), (99, 30)])
async def test_triage_stacks_below_100_columns(shop_run, size):
    ts, run = shop_run
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        triage = app.screen
        assert isinstance(triage, TriageScreen)
        table, case = triage.table.region, triage.query_one("#triage-case").region
        assert case.y >= table.bottom  # the case below the list
        assert table.width == case.width == size[0]  # both full width: ids and answers not cut
        assert case.height >= 5 and table.height >= 5
        await pilot.press("J")  # the stacked pane still scrolls from the list
        await settle(app, pilot)


@pytest.mark.parametrize("size", [(120, 36), (200, 50)])
async def test_triage_side_by_side_from_100_columns(shop_run, size):
    ts, run = shop_run
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        triage = app.screen
        table, case = triage.table.region, triage.query_one("#triage-case").region
        assert case.x >= table.right and case.y == table.y
        assert case.width > size[0] // 2  # the case pane takes the larger share at every width


async def test_cases_detail_and_question_grow_on_wide_terminals(shop_run):
    ts, run = shop_run
    widths = {}
    for size in [(120, 36), (200, 50)]:
        app = make_app(ts, run, recovery=False)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            cases = app.screen
            w = cases.table.column_widths()
            widths[size[0]] = (cases.query_one("#detail").region.width, w["question"], w["reason"])
    (detail_120, question_120, _reason_120), (detail_200, question_200, reason_200) = widths[120], widths[200]
    assert detail_200 > detail_120  # was 44 at every width
    assert question_200 >= 2 * question_120 and question_200 >= 40
    assert reason_200 >= max(len(r) for r in ("wrong-answer", "retrieval-miss", "unsupported-claim"))


@pytest.mark.parametrize("width", [100, 130, 160, 240])
async def test_wide_table_keeps_the_question_at_two_fifths(shop, width):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=(width + 60, 30)) as pilot:
        await settle(app, pilot)
        table = app.screen.table
        table.show_reason = True
        table._widths = {}
        w = table.column_widths()
        total = w["_total"]
        assert w["question"] >= total * 2 // 5 - 1
        assert w["reason"] == 24


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_detail_text_is_laid_out_at_its_height_after_every_change(shop, size):
    """The detail's text asks for a layout only when its height changes: after moving over
    every case and flagging one (a longer text) and back, it is exactly as tall as its text."""
    from ragtriage.tui.widgets.case_detail import DetailText

    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        text = app.screen.query_one(DetailText)
        heights = set()
        for key in ["j"] * len(app.session.doc.cases) + ["g", "u", "ctrl+z", "u"]:
            await pilot.press(key)
            await settle(app, pilot)
            region = text.content_region
            want = text.get_content_height(region.size, app.size, region.width)
            assert region.height == want, (key, region.height, want)
            heights.add(want)
        assert len(heights) > 2  # the texts differed in height, so the layout was exercised
