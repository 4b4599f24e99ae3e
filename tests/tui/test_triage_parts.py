"""The run side's Textual-free parts, each alone: the run session keeping a run's records
up to date edit by edit, which cases to recompute for a test set just opened (triage_sync),
a run started from the app (triage_run), the summary pane's numbers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.core.evaluate import evaluate
from ragtriage.tui.edits import EVERYTHING, UpdateCase
from ragtriage.tui.run_session import RecordsChanged, RunSession
from ragtriage.tui.session import Session
from ragtriage.tui.triage_run import RunController
from ragtriage.tui.triage_state import Sidecar, TriageState, load_triage
from ragtriage.tui.triage_sync import first_sync, rescore_all
from ragtriage.tui.widgets.triage_summary import compute, summary_text

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def shop(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    ts = tmp_path / "shop-es.yaml"
    run = evaluate(ts, "builtin", out=tmp_path / "run.jsonl")
    return ts, tmp_path / "run.jsonl", run


def _session(ts: Path) -> Session:
    return Session(TestSetDocument.load(ts, use_cache=False), recovery=False)


def test_first_sync_recomputes_nothing_on_the_runs_own_test_set_and_all_on_another(shop):
    ts, run_path, _run = shop
    meta, _summary, _state, side = load_triage(run_path)
    session = _session(ts)
    assert first_sync(session.doc, meta, side) == []
    side.rerun["x"] = {"id": "x"}  # type: ignore[typeddict-item]
    assert first_sync(session.doc, meta, side) == ["x"]
    session.apply(UpdateCase(session.doc.cases[0].id, {"notes": "changed outside triage"}))
    assert first_sync(session.doc, meta, Sidecar.load(run_path)) is None


def test_the_run_session_recomputes_only_the_cases_an_edit_touched(shop):
    ts, run_path, run = shop
    events: list = []
    rs = RunSession(ts, emit=events.append)
    rs.opened(run_path, RunSession.read(run_path))
    session = _session(ts)
    assert rs.catch_up(session) is None  # the run's own test set: nothing to recompute
    events.clear()
    rec = next(r for r in run.cases if r["expected"])
    change = session.apply(UpdateCase(rec["id"], {"unanswerable": True, "expected": None}))
    assert change.cases == {rec["id"]} and change.labels == set(rec["expected"])
    assert rs.changed(change, session) is None  # done at once, no worker
    assert rs.reason(rec["id"]) == "unanswerable-answered" != rec["reason"]
    assert events == [RecordsChanged(frozenset({rec["id"]}))]
    assert rec["id"] in rs.sidecar.rescored
    undone = session.undo()
    assert undone is not None and undone.cases == change.cases  # an undo names what it took back
    rs.changed(undone, session)
    assert rs.reason(rec["id"]) == rec["reason"]
    assert rescore_all(list(rs.state.records), session.doc, rs.k) == []  # everything is up to date


def test_a_reload_recomputes_every_case_in_a_worker_above_the_inline_limit(shop, monkeypatch):
    import ragtriage.tui.run_session as run_session

    ts, run_path, _run = shop
    rs = RunSession(ts)
    rs.opened(run_path, RunSession.read(run_path))
    monkeypatch.setattr(run_session, "RESCORE_INLINE", 2)
    session = _session(ts)
    session.apply(UpdateCase(session.doc.cases[0].id, {"question": "¿otra pregunta?"}))
    job = rs.catch_up(session)  # a test set changed outside triage: every case
    assert job is not None
    assert rs.changed(EVERYTHING, session) is None  # one full recompute at a time…
    again = rs.rescored(job.run(), session)
    assert again is not None  # …and the change made while it ran is the next one
    assert rs.rescored(again.run(), session) is None
    assert rs.state.record(session.doc.cases[0].id)["question"] == "¿otra pregunta?"


def test_run_controller_queues_every_record_and_writes_the_run(shop, tmp_path):
    ts, _run_path, run = shop
    doc = TestSetDocument.load(ts)
    woken = []
    ctl = RunController(doc, "builtin", 3, tmp_path / "new.jsonl", generation=4)
    outcome = ctl.run(lambda: woken.append(1))
    assert outcome.error is None and not outcome.interrupted
    assert outcome.summary == run.summary
    records = ctl.drain()
    assert [r["id"] for r in records] == [r["id"] for r in run.cases]
    assert ctl.drain() == [] and ctl.done == len(run.cases)
    assert woken, "the screen is woken at least once"
    assert (tmp_path / "new.jsonl").exists()


def test_a_cancelled_run_is_interrupted_and_a_bad_system_is_an_error_not_a_crash(shop, tmp_path):
    ts, *_ = shop
    doc = TestSetDocument.load(ts)
    ctl = RunController(doc, "builtin", 3, tmp_path / "cancelled.jsonl")
    ctl.stop()
    outcome = ctl.run()
    assert outcome.interrupted and outcome.summary is None and outcome.error is None
    bad = RunController(doc, "no-such-system:x", 3, tmp_path / "bad.jsonl")
    failed = bad.run()
    assert failed.error and failed.summary is None
    bad.forget_output()
    assert not (tmp_path / "bad.jsonl").exists()


def test_summary_numbers_are_the_runs_and_the_sweep_meets_it_at_its_k(shop):
    _ts, run_path, run = shop
    _meta, stored, state, _side = load_triage(run_path)
    summary, sweep = compute(state, stored)
    assert summary == stored
    assert sweep is not None
    at_k = next(row for row in sweep if row["k"] == state.k)
    assert at_k["hit"] == pytest.approx(run.summary["hit"])
    assert at_k["supported"] == run.summary["supported"]
    text = summary_text(summary, state.k, sweep).plain
    assert f"{run.summary['n']} cases" in text and "◀ run" in text
    fresh, _ = compute(TriageState(list(state.records), state.k), None)
    assert fresh["hit"] == pytest.approx(run.summary["hit"])
