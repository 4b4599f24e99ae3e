"""Issue 19, the judge's text in the app: a judge model's reason and error message are
text from another system and are shown as text — in the grading queue once the grade is
given, in the Triage detail and in the summary's judge block — with no control or bidi
character painted and no click action from data."""

from __future__ import annotations

import json

from ragtriage.tui import make_app
from tests.hostile.test_app_text import (
    ESCAPES,
    IDS,
    MARKUP,
    SIZE,
    _check,
    _untouched,
    hostile,  # noqa: F401  (the fixture)
)
from tests.tui.conftest import settle

REASON = "Razón [entrega-1] " + MARKUP + " " + ESCAPES
ERROR = "judge said: " + MARKUP + " " + ESCAPES


def _judged(run):
    """The hostile run with a judge verdict on every answer (one an error), as `ragtriage
    judge` leaves it: its reason and error carry markup and escapes."""
    out = []
    for i, line in enumerate(run.read_text(encoding="utf-8").splitlines()):
        rec = json.loads(line)
        if rec.get("type") == "case":
            rec["judge"] = (
                {"error": ERROR}
                if i == 2
                else {"supported": i % 2 == 0, "correct": i % 3 == 0, "reason": REASON, "model": "m[b]x"}
            )
        out.append(json.dumps(rec, ensure_ascii=False))
    run.write_text("\n".join(out) + "\n", encoding="utf-8")


async def test_the_judge_s_reason_and_error_are_shown_as_text(hostile, monkeypatch):  # noqa: F811
    ts, run = hostile
    _judged(run)
    monkeypatch.setenv("RAGTRIAGE_GRADER", "t[b]er")
    before = ts.read_bytes()
    app = make_app(ts, run, mode="triage", recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        triage = app.screen
        _check(app, "triage with a judged run")  # the summary's judge block is open
        await pilot.press("g")
        await settle(app, pilot)
        _check(app, "grading, before the grade")
        for _ in range(3):  # three answers graded: their verdicts are shown after the grade
            await pilot.press("y")
            await settle(app, pilot)
            await pilot.press("n")
            await settle(app, pilot)
            _check(app, "grading, after a grade")
            if app.screen is triage:
                break
        if app.screen is not triage:
            await pilot.press("escape")
            await settle(app, pilot)
        await pilot.press("i")  # the summary off: the detail shows the whole verdict
        await settle(app, pilot)
        shown_reason = shown_error = clicked = False
        for cid in IDS:
            assert triage.table.move_to(cid) and triage.table.current_id == cid
            await settle(app, pilot)
            triage.query_one("#triage-case").scroll_end(animate=False)  # the judge is last
            await settle(app, pilot)
            text = " ".join(_check(app, f"triage detail {cid!r}").split())
            shown_reason |= "Razón [entrega-1] [b]x[/b] [/]" in text
            shown_error |= "judge said: [b]x[/b]" in text
            if shown_reason and not clicked:  # a link in the judge's reason would act
                pane = triage.query_one("#triage-case").region
                for y in range(max(pane.y, pane.bottom - 8), pane.bottom):  # the judge's lines
                    for x in range(pane.x, min(pane.right, pane.x + 60), 5):
                        await pilot.click(offset=(x, y))
                _untouched(ts, before)
                clicked = True
        assert shown_reason, "no graded answer showed the judge's reason"
        assert shown_error, "the judge's error was not shown"
        await pilot.press("i")
        await settle(app, pilot)
        _check(app, "summary with κ from the grades")
    _untouched(ts, before)
