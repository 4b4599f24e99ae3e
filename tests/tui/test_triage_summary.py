"""The triage summary (i) with real keys: every rate with the 95 % interval ``ragtriage run``
prints, the slices per tag and per topic, the judge's κ with its interval, the rule of a
CI bar and the corrected rates, the whole summary on the screen (I) and scrolled with
J / K at 80x24, tags shown as text; and N in the grading queue."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragtriage.commands.run_stats import intervals_of
from ragtriage.core.document import TestSetDocument
from ragtriage.core.evaluate import evaluate
from ragtriage.core.judge import corrected_rates
from ragtriage.core.rates import slices
from ragtriage.core.summary_panel import cell
from ragtriage.tui import make_app
from ragtriage.tui.grading import grading_queue, narrowest_queue
from ragtriage.tui.screens.grading import GradingScreen
from tests.tui.conftest import settle, text_of
from tests.tui.test_judge_triage import judged_run  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[2]
LABELS = {
    "hit": "hit@3",
    "recall": "recall@3",
    "mrr": "mrr@3",
    "precision": "precision@3",
    "accuracy": "correct",
}


@pytest.fixture
def shop(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    ts = tmp_path / "shop-es.yaml"
    text = ts.read_text("utf-8").replace("tags: [pagos]", "tags: ['[bold red]pagos[/]']")
    ts.write_text(text, "utf-8")
    run = evaluate(ts, "builtin", out=tmp_path / "run.jsonl")
    return ts, tmp_path / "run.jsonl", run


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_summary_has_the_intervals_of_run_and_the_slices_and_fits(shop, size):
    ts, run_path, run = shop
    doc = TestSetDocument.load(ts)
    intervals, labels, how = intervals_of(doc, run.cases, "doc")  # what `ragtriage run` prints
    app = make_app(ts, run_path, mode="triage", recovery=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = app.screen
        shown = text_of(screen.query_one("#triage-summary"))
        for m, iv in intervals.items():
            assert cell(LABELS.get(m, m.replace("_", " ")), run.summary[m], iv) in shown, m
        assert f"95 % intervals; {how}" in shown
        tags_of = {c.id: list(c.tags) for c in doc.cases}
        for by, got in (
            ("tag", slices(run.cases, "tag", tags_of, labels)),
            ("topic", slices(run.cases, "topic", None, labels)),
        ):
            assert f"by {by} (95 % intervals" in shown
            for s in got:
                assert f"  {s.name}  n {s.n}" in shown, s.name
                for m in ("pass", "supported"):
                    assert cell(m, s.rates[m], s.intervals[m]) in shown
        assert "[bold red]pagos[/]  n 1" in shown  # a tag is shown as text, never as markup
        prose = f"95 % intervals; {how}"  # a sentence, wrapped by the pane; every figure's line fits 80
        assert max(len(line) for line in shown.splitlines() if line != prose) <= 78

        pane = screen.query_one("#triage-summary-pane")
        assert pane.size.height <= size[1] // 2  # a pane under the cases, not the whole screen
        assert pane.virtual_size.height > pane.size.height  # more than it shows: it scrolls
        await pilot.press("I")
        await settle(app, pilot)
        assert pane.has_class("-full") and not screen.query_one("#triage-main").display
        assert pane.size.height > size[1] // 2
        await pilot.press("J", "J")
        await settle(app, pilot)
        assert pane.scroll_y == 6  # J scrolls the summary now, 3 lines a key
        await pilot.press("u", "a")  # nothing acts on a case the screen does not show
        await settle(app, pilot)
        assert not app.session.dirty and type(app.screen).__name__ == "TriageScreen"
        await pilot.press("escape")  # back to the cases
        await settle(app, pilot)
        assert not pane.has_class("-full") and screen.query_one("#triage-main").display
        await pilot.press("I")
        await settle(app, pilot)
        await pilot.press("I")
        await settle(app, pilot)
        assert not pane.has_class("-full") and screen.query_one("#triage-main").display
        assert pane.scroll_y == 0
        await pilot.press("i")
        assert not pane.display
        await pilot.press("I")  # from hidden: in full
        assert pane.display and pane.has_class("-full")
        await pilot.press("i")  # hides it, and the cases come back
        assert not pane.display and screen.query_one("#triage-main").display


async def test_the_judge_in_the_summary_and_narrowest_first_in_the_queue(judged_run):  # noqa: F811
    ts, run_path, run = judged_run
    app = make_app(ts, run_path, mode="triage", recovery=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        shown = text_of(screen.query_one("#triage-summary"))
        assert "no grades yet: g grades answers blind" in shown
        session = app.run_session
        await pilot.press("g")
        await settle(app, pilot)
        grading = app.screen
        assert isinstance(grading, GradingScreen)
        seed = run_path.name
        assert grading.queue == grading_queue(session.state.records, session.grades, seed)
        await pilot.press("N")
        await settle(app, pilot)
        assert "narrowest first" in text_of(grading.query_one("#grading-status"))
        expected = narrowest_queue(session.state.records, session.grades, seed)
        assert grading.queue == expected and grading.current == expected[0]
        assert expected != grading_queue(session.state.records, session.grades, seed)
        for _ in range(3):
            before = grading.current
            await pilot.press("y", "y")
            await settle(app, pilot)
            assert session.grade_of(before) is not None
            again = narrowest_queue(session.state.records, session.grades, seed)
            assert grading.current == again[0]  # ordered again after the grade
        await pilot.press("N")
        await settle(app, pilot)
        assert "narrowest first" not in text_of(grading.query_one("#grading-status"))
        assert grading.queue == grading_queue(session.state.records, session.grades, seed)
        await pilot.press("escape")
        await settle(app, pilot)
        shown = text_of(screen.query_one("#triage-summary"))
        assert "a CI bar needs κ's lower bound ≥ 0.6 on ≥ 30 graded" in shown
        assert "supported n 3 · agreement" in shown and "bar refused" in shown
        est = corrected_rates(list(session.state.records), session.grades.table)["supported"]
        iv = est.interval
        assert est.graded == 3 and iv.hi - iv.lo > 0.2  # one answer the judge said no to, not graded: wide
        assert est.estimate is None  # its error there is not measured: unknown, never the judge's word
        line = f"    judge {est.judge_rate:.3f} → corrected unknown, within [{iv.lo:.2f}, {iv.hi:.2f}]"
        assert line + " · stratified PPI, 3 graded" in shown
        assert "20% of the answers under a verdict with < 2 grades: any rate there" in shown


async def test_a_hidden_summary_is_not_recomputed_until_it_is_shown(shop):
    """At 100k cases a summary pass takes seconds and competes with every key: while `i`
    hides it, a change only marks it due; showing it again computes it once."""
    from ragtriage.tui.widgets.triage_summary import TriageSummary

    ts, run_path, _ = shop
    app = make_app(ts, run_path, mode="triage", recovery=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        asked = []
        summary = screen.query_one(TriageSummary)
        real = summary.request
        summary.request = lambda *a, **k: (asked.append(1), real(*a, **k))[1]
        await pilot.press("i")  # hide
        await settle(app, pilot)
        assert not screen.summary_pane.display
        screen.refresh_summary()  # what a relabel or a grade asks for
        assert asked == [] and screen._summary_due
        await pilot.press("i")  # show again: computed now, once
        await settle(app, pilot)
        assert screen.summary_pane.display and asked == [1] and not screen._summary_due


def _shown_corrected(est: dict) -> str:
    """The app's line for a corrected rate of ``ragtriage judge --json``."""
    iv, method = est["interval"], est["interval"]["method"].partition("; ")[0]
    point = "unknown, within" if est["estimate"] is None else f"{est['estimate']:.3f}"
    return (
        f"    judge {est['judge_rate']:.3f} → corrected {point} [{iv['lo']:.2f}, {iv['hi']:.2f}]"
        f" · {method}, {est['graded']} graded"
    )


async def test_the_app_shows_the_corrected_rates_of_ragtriage_judge(judged_run, tmp_path):  # noqa: F811
    """One estimator: on the same run and grades the app's summary shows the corrected rate and
    interval that ``ragtriage judge --json`` writes (both stratified PPI, not PPI++)."""
    import json

    from ragtriage import cli
    from ragtriage.core.judge.grades import append_grade, grades_path, make_grade

    ts, run_path, run = judged_run
    by_id = {r["id"]: r for r in run.cases}
    # not a uniform sample: the one answer the judge called unsupported, and three it did not,
    # one of them wrongly
    for cid, sup, cor in (
        ("precio-entrega", False, True),
        ("plazo-entrega", True, True),
        ("devolucion", False, False),
        ("tarjeta-rechazada", True, True),
    ):
        append_grade(grades_path(ts), make_grade(by_id[cid], sup, cor, "ana", "2026-01-01T00:00:00Z"))
    out = tmp_path / "cal.json"
    assert cli.main(["judge", str(ts), "--run", str(run_path), "--json", str(out)]) == 0
    cal = json.loads(out.read_text("utf-8"))["corrected"]
    assert cal["supported"]["interval"]["method"] == "stratified PPI"
    assert cal["supported"]["estimate"] == pytest.approx(0.2 * 0 + 0.8 * (1 - 1 / 3))  # 0.533
    assert cal["correct"]["estimate"] is not None
    app = make_app(ts, run_path, mode="triage", recovery=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        shown = text_of(app.screen.query_one("#triage-summary"))
        for q in ("supported", "correct"):
            assert _shown_corrected(cal[q]) in shown, (q, shown)


def _fresh_summary(screen) -> str:
    """The summary computed now, from scratch, for what the screen shows (as the pane's pass does)."""
    from ragtriage.tui.judge_panel import calibration_line
    from ragtriage.tui.widgets.triage_summary import builtin_answer_sweep, compute, panel_of, summary_text

    app, run, ctx = screen.rt, screen.rt.run_session, screen._summary_context()
    state = screen.state
    answers = builtin_answer_sweep(app.doc, app.corpus, run.system, len(state))
    summary, sweep = compute(state, run.stored_summary, answers)
    panel = panel_of(state, summary, ctx.cases, ctx.corpus, ctx.corpus_path)
    judge = calibration_line(list(state.records), dict(run.grades.table), ctx.min_kappa, ctx.min_grades)
    return summary_text(summary, state.k, sweep, panel, judge).plain


async def test_edits_in_a_burst_are_one_summary_pass_and_it_ends_up_exact(shop, monkeypatch):
    """The summary waits for the edits to settle (as it does from 5,000 cases: here forced on
    the small set), so a burst of relabels is one pass on the last edit's records, an
    overtaken pass shows nothing, and once settled the pane shows exactly a fresh computation."""
    from ragtriage.tui.widgets import triage_summary as ts_mod

    monkeypatch.setattr(ts_mod, "SETTLE_FROM", 0)
    monkeypatch.setattr(ts_mod, "SETTLE", 2.0)  # wide enough for three keys on a loaded machine
    monkeypatch.setattr(ts_mod, "SETTLE_MAX", 20.0)
    ts, run_path, _ = shop
    app = make_app(ts, run_path, mode="triage", recovery=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        summary = screen.query_one(ts_mod.TriageSummary)
        assert text_of(summary) == _fresh_summary(screen)
        passes, requests = [], []
        real_pass, real_request = summary._pass, summary.request
        summary._pass = lambda *a: (passes.append(a[0]), real_pass(*a))[1]
        summary.request = lambda *a, **k: (requests.append(1), real_request(*a, **k))[1]
        before = text_of(summary)
        for _ in range(3):  # three relabels: each case made unanswerable (or answerable again)
            await pilot.press("u", "j")
        assert len(requests) >= 3 and passes == []  # nothing computed while the edits come in
        assert text_of(summary) == before
        await settle(app, pilot)
        assert passes == [summary.generation]  # one pass, on the last request's inputs
        assert summary.shown_generation == summary.generation
        shown = text_of(summary)
        assert shown == _fresh_summary(screen)
        assert shown != before  # the edits moved the numbers

        # a pass overtaken by a newer request posts nothing; the newer one is what shows
        old = summary.generation
        screen.refresh_summary()
        assert summary.generation == old + 1
        real_pass(old, screen.state, None, None, {}, ts_mod.Context())
        await settle(app, pilot)
        assert summary.shown_generation == old + 1 and text_of(summary) == _fresh_summary(screen)
