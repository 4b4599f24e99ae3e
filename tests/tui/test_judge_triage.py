"""The judge in triage, driven with real keys: the "judge disagrees" group, the
verdict beside the deterministic result, grading with g (shown, undoable) and
the calibration figures in the summary."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from ragtriage.core.evaluate import evaluate
from ragtriage.core.judge import disagreements
from ragtriage.tui import make_app
from ragtriage.tui.triage_state import JUDGE_DISAGREES
from tests.judgekit import FakeModel, verdict
from tests.tui.conftest import settle, text_of

ROOT = Path(__file__).resolve().parents[2]


def _script(req):
    user = req["body"]["messages"][1]["content"]
    question = next(line for line in user.splitlines() if line.startswith("Pregunta:"))
    if "oficina" in question:  # precio-entrega: the grounding check says supported, the judge not
        return verdict(False, True, "el precio no sale de las fuentes")
    return verdict(True, None if "Referencia" not in user and "debe decir" not in user else True, "bien")


@pytest.fixture
def judged(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    ts = tmp_path / "shop-es.yaml"
    with FakeModel(_script) as m:
        run = evaluate(ts, "builtin", out=tmp_path / "run.jsonl", judge=m.spec())
    return ts, tmp_path / "run.jsonl", run


async def _goto(pilot, screen, case_id: str) -> None:
    screen.table.action_first()
    for _ in range(len(screen.state) + 2):
        if screen.table.current_id == case_id:
            return
        await pilot.press("j")
    raise AssertionError(f"{case_id} not reached")


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_judge_disagrees_group_grading_undo_and_calibration(judged, size):
    ts, run_path, run = judged
    disagreeing = [r["id"] for r in run.cases if disagreements(r)]
    # precio-entrega on supported; plazo-entrega and tarjeta-rechazada: must-contain says wrong, the judge right
    assert disagreeing == ["precio-entrega", "plazo-entrega", "tarjeta-rechazada"]
    app = make_app(ts, run_path, mode="triage", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = app.screen
        state = screen.state
        assert state.order[0] == JUDGE_DISAGREES
        assert [state.records[i]["id"] for i in state.groups[JUDGE_DISAGREES]] == disagreeing
        assert len(state) == len(run.cases)  # listed once: under the group, not also under its reason
        await _goto(pilot, screen, "precio-entrega")
        detail = text_of(screen.query_one("#triage-detail"))
        assert "supported-correct" in detail  # the deterministic result stands beside the judge
        assert "judge  supported ✗ no" in detail and "el precio no sale de las fuentes" in detail
        assert "⚖ disagrees with the grounding check" in detail
        assert "not graded" in detail
        grades = ts.with_name("shop-es.grades.jsonl")
        assert not grades.exists()
        # g: supported no, correct yes
        await pilot.press("g")
        await pilot.pause()
        await pilot.press("n", "y")
        await settle(app, pilot)
        lines = [orjson.loads(x) for x in grades.read_bytes().splitlines()]
        assert len(lines) == 1
        assert (lines[0]["case"], lines[0]["supported"], lines[0]["correct"]) == (
            "precio-entrega",
            False,
            True,
        )
        detail = text_of(screen.query_one("#triage-detail"))
        assert "graded supported ✗ no · correct ✓ yes" in detail
        summary = text_of(screen.query_one("#triage-summary"))
        assert "judge vs grades" in summary and "supported n 1" in summary
        # grade again (the last grade of the same answer wins), then undo it: the first grade is back
        await pilot.press("g")
        await pilot.pause()
        await pilot.press("y", "s")
        await settle(app, pilot)
        assert "graded supported ✓ yes · correct — n/a" in text_of(screen.query_one("#triage-detail"))
        await pilot.press("g")
        await pilot.pause()
        await pilot.press("u")
        await settle(app, pilot)
        assert len(grades.read_bytes().splitlines()) == 1
        assert "graded supported ✗ no · correct ✓ yes" in text_of(screen.query_one("#triage-detail"))
        # escape cancels: nothing written
        await pilot.press("g")
        await pilot.pause()
        await pilot.press("escape")
        await settle(app, pilot)
        assert len(grades.read_bytes().splitlines()) == 1


async def test_g_on_an_abstention_says_there_is_nothing_to_grade(judged):
    ts, run_path, run = judged
    app = make_app(ts, run_path, mode="triage", recovery=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await _goto(pilot, screen, "domingo")
        await pilot.press("g")
        await settle(app, pilot)
        assert app.screen is screen  # no dialog
        assert not ts.with_name("shop-es.grades.jsonl").exists()
