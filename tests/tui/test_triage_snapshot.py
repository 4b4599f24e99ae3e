"""Snapshot of the Triage screen on the demo run (pytest-textual-snapshot); update with
--snapshot-update after a deliberate change and look at the SVG before committing it."""

from __future__ import annotations

import shutil
from pathlib import Path

from ragtriage.core.evaluate import evaluate
from ragtriage.tui import make_app

from .test_triage import settle

ROOT = Path(__file__).resolve().parents[2]


def test_triage_screen(snap_compare, tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    evaluate(tmp_path / "shop-es.yaml", "builtin", out=tmp_path / "run.jsonl")
    app = make_app(tmp_path / "shop-es.yaml", tmp_path / "run.jsonl", mode="triage", recovery=False)

    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("tab", "tab")  # wrong-answer: tarjeta-rechazada, must-contain missing
        await settle(pilot.app, pilot)

    assert snap_compare(app, terminal_size=(120, 36), run_before=ready)


def test_triage_screen_at_80_by_24(snap_compare, tmp_path):
    """Below 100 columns: the list above, the case below, both full width."""
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    evaluate(tmp_path / "shop-es.yaml", "builtin", out=tmp_path / "run.jsonl")
    app = make_app(tmp_path / "shop-es.yaml", tmp_path / "run.jsonl", mode="triage", recovery=False)

    async def ready(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("tab", "tab")  # wrong-answer: tarjeta-rechazada
        await settle(pilot.app, pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)
