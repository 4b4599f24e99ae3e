"""The Triage screen's plain data: grouping, recompute after a relabel, sidecar,
sweep from stored rankings, the run's test set. No terminal needed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragtriage.core.corpus import load_corpus
from ragtriage.core.diagnosis import TRIAGE_ORDER
from ragtriage.core.document import TestSetDocument
from ragtriage.core.errors import InputError
from ragtriage.core.evaluate import evaluate
from ragtriage.core.runfile import read_meta, resolve_testset
from ragtriage.core.scoring import rescore
from ragtriage.tui.triage_state import (
    Sidecar,
    TriageState,
    relabel_record,
    retrieval_sweep,
    sidecar_path,
    stream_run,
)
from ragtriage.tui.triage_view import answer_text, describe, expected_line

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def shop_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("shop")
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, d / name)
    run = evaluate(d / "shop-es.yaml", "builtin", out=d / "run.jsonl")
    return d / "shop-es.yaml", d / "run.jsonl", run


def relabels(case, rec):
    """A few realistic relabels of one case."""
    out = [dict(unanswerable=True, expected=None), dict(must_contain=["días"])]
    for cid in rec["ranking"][:2]:
        if cid in case.expected:
            continue
        out.append(dict(expected=list(case.expected) + [cid], unanswerable=None))
        out.append(dict(expected=[cid], unanswerable=None))
    if case.unanswerable:
        out.append(dict(unanswerable=None))  # -> unlabelled
    return out


def test_relabel_record_equals_a_full_rescore_with_the_chunk_texts(shop_run):
    ts, _run, run = shop_run
    corpus = load_corpus(ts.parent / "shop-es.chunks.jsonl")
    lookup = lambda cid: corpus[cid].text if cid in corpus else None  # noqa: E731
    checked = 0
    for rec in run.cases:
        doc = TestSetDocument.load(ts)
        for fields in relabels(doc.case(rec["id"]), rec):
            doc = TestSetDocument.load(ts)
            case = doc.update_case(rec["id"], **fields)
            mine = relabel_record(rec, case, 3, doc.settings)
            full = rescore(rec, case, 3, lookup, doc.settings)
            assert mine == full, (rec["id"], fields)
            checked += 1
    assert checked >= 25


def test_relabel_keeps_an_external_verdict_and_an_error():
    from ragtriage.core.schema import Case, Settings

    settings = Settings(language="es")
    case = Case(id="c", question="q", expected=("a",))
    rec = {
        "type": "case",
        "id": "c",
        "question": "q",
        "expected": ["b"],
        "ranking": ["a"],
        "answer": "sí [a]",
        "external_supported": False,
        "supported": False,
        "why": "judged unsupported",
        "reason": "retrieval-miss",
    }
    new = relabel_record(rec, case, 3, settings)
    assert new["hit"] and new["supported"] is False and new["external_supported"] is False
    assert new["reason"] == "unsupported-answer"  # found and correct (no must_contain), judged unsupported
    err = dict(rec, error="timeout", why="error: timeout", reason="error")
    err.pop("external_supported")
    new = relabel_record(err, case, 3, settings)
    assert new["reason"] == "error" and new["why"] == "error: timeout"


def _records(reasons):
    return [{"id": f"c{i}", "reason": r} for i, r in enumerate(reasons)]


def test_state_groups_in_triage_order_and_moves_a_case():
    reasons = [
        "supported-correct",
        "retrieval-miss",
        "wrong-answer",
        "retrieval-miss",
        "appropriate-abstention",
    ]
    state = TriageState(_records(reasons))
    assert list(state.counts()) == [r for r in TRIAGE_ORDER if r in reasons]
    assert state.counts()["retrieval-miss"] == 2
    lines = state.lines()
    assert lines[0] == ("retrieval-miss", -1) and lines[1:3] == [("retrieval-miss", 1), ("retrieval-miss", 3)]
    for rec in state.records:
        at = state.line_of(rec["id"])
        assert state.records[lines[at][1]]["id"] == rec["id"]
    old, new = state.replace({"id": "c1", "reason": "supported-correct"})
    assert (old, new) == ("retrieval-miss", "supported-correct")
    assert state.counts()["retrieval-miss"] == 1 and state.counts()["supported-correct"] == 2
    assert state.groups["supported-correct"] == [0, 1]  # run order kept inside a group
    state.replace({"id": "c2", "reason": "supported-correct"})
    assert "wrong-answer" not in state.counts()  # an emptied group disappears
    lines = state.lines()
    assert [r for r, i in lines if i < 0] == list(state.counts())
    assert state.failures() == 1
    state.add({"id": "new", "reason": "unlabelled"})
    assert state.counts()["unlabelled"] == 1 and state.line_of("new") is not None


def test_sidecar_round_trip_is_atomic_and_carried_to_a_new_run(tmp_path):
    run = tmp_path / "r.jsonl"
    side = Sidecar.load(run)
    assert side.cases == {}
    side.set_note("garantía", "dos chunks")
    side.set_reviewed("garantía", "retrieval-miss")
    side.rerun["garantía"] = {"id": "garantía", "reason": "supported-correct"}
    side.save()
    assert sidecar_path(run) == tmp_path / "r.triage.json"
    assert [p.name for p in tmp_path.iterdir()] == ["r.triage.json"]  # no temp file left
    again = Sidecar.load(run)
    assert again.note("garantía") == "dos chunks" and again.reviewed("garantía")["reason"] == "retrieval-miss"
    assert again.rerun["garantía"]["reason"] == "supported-correct"
    new = again.carried_to(tmp_path / "r2.jsonl")
    assert new.note("garantía") == "dos chunks" and not new.rerun
    again.set_note("garantía", "  ")
    again.set_reviewed("garantía", None, on=False)
    assert "garantía" not in again.cases
    (tmp_path / "bad.triage.json").write_text("{not json", "utf-8")
    assert Sidecar.load(tmp_path / "bad.jsonl").cases == {}


def test_retrieval_sweep_matches_the_run_at_its_k(shop_run):
    _ts, _run, run = shop_run
    rows = dict(retrieval_sweep(run.cases, [1, 2, 3]))
    assert rows[3] == pytest.approx(run.summary["hit"])
    assert rows[1] <= rows[2] <= rows[3]


def test_stream_run_hands_every_record_over_and_writes_the_run(shop_run, tmp_path):
    ts, _run, run = shop_run
    doc = TestSetDocument.load(ts)
    seen = []
    summary, interrupted = stream_run(doc, "builtin", 3, tmp_path / "new.jsonl", seen.append)
    assert not interrupted and len(seen) == 8
    assert summary == run.summary
    assert [r["reason"] for r in seen] == [r["reason"] for r in run.cases]


def test_the_runs_test_set_is_found_or_named(shop_run, tmp_path):
    ts, run, _ = shop_run
    meta = read_meta(run)
    assert resolve_testset(run, meta) == ts
    moved = tmp_path / "run.jsonl"
    shutil.copy(run, moved)
    shutil.copy(ts, tmp_path / ts.name)
    assert resolve_testset(moved, dict(meta, testset="elsewhere/" + ts.name)) == tmp_path / ts.name
    with pytest.raises(InputError) as e:
        resolve_testset(moved, dict(meta, testset="nowhere/none.yaml"))
    assert "--testset" in str(e.value.problems[0])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "case"}\n', "utf-8")
    with pytest.raises(InputError):
        read_meta(bad)


def test_case_view_words_and_marks():
    assert expected_line("devolver-1", ["a", "b", "c", "devolver-1"], 3) == (
        "expected devolver-1 at rank 4, outside k = 3",
        False,
    )
    assert expected_line("a", ["a"], 3) == ("expected a at rank 1, inside k = 3", True)
    t = answer_text("El dinero vuelve en 30 días. [devolver-2]", "number 30 missing from source")
    marked = [t.plain[s.start : s.end] for s in t.spans if "reverse" in str(s.style)]
    assert marked == ["30"]
    t = answer_text("Tarda dos días. [entrega-2]", "source outside prompt: entrega-2")
    marked = [t.plain[s.start : s.end] for s in t.spans if "reverse" in str(s.style)]
    assert marked == ["[entrega-2]"]
    rec = {
        "id": "q",
        "question": "?",
        "reason": "unsupported-answer",
        "ranking": ["x"],
        "scores": [0.5],
        "answer": "30 días [x]",
        "supported": False,
        "why": "number 30 missing from source",
        "correct": True,
        "expected": ["x"],
    }
    plain = describe(rec, 3).plain
    assert "✗ fail · unsupported-answer" in plain and "✗ unsupported: number 30 missing from source" in plain
    assert "look for 30 in the cited chunks" in plain and "★ expected" in plain


def test_retrieval_sweep_equals_the_metrics_at_every_k(shop_run):
    from ragtriage.core.metrics import at_k, first_positions, mean_or_none

    _ts, _run, run = shop_run
    recs = [dict(r) for r in run.cases]
    recs[0] = dict(recs[0], expected=["entrega-1", "pago-1"], expect="all")  # an expect-all case too
    scored = [r for r in recs if r["reason"] not in ("error", "unlabelled") and r["expected"]]
    pos = first_positions(
        [r["ranking"] for r in scored],
        [r["expected"] for r in scored],
        [r.get("expect", "any") for r in scored],
    )
    for k, hit in retrieval_sweep(recs, range(1, 6)):
        assert hit == pytest.approx(mean_or_none(at_k(pos, k)["hit"], pos.n_gold > 0))


def test_a_case_the_judge_disputes_is_found_on_its_own_line():
    """move_to / line_of a case listed under "judge disagrees" (not its reason): the line
    holds that case, not the one that happens to sit there in its reason's group."""
    records = _records(["wrong-answer"] * 5)
    for i in (1, 3):  # the judge says supported where the check said not
        records[i].update(supported=False, correct=False, judge={"supported": True, "correct": False})
    for i in (0, 2, 4):
        records[i].update(supported=False, correct=False, judge={"supported": False, "correct": False})
    state = TriageState(records)
    assert state.order == ["judge disagrees", "wrong-answer"]
    lines = state.lines()
    for rec in state.records:
        at = state.line_of(rec["id"])
        assert at is not None and state.records[lines[at][1]]["id"] == rec["id"], rec["id"]
