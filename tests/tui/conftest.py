"""Fixtures for the app's Pilot tests: a private copy of a small Spanish shop test set."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import textual._wait

# Pilot waits for the app to go idle by sleeping in slices and checking the process's CPU
# time; Textual's slice is 20 ms, so every key costs at least two or three of them and the
# app tests spent three quarters of their time asleep. A 5 ms slice (idle: under a twentieth
# of it on the CPU, Textual's own ratio) keeps the same rule at a quarter of the wait.
textual._wait.SLEEP_GRANULARITY = 0.005
textual._wait.SLEEP_IDLE = 0.005 / 20

DATA = Path(__file__).resolve().parent / "data"
GOLDEN = Path(__file__).resolve().parent / "golden"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_a_private_folder(tmp_path, monkeypatch):
    """The app writes runs, sidecars and exports under ``runs/`` of the current folder (as
    the CLI does): every app test runs in its own temporary folder."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def shop(tmp_path) -> Path:
    """tests/tui/data/shop.yaml and its chunks, copied into a temp folder; returns the YAML path."""
    for name in ("shop.yaml", "shop.chunks.jsonl", "rechunked.chunks.jsonl"):
        shutil.copy(DATA / name, tmp_path / name)
    return tmp_path / "shop.yaml"


@pytest.fixture
def shop_run(tmp_path) -> tuple[Path, Path]:
    """(test set, run file): testsets/shop-es.yaml + chunks copied, run with builtin."""
    from ragtriage.core.evaluate import evaluate

    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    ts = tmp_path / "shop-es.yaml"
    evaluate(ts, "builtin", out=tmp_path / "run.jsonl")
    return ts, tmp_path / "run.jsonl"


async def goto(pilot, screen, case_id: str) -> None:
    """Move a table's cursor with j (real keys) until ``case_id`` is selected."""
    screen.table.action_first()
    for _ in range(200):
        if screen.table.current_id == case_id:
            return
        await pilot.press("j")
    raise AssertionError(f"{case_id} not reached")


def _busy(app) -> bool:
    """Is a worker still running, or a message still queued anywhere in the app?"""
    if any(not w.is_finished for w in app.workers) or app.message_queue_size:
        return True
    return any(
        node.message_queue_size
        for screen in app.screen_stack
        for node in screen.walk_children(with_self=True)
    )


async def until(pilot, cond, tries: int = 500) -> None:
    """Wait for a condition the app reaches on its own (a worker's result), no fixed sleep:
    under load Pilot may call the app idle before a worker's message is handled (it reads
    the process's CPU clock, and a starved process looks idle)."""
    for _ in range(tries):
        if cond():
            return
        await pilot.pause(0.01)
    raise AssertionError("condition not reached")


async def settle(app, pilot) -> None:
    """Let every worker (load, corpus, index, stale check, search) finish and the screen catch up."""
    from textual.worker import WorkerCancelled

    for _ in range(4):
        await pilot.pause()
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:  # an exclusive worker replaced by a newer one: that one is awaited next round
            pass
    for _ in range(400):  # Pilot's idle is the process's CPU clock, and a starved process looks
        if not _busy(app):  # idle: wait until no worker runs and no message waits to be handled
            break
        await pilot.pause(0.005)
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
