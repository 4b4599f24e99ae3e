"""The judge in triage, driven with real keys: the "judge disagrees" group, grading as a
queue with the judge's verdict hidden until the grade is given, progress toward the
judge bar, the grader's name asked once and kept, glyphs on graded rows, undo, and the
calibration figures in the summary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from ragtriage.core.evaluate import evaluate
from ragtriage.core.judge import disagreements, judged
from ragtriage.tui import make_app
from ragtriage.tui.screens.grading import GradingScreen
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
def judged_run(tmp_path):
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
async def test_grading_is_a_blind_queue_with_progress_and_undo(judged_run, size, monkeypatch):
    ts, run_path, run = judged_run
    monkeypatch.delenv("RAGTRIAGE_GRADER")  # nobody known yet: the app asks once
    disagreeing = [r["id"] for r in run.cases if disagreements(r)]
    assert "precio-entrega" in disagreeing
    gradeable = [r["id"] for r in run.cases if judged(r)]
    app = make_app(ts, run_path, mode="triage", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = app.screen
        state = screen.state
        assert state.order[0] == JUDGE_DISAGREES
        assert [state.records[i]["id"] for i in state.groups[JUDGE_DISAGREES]] == disagreeing
        await _goto(pilot, screen, "precio-entrega")
        await settle(app, pilot)
        detail = text_of(screen.query_one("#triage-detail"))
        assert "verdict hidden until the answer is graded" in detail  # blind: nothing of the judge
        assert "el precio no sale de las fuentes" not in detail and "judge  supported" not in detail

        await pilot.press("g")
        await settle(app, pilot)
        grading = app.screen
        assert isinstance(grading, GradingScreen)
        first = grading.current
        assert first in disagreeing  # ungraded disagreements first
        assert grading.queue[: len(disagreeing)] == disagreeing and sorted(grading.queue) == sorted(gradeable)
        status = text_of(grading.query_one("#grading-status"))
        assert "0 / 30 toward a judge bar" in status and f"{len(gradeable)} to grade" in status
        shown = text_of(grading.query_one("#grading-text"))
        rec = state.record(first)
        assert str(rec["question"]) in shown and "the chunks the model saw" in shown
        for cid in rec["prompt_ids"]:  # every chunk the model saw, with its text
            assert cid in shown and app.corpus[cid].text.split()[0] in shown
        assert "judge" not in shown and "grounding" not in shown and "supported-correct" not in shown

        await pilot.press("n")
        assert "supported ✗ no — correct" in text_of(grading.query_one("#grading-ask"))
        await pilot.press("y")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "GraderDialog"  # the name, asked once
        await pilot.press("ctrl+u", *"ana", "enter")
        await settle(app, pilot)
        grades = ts.with_name("shop-es.grades.jsonl")
        lines = [orjson.loads(x) for x in grades.read_bytes().splitlines()]
        assert [(g["case"], g["supported"], g["correct"], g["by"]) for g in lines] == [
            (first, False, True, "ana")
        ]
        from ragtriage.core.userconfig import config_path

        assert json.loads(config_path().read_text("utf-8")) == {"grader": "ana"}  # kept for next time
        assert app.screen is grading and grading.current != first  # on to the next by itself
        last = text_of(grading.query_one("#grading-last"))
        assert f"{first}: you said supported ✗ no · correct ✓ yes — the judge: supported" in last
        assert "1 / 30 toward a judge bar" in text_of(grading.query_one("#grading-status"))

        second = grading.current
        await pilot.press("y", "s")  # no name asked again
        await settle(app, pilot)
        assert len(grades.read_bytes().splitlines()) == 2
        await pilot.press("backspace")  # the last grade taken back
        await settle(app, pilot)
        assert len(grades.read_bytes().splitlines()) == 1 and grading.current == second

        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is screen
        await _goto(pilot, screen, first)
        await settle(app, pilot)
        row = screen.table.render_line(screen.table.cursor - int(screen.table.scroll_offset.y)).text
        assert "◆ graded" in row
        detail = text_of(screen.query_one("#triage-detail"))
        assert "graded supported ✗ no · correct ✓ yes  by ana" in detail
        if first == "precio-entrega":  # graded now: the judge's verdict shows beside it
            assert "el precio no sale de las fuentes" in detail
        summary = text_of(screen.query_one("#triage-summary"))
        assert "judge vs grades" in summary and "supported n 1" in summary

        await pilot.press("g")  # left and resumed: the first answer still without a grade
        await settle(app, pilot)
        assert app.screen.current == second


async def test_the_queue_says_when_every_answer_is_graded(judged_run):
    ts, run_path, run = judged_run
    app = make_app(ts, run_path, mode="triage", recovery=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("g")
        await settle(app, pilot)
        grading = app.screen
        for _ in range(len(grading.queue)):
            await pilot.press("y", "y")
            await settle(app, pilot)
        assert "Every answer of this run has a grade" in text_of(grading.query_one("#grading-text"))
        n = sum(1 for r in run.cases if judged(r))
        assert f"{n} / 30 toward a judge bar" in text_of(grading.query_one("#grading-status"))
        assert len(ts.with_name("shop-es.grades.jsonl").read_bytes().splitlines()) == n
    from ragtriage.core.userconfig import read_config

    assert read_config() == {}  # $RAGTRIAGE_GRADER named the grader: nothing asked, nothing kept
