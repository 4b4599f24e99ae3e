"""Issue 19 items 5 and 6, the app: markup and escape sequences from data, swept over every
screen and dialog through Pilot.

A test set named ``t[a="].yaml`` holds case ids that are Textual markup (``[@click=...]``
that would save or overwrite a file on one click, a lone ``[/]`` that would crash), and
questions, topics, notes, must-contain strings, a chunk's text and a system's answer
carrying terminal escapes (window title, clipboard write, hyperlink, clear screen, C1 CSI,
U+202E) and markup. Every screen and dialog is opened on them; what is painted must hold
the literal text, no control or bidi character, and no click action that came from data.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from ragtriage.core.evaluate import evaluate
from ragtriage.tui import make_app
from ragtriage.tui.shown import UNSAFE
from tests.conftest import TESTSETS
from tests.tui.conftest import settle

VICTIM = "victim.txt"
IDS = [
    f"Q[@click=app.screenshot('{VICTIM}','.')]X[/]",
    "[@click=app.save]s",
    "m[/]x",
    "[b]x[/b]",
    "e\x1b]0;title\x07t",
    "c\x9bz",
    "r\u202eq",
]
ESCAPES = "\x1b]0;title\x07 \x1b]52;c;ZXZpbA==\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b[2J \x9b31m \u202eevil"
MARKUP = "[b]x[/b] [/] [@click=app.save]s[/] [/"
ANSWER = "Cuesta 4 € por envío. [entrega-1] [/] " + ESCAPES
CHUNK = "h[/]1"
SYSTEM = f'''
def answer(q, k):
    return {{"answer": {ANSWER!r}, "ranking": [{CHUNK!r}, "entrega-1", "pago-1"]}}
'''
SIZE = (120, 40)


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """(test set, run): hostile ids, texts, a chunk, an answer and file names."""
    chunks = (TESTSETS / "shop-es.chunks.jsonl").read_text()
    chunks += json.dumps({"id": CHUNK, "text": MARKUP + " " + ESCAPES, "doc": "x.md"}) + "\n"
    (tmp_path / "c[b]s.chunks.jsonl").write_text(chunks)
    lines = ["version: 1", 'corpus: "c[b]s.chunks.jsonl"', "language: es", "k: 3", "cases:"]
    text = json.dumps(MARKUP + " " + ESCAPES)
    for i, cid in enumerate(IDS):
        expected = json.dumps(CHUNK if i % 2 else "entrega-1")
        lines += [f"  - id: {json.dumps(cid)}", f"    question: {text}", f"    topic: {text}",
                  f"    notes: {text}", f"    expected: [{expected}]", f"    must_contain: [{text}]"]  # fmt: skip
    ts = tmp_path / 't[a="].yaml'
    ts.write_text("\n".join(lines) + "\n")
    name = f"hostile_answers_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text(SYSTEM)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    run = tmp_path / "r[b]u.jsonl"
    evaluate(ts, f"python:{name}:answer", out=run)
    yield ts, run
    sys.modules.pop(name, None)


def _painted(app) -> list[list]:
    """The segments of every painted line of the screen on top (dialogs, toasts included)."""
    update = app.screen._compositor.render_full_update()
    return [[seg for strip in row for seg in strip] for row in update.strips]


def _check(app, where: str, must_show: list[str] = ()) -> str:
    """What is painted: no control or bidi character, no click action from data; returns the text."""
    lines = _painted(app)
    painted = ["".join(seg.text for seg in line) for line in lines]
    for row in painted:
        bad = UNSAFE.search(row)
        assert bad is None, f"{where}: {bad.group()!r} painted raw: {row!r}"
    text = "\n".join(painted)
    for line in lines:
        for seg in line:
            meta = seg.style.meta if seg.style is not None else {}
            click = str(meta.get("@click", ""))
            assert "screenshot" not in click and "save" not in click, f"{where}: data made a link: {click}"
    flat = " ".join(text.split())
    for literal in must_show:
        assert literal in flat, f"{where}: {literal!r} not shown"
    return text


async def _click_everything(app, pilot) -> None:
    """Click every line of every Static on the screen: a link from data would act."""
    from textual.widgets import Static

    for widget in list(app.screen.query(Static)):
        region = widget.region
        if not region.area:
            continue
        for y in range(region.y, min(region.bottom, region.y + 2)):
            for x in range(region.x, min(region.right, region.x + 60), 3):
                await pilot.click(offset=(x, y))
                if app.screen is not widget.screen:
                    return


def _untouched(ts: Path, before: bytes) -> None:
    assert not Path(VICTIM).exists(), "a click in data wrote a file"
    assert ts.read_bytes() == before, "a click in data saved the test set"


async def test_edit_screens_show_data_as_text(hostile):
    ts, run = hostile
    before = ts.read_bytes()
    app = make_app(ts, run, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.load_error is None
        cases = app.screen
        _check(app, "cases", ["m[/]x", "[b]x[/b]", "t[a=\"].yaml"])
        await _click_everything(app, pilot)
        await pilot.press("slash", "[", "/")  # the filter: a lone [/ must not crash
        await settle(app, pilot)
        _check(app, "cases, filtered", ["[/"])
        await pilot.press("escape")
        for cid in IDS:
            cases.table.move_to(cid)
            await pilot.press("d")  # a toast naming the new id
            await settle(app, pilot)
            _check(app, f"duplicated {cid!r}")
            await pilot.press("ctrl+z")
            await settle(app, pilot)
            app.open_editor(cid)
            await settle(app, pilot)
            _check(app, f"editor {cid!r}")
            if cid == IDS[0]:  # the id whose link would write a file
                await _click_everything(app, pilot)
            await pilot.press("escape")
            await settle(app, pilot)
            app.open_picker(cid)
            await settle(app, pilot)
            _check(app, f"picker {cid!r}", ["h[/]1"])
            await pilot.press("escape")
            await settle(app, pilot)
        app.open_stale()
        await settle(app, pilot)
        _check(app, "stale review")
        await pilot.press("escape")
        app.open_export()
        await settle(app, pilot)
        _check(app, "export")
        await pilot.press("escape")
        await settle(app, pilot)
        _untouched(ts, before)


async def test_triage_screens_show_data_as_text(hostile, monkeypatch):
    ts, run = hostile
    monkeypatch.setenv("RAGTRIAGE_GRADER", "tester")
    before = ts.read_bytes()
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        triage = app.screen
        _check(app, "triage", ["m[/]x"])
        await _click_everything(app, pilot)
        await pilot.press("i")  # the summary (checked above) off: the answer fits under the chunks
        await settle(app, pilot)
        for cid in IDS:
            triage.table.move_to(cid)
            await settle(app, pilot)
            _check(app, f"triage detail {cid!r}", ["[entrega-1]", "[b]x[/b]"])
            await pilot.press("o")  # the review note
            await settle(app, pilot)
            _check(app, f"note {cid!r}")
            if cid == IDS[0]:  # the id whose link would write a file
                await _click_everything(app, pilot)
            await pilot.press("escape")
            await pilot.press("m")  # must contain
            await settle(app, pilot)
            _check(app, f"must contain {cid!r}", ["[entrega-1]"])
            if cid == IDS[0]:  # the id whose link would write a file
                await _click_everything(app, pilot)
            await pilot.press("escape")
            await pilot.press("v")  # reviewed: a toast with the id
            await settle(app, pilot)
            _check(app, f"reviewed {cid!r}")
        app.open_grading()
        await settle(app, pilot)
        # the answer graded is the answer scored: its citation is shown
        _check(app, "grading", ["Cuesta 4 € por envío. [entrega-1] [/]"])
        await _click_everything(app, pilot)
        _untouched(ts, before)


def test_visible_forms():
    from rich.text import Text

    from ragtriage.tui.shown import masked, shown, shown_text

    assert shown("a\x1b[2Jb\u202ec\nd") == "a\\x1b[2Jb\\u202ec\nd"
    assert masked("a\x1bb\x9b") == "a␛b�"
    t = Text("x\x1by", style="bold")
    t.append("\x9bz", style="red")
    out = shown_text(t)
    assert out.plain == "x\\x1by\\x9bz" and not UNSAFE.search(out.plain)
    assert {str(s.style) for s in out.spans} >= {"red"}


def _copy_shop(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    return tmp_path / "shop-es.yaml"
