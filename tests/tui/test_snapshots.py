"""Snapshots of the main screens (pytest-textual-snapshot); update with --snapshot-update after a
deliberate change, and look at the SVGs in tests/tui/__snapshots__ before committing them."""

from __future__ import annotations

from ragtriage.tui import make_app

from .conftest import settle


def _app(shop, **kw):
    return make_app(shop, recovery=False, **kw)


async def still(pilot) -> None:
    """Stop every text cursor blinking: a snapshot taken mid-blink differs only by the cursor,
    which made test_editor fail at random under load."""
    for widget in pilot.app.screen.query("Input, TextArea"):
        widget.cursor_blink = False
    await pilot.pause()


def test_cases_screen(snap_compare, shop):
    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("j", "j", "j", "j", "j", "j")  # garantía: two expected chunks, expect all
        await settle(pilot.app, pilot)
        await still(pilot)

    assert snap_compare(_app(shop), terminal_size=(120, 36), run_before=ready)


def test_cases_screen_at_80_by_24_with_filter(snap_compare, shop):
    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("slash", *"pago", "enter")
        await pilot.pause()
        await still(pilot)

    assert snap_compare(_app(shop), terminal_size=(80, 24), run_before=ready)


def test_editor(snap_compare, shop):
    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("enter")
        await settle(pilot.app, pilot)
        await still(pilot)

    assert snap_compare(_app(shop), terminal_size=(120, 36), run_before=ready)


def test_picker(snap_compare, shop):
    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("p")
        await settle(pilot.app, pilot)
        await still(pilot)

    assert snap_compare(_app(shop), terminal_size=(120, 36), run_before=ready)


def test_stale_review(snap_compare, shop):
    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("l")
        await settle(pilot.app, pilot)

    app = _app(shop, corpus_path=shop.parent / "rechunked.chunks.jsonl")
    assert snap_compare(app, terminal_size=(120, 36), run_before=ready)


def test_editor_at_80_by_24(snap_compare, shop):
    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("enter")
        await settle(pilot.app, pilot)
        await still(pilot)

    assert snap_compare(_app(shop), terminal_size=(80, 24), run_before=ready)


def test_picker_at_80_by_24(snap_compare, shop):
    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("p")
        await settle(pilot.app, pilot)
        await still(pilot)

    assert snap_compare(_app(shop), terminal_size=(80, 24), run_before=ready)


def test_export_dialog_at_80_by_24(snap_compare, shop, monkeypatch):
    monkeypatch.chdir(shop.parent)  # the default path is shown as given: shop.export.jsonl

    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("ctrl+e")
        await settle(pilot.app, pilot)
        await still(pilot)

    assert snap_compare(_app("shop.yaml"), terminal_size=(80, 24), run_before=ready)


def test_stale_review_at_80_by_24(snap_compare, shop):
    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("l")
        await settle(pilot.app, pilot)
        await still(pilot)

    app = _app(shop, corpus_path=shop.parent / "rechunked.chunks.jsonl")
    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)
