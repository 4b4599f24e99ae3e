"""Export from the Cases screen (ctrl+e and the palette): every format of ``ragtriage export``
and the CI report of ``ragtriage check``, written by the same renderers, never over an input."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from ragtriage.cli import main as cli
from ragtriage.core.document import TestSetDocument
from ragtriage.core.exchange import FORMATS, export_testset
from ragtriage.tui import make_app
from ragtriage.tui.dialogs.export import ExportDialog
from ragtriage.tui.export import CHOICES
from ragtriage.tui.screens.cases import CasesScreen

from .conftest import settle, text_of

SIZES = [(80, 24), (120, 36)]
KINDS = [name for name, _label in CHOICES]


async def _choose(app, pilot, kind: str, path) -> ExportDialog:
    """ctrl+e, arrow down to ``kind``, tab to the file, paste ``path``; returns the dialog."""
    await pilot.press("ctrl+e")
    await settle(app, pilot)
    dialog = app.screen
    assert isinstance(dialog, ExportDialog)
    await pilot.press(*["down"] * KINDS.index(kind), "tab")
    box = dialog.query_one("#export-path")
    assert app.focused is box
    await pilot.press("ctrl+u")
    box.post_message(events.Paste(str(path)))  # a path is pasted, as a terminal sends it
    await pilot.pause()
    assert box.value == str(path)
    return dialog


def _toasts(app) -> list[str]:
    return [n.message for n in app._notifications]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("fmt", FORMATS)
async def test_every_format_is_what_ragtriage_export_writes(shop, tmp_path, size, fmt):
    out = tmp_path / "out" / f"exported.{fmt}"
    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await _choose(app, pilot, fmt, out)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, CasesScreen)
        assert any(str(out) in m and fmt in m for m in _toasts(app))
    expected, _notes = export_testset(TestSetDocument.load(shop, use_cache=False), fmt)
    assert out.read_text("utf-8") == expected


async def test_default_path_follows_the_format_and_keeps_a_typed_one(shop):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+e")
        await settle(app, pilot)
        box = app.screen.query_one("#export-path")
        assert box.value == str(Path("runs") / "shop.export.jsonl")  # as the CLI's runs: runs/
        await pilot.press("down")
        assert box.value == str(Path("runs") / "shop.export.csv")
        await pilot.press("tab", "ctrl+u", *"mine.csv", "shift+tab", "down")
        assert box.value == "mine.csv"


@pytest.mark.parametrize("size", SIZES)
async def test_never_over_the_open_test_set_or_its_corpus(shop, size):
    before = {p: p.read_bytes() for p in (shop, shop.parent / "shop.chunks.jsonl")}
    app = make_app(shop, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        for target in before:
            dialog = await _choose(app, pilot, "jsonl", target)
            await pilot.press("enter")
            await settle(app, pilot)
            assert app.screen is dialog  # refused in the dialog, nothing written
            assert "is also an input" in text_of(dialog.query_one("#export-error"))
            await pilot.press("escape")
            await settle(app, pilot)
    assert {p: p.read_bytes() for p in before} == before


async def test_a_ci_report_needs_a_run(shop, tmp_path):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        dialog = await _choose(app, pilot, "junit", tmp_path / "r.xml")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is dialog
        assert "needs a run" in text_of(dialog.query_one("#export-error"))
    assert not (tmp_path / "r.xml").exists()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", ["junit", "markdown", "json"])
async def test_ci_report_is_what_ragtriage_check_writes(shop_run, tmp_path, size, kind):
    ts, run = shop_run
    mine, theirs = tmp_path / f"app.{kind}", tmp_path / f"check.{kind}"
    assert cli(["check", str(ts), "--run", str(run), f"--{kind}", str(theirs)]) in (0, 1)
    app = make_app(ts, run, recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await _choose(app, pilot, kind, mine)
        await pilot.press("ctrl+s")  # ctrl+s applies a dialog, as enter does
        await settle(app, pilot)
        assert isinstance(app.screen, CasesScreen)
        assert any(m.startswith("CI report") and str(mine) in m for m in _toasts(app))
    assert mine.read_text("utf-8") == theirs.read_text("utf-8")


async def test_export_from_the_palette(shop):
    app = make_app(shop, recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        await pilot.press(*"Export")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ExportDialog)
