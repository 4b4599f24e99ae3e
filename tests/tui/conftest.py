"""Fixtures for the app's Pilot tests: a private copy of a small Spanish shop test set."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture
def shop(tmp_path) -> Path:
    """tests/tui/data/shop.yaml and its chunks, copied into a temp folder; returns the YAML path."""
    for name in ("shop.yaml", "shop.chunks.jsonl", "rechunked.chunks.jsonl"):
        shutil.copy(DATA / name, tmp_path / name)
    return tmp_path / "shop.yaml"


async def settle(app, pilot) -> None:
    """Let every worker (load, corpus, index, stale check, search) finish and the screen catch up."""
    from textual.worker import WorkerCancelled

    for _ in range(4):
        await pilot.pause()
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:  # an exclusive worker replaced by a newer one: that one is awaited next round
            pass
    from textual.widgets import Input, TextArea

    from ragtriage.tui.screens.cases import CasesScreen

    for screen in app.screen_stack:  # a burst of keys defers the detail pane to a timer: show it now
        if isinstance(screen, CasesScreen) and screen.is_mounted:
            screen.flush_detail()
        # A blinking cursor is on or off depending on how long the test took (the editor snapshot
        # failed only in slow full-suite runs): hold it on.
        for box in screen.query(Input):
            box.cursor_blink = False
        for area in screen.query(TextArea):
            area.cursor_blink = False
    await pilot.pause()


def text_of(widget) -> str:
    """The plain text a Static (or Label) shows."""
    content = widget.render()
    return getattr(content, "plain", str(content))
