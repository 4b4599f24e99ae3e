"""The Triage screen's Textual-free parts, each alone: which cases to recompute after a
change (triage_sync), a run started from the app (triage_run), the summary pane's numbers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.core.evaluate import evaluate
from ragtriage.tui.session import Session
from ragtriage.tui.triage_run import RunController
from ragtriage.tui.triage_state import Sidecar, TriageState, load_triage
from ragtriage.tui.triage_sync import RunSync, rescore, rescore_all
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
    assert RunSync().first(session, meta, side) == []
    side.rerun["x"] = {"id": "x"}
    assert RunSync().first(session, meta, side) == ["x"]
    session.update_case(session.doc.cases[0].id, notes="changed outside triage")
    assert RunSync().first(session, meta, Sidecar.load(run_path)) is None


def test_changed_names_the_edited_cases_and_all_after_an_undo(shop):
    ts, *_ = shop
    session = _session(ts)
    sync = RunSync()
    sync.mark(session)
    assert sync.changed(session) == []
    first, second = (c.id for c in session.doc.cases[:2])
    session.update_case(first, notes="n")
    assert sync.changed(session) == [first]
    session.update_case(second, id="garantía-1")
    assert sync.changed(session) == sorted([second, "garantía-1"])
    session.undo()
    assert sync.changed(session) is None
    session.save()
    assert sync.changed(session) == []  # a save cleared the log: nothing changed


def test_rescore_moves_a_relabelled_case_and_notes_it(shop):
    ts, run_path, run = shop
    _meta, _summary, state, side = load_triage(run_path)
    session = _session(ts)
    rec = next(r for r in run.cases if r["expected"])
    session.update_case(rec["id"], unanswerable=True, expected=None)
    assert rescore(state, [rec["id"]], session.doc, side) == 1
    assert state.record(rec["id"])["reason"] != rec["reason"]
    assert rec["id"] in side.rescored
    again = rescore_all(list(state.records), session.doc, state.k)
    assert again == []  # everything is up to date now


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
