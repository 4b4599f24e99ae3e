"""Run diff: per-case reason changes, metric deltas, different test-set versions, bad files."""

from __future__ import annotations

import json

import pytest

from ragtriage.core.errors import InputError
from ragtriage.core.rundiff import classify, diff_runs, render_markdown, render_text
from ragtriage.core.runfile import read_run
from tests.core.runkit import write_run


@pytest.mark.parametrize(
    "before, after, kind",
    [
        ("retrieval-miss", "supported-correct", "fixed"),
        ("unanswerable-answered", "appropriate-abstention", "fixed"),
        ("error", "supported-correct", "fixed"),
        ("supported-correct", "wrong-answer", "regressed"),
        ("appropriate-abstention", "unanswerable-answered", "regressed"),
        ("supported-correct", "error", "regressed"),
        ("retrieval-miss", "wrong-answer", "changed"),
        ("unlabelled", "supported-correct", "changed"),
        ("supported-correct", "unlabelled", "changed"),
        ("wrong-answer", "wrong-answer", None),
    ],
)
def test_classify(before, after, kind):
    assert classify(before, after) == kind


def test_diff_lists_exactly_the_changed_cases(tmp_path):
    a = write_run(
        tmp_path / "a.jsonl",
        [
            ("precio-entrega", "supported-correct"),
            ("plazo-entrega", "retrieval-miss"),
            ("devolución", "retrieval-miss"),
            ("garantía", "wrong-answer"),
            ("domingo", "appropriate-abstention"),
            ("viejo", "supported-correct"),
        ],
        summary={"hit": 0.5, "accuracy": 0.4, "tokens": 900, "mrr": None},
    )
    b = write_run(
        tmp_path / "b.jsonl",
        [
            ("precio-entrega", "unsupported-answer"),
            ("plazo-entrega", "supported-correct"),
            ("devolución", "wrong-answer"),
            ("garantía", "wrong-answer"),
            ("domingo", "appropriate-abstention"),
            ("nuevo", "retrieval-miss"),
        ],
        summary={"hit": 0.75, "accuracy": 0.4, "tokens": 1200, "mrr": 0.5},
    )
    d = diff_runs(read_run(a), read_run(b))
    assert [(c.id, c.kind) for c in d.changes] == [
        ("precio-entrega", "regressed"),
        ("plazo-entrega", "fixed"),
        ("devolución", "changed"),
        ("nuevo", "new"),
        ("viejo", "removed"),
    ]
    assert d.unchanged == 2
    assert d.metrics["hit"] == (0.5, 0.75, 0.25)
    assert d.metrics["accuracy"] == (0.4, 0.4, 0.0)
    assert d.metrics["tokens"] == (900, 1200, 300)
    assert d.metrics["mrr"] == (None, 0.5, None)
    assert "recall" not in d.metrics
    assert not d.testset_changed and d.notes == []
    js = d.to_dict()
    assert js["counts"] == {"regressed": 1, "fixed": 1, "changed": 1, "new": 1, "removed": 1, "unchanged": 2}
    assert js["reasons"]["retrieval-miss"] == {"a": 2, "b": 1, "delta": -1}
    assert js["reasons"]["unsupported-answer"] == {"a": 0, "b": 1, "delta": 1}
    assert js["cases"][0] == {
        "id": "precio-entrega",
        "from": "supported-correct",
        "to": "unsupported-answer",
        "kind": "regressed",
    }
    text = render_text(d)
    assert "precio-entrega  supported-correct → unsupported-answer" in text
    assert "1 regressed, 1 fixed, 1 changed, 1 new, 1 removed, 2 unchanged" in text
    assert "hit" in text and "+0.250" in text


def test_different_testset_versions_are_reported_not_crashed(tmp_path):
    a = write_run(tmp_path / "a.jsonl", [("q1", "retrieval-miss")], summary={"hit": 0.0})
    b = write_run(
        tmp_path / "b.jsonl",
        [("q1", "supported-correct")],
        summary={"hit": 1.0},
        meta={"testset_hash": "bbb", "k": 5},
    )
    d = diff_runs(read_run(a), read_run(b))
    assert d.testset_changed
    assert [c.kind for c in d.changes] == ["fixed"]
    assert any("different versions of the test set (aaa vs bbb)" in n for n in d.notes)
    assert any("k differs: 3 in run A, 5 in run B" in n for n in d.notes)
    assert d.to_dict()["testset_changed"] is True


def test_interrupted_run_without_summary(tmp_path):
    a = write_run(tmp_path / "a.jsonl", [("q1", "retrieval-miss")])
    b = write_run(tmp_path / "b.jsonl", [("q1", "retrieval-miss")], summary={"hit": 0.0})
    d = diff_runs(read_run(a), read_run(b))
    assert d.changes == [] and d.unchanged == 1
    assert d.metrics["hit"] == (None, 0.0, None)
    assert any("no summary line" in n for n in d.notes)
    assert "No case changed its reason." in render_text(d)


def test_markdown_snapshot(tmp_path):
    a = write_run(
        tmp_path / "a.jsonl",
        [("q|1", "supported-correct"), ("q2", "retrieval-miss")],
        summary={"hit": 0.5, "supported": 1.0},
    )
    b = write_run(
        tmp_path / "b.jsonl",
        [("q|1", "wrong-answer"), ("q2", "supported-correct")],
        summary={"hit": 1.0, "supported": 1.0},
    )
    md = render_markdown(diff_runs(read_run(a), read_run(b)))
    md = md.replace(str(tmp_path), "T")
    assert md == (
        "## ragtriage diff\n\n"
        "`T/a.jsonl` → `T/b.jsonl`\n\n"
        "**1 regressed, 1 fixed, 0 changed, 0 new, 0 removed, 0 unchanged**\n\n"
        "### ✗ Regressed (was good, now failing): 1\n\n"
        "| case | run A | run B |\n|---|---|---|\n"
        "| `q\\|1` | supported-correct | wrong-answer |\n\n"
        "### ✓ Fixed (was failing, now good): 1\n\n"
        "| case | run A | run B |\n|---|---|---|\n"
        "| `q2` | retrieval-miss | supported-correct |\n\n"
        "### Reasons\n\n"
        "| reason | A | B | Δ |\n|---|---:|---:|---:|\n"
        "| retrieval-miss | 1 | 0 | −1 |\n"
        "| wrong-answer | 0 | 1 | +1 |\n"
        "| supported-correct | 1 | 1 | 0 |\n\n"
        "### Metrics\n\n"
        "| metric | A | B | Δ |\n|---|---:|---:|---:|\n"
        "| hit | 0.500 | 1.000 | +0.500 |\n"
        "| supported | 1.000 | 1.000 | 0 |\n"
    )


@pytest.mark.parametrize(
    "content, line, message",
    [
        ('{"type": "case", "id": "q1", "reason": "x"}\n', 1, "first line must be the meta line"),
        ('{"type": "meta", "k": 3}\n{"type": "case", "id": "q1"\n\n', 2, "not valid JSON"),
        ('{"type": "meta", "k": 3}\n{"type": "case", "reason": "wrong-answer"}\n', 2, "id: is required"),
        ('{"type": "meta", "k": 3}\n[1, 2]\n', 2, "expected a JSON object"),
        ('{"type": "meta", "k": 3}\n{"type": "case", "id": "q1"}\n', 2, "reason: is required"),
        ('{"type": "meta", "k": 3}\n{"type": "bogus"}\n', 2, "unknown line type"),
        (
            '{"type": "meta", "k": 3}\n{"type": "case", "id": "q1", "reason": "x"}\n'
            '{"type": "case", "id": "q1", "reason": "x"}\n',
            3,
            "duplicate case (first at line 2)",
        ),
        ('', None, "empty run file"),
    ],
)
def test_bad_run_files_are_located(tmp_path, content, line, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_run(p)
    prob = e.value.problems[0]
    assert prob.file == str(p) and prob.line == line
    assert message in str(prob)


def test_missing_run_file(tmp_path):
    with pytest.raises(InputError, match="run file not found"):
        read_run(tmp_path / "nope.jsonl")


def test_cases_edited_between_the_runs_are_named(tmp_path):
    a = write_run(
        tmp_path / "a.jsonl", [("q1", "retrieval-miss"), ("q2", "wrong-answer")], meta={"testset_hash": "x"}
    )
    b = write_run(
        tmp_path / "b.jsonl",
        [("q1", "supported-correct"), ("q2", "wrong-answer")],
        meta={"testset_hash": "y"},
    )
    lines = a.read_text(encoding="utf-8").splitlines()
    recs = [json.loads(l) for l in lines]
    recs[1]["expected"] = ["old-chunk"]
    recs[2]["expected"] = ["c"]
    a.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    recs = [json.loads(l) for l in b.read_text(encoding="utf-8").splitlines()]
    recs[1]["expected"] = ["new-chunk"]
    recs[2]["expected"] = ["c"]
    recs[2]["expect"] = "any"
    b.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    d = diff_runs(read_run(a), read_run(b))
    assert d.edited == ["q1"]
    assert any("1 case(s) were edited between the runs (question or labels): q1" in n for n in d.notes)
    assert d.to_dict()["edited"] == ["q1"]


def test_run_meta_and_testset_from_core_runfile(tmp_path):
    """triage (and any tool) finds a run's test set without the app: core.runfile holds it."""
    from ragtriage.core.runfile import read_meta, resolve_testset

    run = tmp_path / "r.jsonl"
    run.write_text('{"type": "meta", "testset": "/elsewhere/ts.yaml", "k": 3}\n{"type": "case"}\n')
    meta = read_meta(run)
    assert meta["k"] == 3
    (tmp_path / "ts.yaml").write_text("cases: []\n")  # moved with its run: found beside it
    assert resolve_testset(run, meta) == tmp_path / "ts.yaml"
    with pytest.raises(InputError):
        resolve_testset(run, dict(meta, testset="nowhere/none.yaml"))


_META = '{"type": "meta", "testset": "ts.yaml", "k": 3}\n'


@pytest.mark.parametrize(
    "line, field",
    [
        ('{"type": "case", "id": "a", "reason": "x", "expected": 5}', "expected"),
        ('{"type": "case", "id": "a", "reason": "x", "ranking": [1, null, {}]}', "ranking"),
        ('{"type": "case", "id": "a", "reason": "x", "reasons": [1]}', "reasons"),
        ('{"type": "case", "id": "a", "reason": "x", "tokens": 1e30}', "tokens"),
        ('{"type": "case", "id": "a", "reason": "x", "answer": ["no"]}', "answer"),
    ],
)
def test_wrongly_typed_run_fields_are_located(tmp_path, line, field):
    """Issue 12 #13: each of these gave a traceback further on (gate, diff, triage)."""
    p = tmp_path / "run.jsonl"
    p.write_text(_META + line + "\n")
    with pytest.raises(InputError) as e:
        read_run(p)
    (problem,) = e.value.problems
    assert problem.line == 2 and problem.field == field and "must be" in problem.message


def test_wrongly_typed_meta_is_located(tmp_path):
    p = tmp_path / "run.jsonl"
    p.write_text('{"type": "meta", "testset": 5, "k": 3}\n')
    with pytest.raises(InputError) as e:
        read_run(p)
    assert e.value.problems[0].field == "testset"


def test_a_fifo_as_run_file_is_refused_not_waited_on(tmp_path):
    import os

    p = tmp_path / "run.jsonl"
    os.mkfifo(p)
    with pytest.raises(InputError) as e:
        read_run(p)
    assert "FIFO" in str(e.value.problems[0])


def test_read_meta_refuses_a_fifo(tmp_path):
    import os

    from ragtriage.core.runfile import read_meta

    p = tmp_path / "run.jsonl"
    os.mkfifo(p)
    with pytest.raises(InputError, match="FIFO"):
        read_meta(p)


def test_a_field_json_cannot_encode_is_written_as_text_not_a_crash(tmp_path):
    """Issue 12 #13: a python: system returning bytes, a set or a 70-bit integer crashed the run."""
    from ragtriage.core.runfile import RunWriter

    p = tmp_path / "run.jsonl"
    rec = {
        "type": "case",
        "id": "a",
        "reason": "x",
        "extra": {"blob": b"\xff", "s": {2, 1}, "big": 2**70, "o": object},
    }
    with RunWriter(p, {"type": "meta", "k": 3}) as w:
        w.write_case(rec)
    extra = read_run(p).cases[0]["extra"]
    assert extra["s"] == [1, 2] and extra["big"] == str(2**70) and extra["blob"] == "\ufffd"
    assert "object" in extra["o"]
