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
