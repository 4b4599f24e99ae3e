"""Pilot tests for what the app looks like: focus you can see, checkboxes you can read."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from ragtriage.tui import make_app
from ragtriage.tui.screens.editor import EditorScreen

from .conftest import settle


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_focused_field_stands_out_from_the_others(shop, size):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        app.screen.table.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        question, topic = editor.query_one("#f-question", Input), editor.query_one("#f-topic", Input)
        assert app.focused is question

        def look(w):
            return w.styles.border_left[1], w.styles.background

        focused, other = look(question), look(topic)
        accent = app.theme_variables["accent"]
        assert focused[0].hex.lower() == accent.lower()  # an accent bar on the left
        assert other[0] != focused[0] and other[1] != focused[1]
        # the tint is a clear step, not 235 against 234: RGB distance well above a shade
        a, b = focused[1].rgb, other[1].rgb
        assert sum(abs(x - y) for x, y in zip(a, b)) > 40
        await pilot.press("shift+tab")  # focus moves: so does the bar
        await settle(app, pilot)
        assert app.focused is topic and look(topic) == focused and look(question) == other


async def test_checkboxes_read_checked_or_not(shop):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        cases = app.screen
        cases.table.focus()
        assert cases.table.move_to("precio-entrega")
        await pilot.press("enter")
        await settle(app, pilot)
        box = app.screen.query_one("#f-expect")
        assert box.render().plain.strip() == "[ ] expect all"
        await pilot.press("tab", "tab", "space")  # question → expected → the expect checkbox
        await settle(app, pilot)
        assert app.focused is box
        assert box.render().plain.strip() == "[x] expect all"
        assert app.session.doc.case("precio-entrega").expect == "all"
        await pilot.press("space")
        await settle(app, pilot)
        assert box.render().plain.strip() == "[ ] expect all"


def footer_keys(screen) -> tuple[list, object]:
    """(the footer's key widgets left to right, the palette key) of ``screen``."""
    from textual.widgets._footer import FooterKey

    from ragtriage.tui.widgets.footer import Footer

    footer = screen.query_one(Footer)
    keys = [k for k in footer.query(FooterKey) if not k.has_class("-command-palette")]
    palette = footer.query_one(".-command-palette")
    return keys, palette


def assert_footer_fits(screen) -> None:
    from ragtriage.tui.widgets.footer import Footer

    keys, palette = footer_keys(screen)
    assert keys
    for k in keys:  # every key shown whole, left of the palette key: nothing cut
        assert k.region.width >= len(k.key_display) + len(k.description)
        assert k.region.right <= palette.region.x, (k.key_display, k.description)
    assert palette.region.right <= screen.size.width  # the palette lists every key
    footer = screen.query_one(Footer)
    if footer.hidden:  # what is left out is counted, and where it is
        more = footer.query_one(".footer-more")
        assert f"+{footer.hidden} more in ^p" in str(more.render())
        assert more.region.right <= palette.region.x
    if not isinstance(screen.focused, Input):  # ? types into a field; elsewhere it is shown
        assert any(k.action.endswith("help") for k in keys)


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_every_footer_shows_whole_keys_and_help_at_80_and_120_columns(shop, size):
    from ragtriage.core.evaluate import evaluate

    evaluate(shop, "builtin", out=shop.parent / "run.jsonl")
    app = make_app(shop, run_path=shop.parent / "run.jsonl", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        cases = app.screen
        cases.table.focus()
        await settle(app, pilot)
        assert_footer_fits(cases)
        for key, name in (("enter", "EditorScreen"), ("p", "PickerScreen"), ("t", "TriageScreen")):
            await pilot.press(key)
            await settle(app, pilot)
            assert type(app.screen).__name__ == name
            assert_footer_fits(app.screen)
            await pilot.press("escape", "escape")
            await settle(app, pilot)
            assert app.screen is cases
            cases.table.focus()


async def test_the_detail_pane_scrolls_by_keys_at_80_by_24(shop):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        cases = app.screen
        cases.table.focus()
        assert cases.table.move_to("garantía")  # two chunks, a note: taller than the pane
        await settle(app, pilot)
        detail = cases.query_one("#detail")
        assert detail.max_scroll_y > 0
        await pilot.press("tab")
        assert app.focused is detail
        await pilot.press("pagedown")
        # the scroll is animated: wait for it to end (one pause was not always enough on a
        # loaded machine)
        await pilot.wait_for_scheduled_animations()
        assert detail.scroll_y > 0
        scrolled = detail.scroll_y
        cases._show_detail("garantía")  # shown again, as a finished stale check or corpus load does
        await settle(app, pilot)
        assert detail.scroll_y == scrolled  # the same case keeps where the person scrolled to
        await pilot.press("home")
        await pilot.wait_for_scheduled_animations()
        assert detail.scroll_y == 0
        await pilot.press("shift+tab")  # back to the table, keys move cases again
        assert app.focused is cases.table
        await pilot.press("J", "J", "J")  # scrolled from the table, then another case
        await pilot.wait_for_scheduled_animations()
        assert detail.scroll_y > 0
        await pilot.press("k")
        await settle(app, pilot)
        assert cases.table.current_id != "garantía" and detail.scroll_y == 0  # another case: from the top


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_stale_list_never_wraps_an_id(shop, size):
    app = make_app(shop, corpus_path=shop.parent / "rechunked.chunks.jsonl", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        app.screen.table.focus()
        await pilot.press("l")
        await settle(app, pilot)
        lst = app.screen.query_one("#stale-list")
        # two lines per label, whatever the width (⚠ case id; label · status): none wrapped
        assert lst.virtual_size.height == 2 * lst.option_count
        await pilot.press("tab")
        assert app.focused is app.screen.query_one("#stale-detail")
