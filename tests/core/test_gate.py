"""The CI gate's core: bars, values at any k from stored rankings, and the reports."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from ragtriage.core.errors import InputError
from ragtriage.core.gate import (
    Bar,
    BarResult,
    CheckResult,
    collect_bars,
    failure_message,
    judge,
    measure,
    parse_min,
    render_junit,
    render_markdown,
    render_text,
)
from ragtriage.core.schema import Case, Settings


def rec(cid, reason, ranking=(), expected=(), expect="any", why="", **kw):
    return {
        "type": "case",
        "id": cid,
        "reason": reason,
        "ranking": list(ranking),
        "expected": list(expected),
        "expect": expect,
        "why": why,
        "question": f"question {cid}",
        **kw,
    }


@pytest.mark.parametrize(
    "spec, want",
    [
        ("hit@5=0.8", ("hit@5", 0.8)),
        (" accuracy = 0.7 ", ("accuracy", 0.7)),
        ("supported=90%", ("supported", 0.9)),
        ("mrr@10=1", ("mrr@10", 1.0)),
    ],
)
def test_parse_min(spec, want):
    assert parse_min(spec) == want


@pytest.mark.parametrize(
    "spec, message",
    [
        ("hit@5", "write METRIC=VALUE"),
        ("hti@3=0.5", "did you mean 'hit'"),
        (
            "accuracy@3=0.5",
            "only hit, recall, precision, mrr, doc_hit, doc_recall, doc_precision, doc_mrr take @k",
        ),
        ("hit=1.5", "between 0 and 1"),
        ("hit=lots", "'lots' is not a number"),
    ],
)
def test_parse_min_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_min(spec)


def test_min_adds_to_gates_and_replaces_the_same_metric():
    bars = collect_bars({"hit@3": 0.85, "supported": 0.9}, ["hit@3=0.5", "accuracy=0.7"])
    assert [(b.metric, b.minimum, b.source) for b in bars] == [
        ("supported", 0.9, "gates"),
        ("hit@3", 0.5, "--min"),
        ("accuracy", 0.7, "--min"),
    ]
    with pytest.raises(InputError) as e:
        collect_bars({}, ["nope=1", "hit=2"])
    assert [p.file for p in e.value.problems] == ["--min", "--min"]


def test_at_k_bars_come_from_the_stored_ranking():
    records = [
        rec("q1", "supported-correct", ["a", "x", "b"], ["a", "b"]),  # first expected at 1
        rec("q2", "retrieval-miss", ["x", "y", "z", "c"], ["c"]),  # at 4
        rec("q3", "wrong-answer", ["d", "d", "e"], ["e"]),  # duplicate keeps its slot: e at 3
        rec("q4", "appropriate-abstention", ["x"], []),  # unanswerable: left out
        rec("q5", "error", [], ["a"]),  # not scored: left out
        rec("q6", "unlabelled", ["a"], []),
    ]
    bars = collect_bars(
        {}, ["hit@1=0", "hit@3=0", "hit@4=0", "recall@2=0", "mrr@4=0", "precision@4=0", "accuracy=0.5"]
    )
    got = {b.bar.metric: b.value for b in measure(bars, records, {"accuracy": 0.25}, 3)}
    assert got["hit@1"] == pytest.approx(1 / 3)
    assert got["hit@3"] == pytest.approx(2 / 3)
    assert got["hit@4"] == pytest.approx(1.0)
    assert got["recall@2"] == pytest.approx((0.5 + 0 + 0) / 3)
    assert got["mrr@4"] == pytest.approx((1 + 1 / 4 + 1 / 3) / 3)
    assert got["precision@4"] == pytest.approx((2 / 4 + 1 / 4 + 1 / 4) / 3)
    assert got["accuracy"] == 0.25  # summary metrics come from the summary


def test_expect_all_at_k():
    records = [rec("q1", "retrieval-miss", ["a", "x", "b"], ["a", "b"], expect="all")]
    bars = collect_bars({}, ["hit@2=0", "hit@3=0"])
    assert [b.value for b in measure(bars, records, {}, 3)] == [0.0, 1.0]


def test_a_bar_passes_at_its_value_and_fails_below_or_without_data():
    bar = Bar("hit", "hit", None, 0.85, "--min")
    assert BarResult(bar, 0.85, 3).passed
    assert BarResult(bar, 0.85 - 1e-12, 3).passed  # float noise is not a miss
    assert not BarResult(bar, 0.84, 3).passed
    assert not BarResult(bar, None, 3).passed  # nothing measured (every case errored) never passes


def _doc(cases, gates=None, content_hash="h1"):
    return SimpleNamespace(
        path="testsets/t.yaml",
        cases=tuple(cases),
        settings=Settings(gates=gates or {}),
        content_hash=content_hash,
        case_lines=lambda: {c.id: 10 + i for i, c in enumerate(cases)},
    )


def _run(records, summary, k=3, testset_hash="h1"):
    return SimpleNamespace(
        meta={"type": "meta", "k": k, "testset_hash": testset_hash}, cases=records, summary=summary
    )


CASES = [
    Case(id="q1", question="one?", expected=("a",)),
    Case(id="q2", question="two?", expected=("b",)),
    Case(id="q3", question="three?", unanswerable=True),
]


def test_judge_uses_the_run_summary_and_finds_missing_cases():
    records = [rec("q1", "supported-correct", ["a"], ["a"]), rec("q2", "retrieval-miss", ["x"], ["b"])]
    res = judge(
        _doc(CASES), _run(records, {"n": 2, "hit": 0.5, "accuracy": 0.5}), collect_bars({"hit@3": 0.5}, [])
    )
    assert res.missing == ["q3"]
    assert not res.passed  # an incomplete run never passes the gate
    assert res.bars[0].value == 0.5
    assert res.case_lines == {"q1": 10, "q2": 11, "q3": 12}


def test_judge_rescores_a_run_made_on_another_version_of_the_test_set():
    # the run labelled q2 with chunk x; the test set now expects b, which the run ranked first
    records = [
        rec("q1", "supported-correct", ["a"], ["a"], answer="one [a]", abstained=False),
        rec("q2", "supported-correct", ["b"], ["x"], answer="two [b]", abstained=False),
        rec("q3", "appropriate-abstention", [], [], answer=None, unanswerable=True),
    ]
    run = _run(records, {"n": 3, "hit": 0.5}, testset_hash="old")
    res = judge(_doc(CASES), run, collect_bars({}, ["hit=1"]), chunk_text=lambda cid: "text")
    assert any("test set changed" in n for n in res.notes)
    assert res.summary["hit"] == 1.0 and res.passed
    assert [r["expected"] for r in res.records] == [["a"], ["b"], []]


def test_judge_notes_bars_deeper_than_the_stored_ranking():
    records = [
        rec("q1", "supported-correct", ["a"], ["a"]),
        rec("q2", "retrieval-miss", ["x", "y"], ["b"]),
        rec("q3", "appropriate-abstention", [], []),
    ]
    res = judge(_doc(CASES), _run(records, {"n": 3}, k=2), collect_bars({}, ["hit@5=0.5"]))
    assert any("at most 2 deep" in n for n in res.notes)


def _result(stale=(), bars=None):
    records = [
        rec("q1", "supported-correct", ["a"], ["a"], latency_ms=120),
        rec("q2", "retrieval-miss", ["x"], ["b"], answer="No sé"),
        rec(
            "q3",
            "unsupported-answer",
            ["c"],
            ["c"],
            why="number 30 missing from source",
            answer="30 días\x00\x1b",
        ),
        rec("q4", "error", [], ["d"], error="timeout after 60 s", why="error: timeout after 60 s"),
        rec("q5", "unlabelled", [], []),
        rec("q<6>&", "appropriate-abstention", [], [], unanswerable=True),
    ]
    summary = {
        "n": 6,
        "hit": 0.5,
        "supported": 0.75,
        "accuracy": 0.5,
        "reasons": {"supported-correct": 1, "retrieval-miss": 1},
    }
    bars = (
        bars
        if bars is not None
        else [
            BarResult(Bar("hit@3", "hit", 3, 0.85, "gates"), 0.5, 3),
            BarResult(Bar("supported", "supported", None, 0.7, "--min"), 0.75, 3),
        ]
    )
    return CheckResult(
        testset="testsets/shop-es.yaml",
        run="run.jsonl",
        k=3,
        records=records,
        summary=summary,
        bars=bars,
        stale=list(stale),
        missing=[],
        notes=[],
        case_lines={"q1": 25, "q2": 32},
    )


def test_junit_is_valid_and_has_one_testcase_per_case():
    xml = render_junit(
        _result(stale=[{"case": "q1", "label": "a", "status": "changed"}]),
        testset_path="testsets/shop-es.yaml",
    )
    root = ET.fromstring(xml.encode("utf-8"))
    assert root.tag == "testsuites"
    cases_suite, gate_suite = root.findall("testsuite")
    tcs = cases_suite.findall("testcase")
    assert [tc.get("name") for tc in tcs] == ["q1", "q2", "q3", "q4", "q5", "q<6>&"]
    assert all(tc.get("classname") == "ragtriage.shop-es" for tc in tcs)
    assert tcs[0].get("file") == "testsets/shop-es.yaml" and tcs[0].get("line") == "25"
    assert tcs[0].get("time") == "0.120" and list(tcs[0]) == []
    f = tcs[1].find("failure")
    assert f.get("message") == "retrieval-miss" and f.get("type") == "retrieval-miss"
    assert "top 3: x" in f.text and "expected: b" in f.text
    f = tcs[2].find("failure")
    assert f.get("message") == "unsupported-answer: number 30 missing from source"
    assert "\x00" not in f.text and "answer: 30 días" in f.text
    assert tcs[3].find("error").get("message") == "error: timeout after 60 s"
    assert tcs[4].find("skipped") is not None
    assert list(tcs[5]) == []
    assert (
        cases_suite.get("tests"),
        cases_suite.get("failures"),
        cases_suite.get("errors"),
        cases_suite.get("skipped"),
    ) == ("6", "2", "1", "1")
    gate = {tc.get("name"): tc for tc in gate_suite.findall("testcase")}
    assert gate["hit@3"].find("failure").get("message") == "hit@3 = 0.500 < 0.85"
    assert gate["supported"].find("failure") is None
    assert (
        gate["labels are fresh"].find("failure").get("message") == "1 stale label(s); run `ragtriage stale`"
    )
    assert root.get("tests") == "9" and root.get("failures") == "4" and root.get("errors") == "1"


def test_failure_message_is_reason_and_why():
    assert failure_message({"reason": "wrong-answer", "why": ""}) == "wrong-answer"
    assert (
        failure_message({"reason": "unsupported-answer", "why": "no source"})
        == "unsupported-answer: no source"
    )


def test_text_report():
    text = render_text(_result())
    assert "✗ FAIL  hit@3       0.500  (bar 0.85, from gates)" in text
    assert "✓ pass  supported   0.750  (bar 0.7, from --min)" in text
    assert text.endswith("check FAILED: 1 of 2 bars missed\n")
    ok = render_text(_result(bars=[]))
    assert "no bars" in ok and ok.endswith("check passed (0 bars held)\n")


def test_markdown_snapshot():
    md = render_markdown(_result(stale=[{"case": "q1", "label": "a", "status": "moved"}]))
    assert (
        md
        == """\
## ❌ ragtriage check failed: `testsets/shop-es.yaml`

6 cases at k = 3, run `run.jsonl`.

| bar | value | minimum | result |
|---|---:|---:|---|
| `hit@3` | 0.500 | 0.85 | ❌ fail |
| `supported` | 0.750 | 0.7 | ✅ pass |

| metric | value |
|---|---:|
| hit | 0.500 |
| supported | 0.750 |
| accuracy | 0.500 |

### ❌ Stale labels: 1

| case | label | status |
|---|---|---|
| `q1` | `a` | moved |

Run `ragtriage stale TESTSET --fix` and review the rest in `ragtriage edit`.

### Failures by reason: 3

#### retrieval-miss (1)

| case | question | where to look |
|---|---|---|
| `q2` | question q2 |  |

#### unsupported-answer (1)

| case | question | where to look |
|---|---|---|
| `q3` | question q3 | number 30 missing from source |

#### error (1)

| case | question | where to look |
|---|---|---|
| `q4` | question q4 | error: timeout after 60 s |
"""
    )


@pytest.mark.parametrize(
    "record, case, want",
    [
        (
            rec("q", "retrieval-miss", ["x", "y", "z", "a"], ["a"], rank=4),
            None,
            "a not in the top 3 (rank 4)",
        ),
        (rec("q", "retrieval-miss", ["x"], ["a"], rank=0), None, "a not in the top 3 (not retrieved)"),
        (
            rec("q", "unnecessary-abstention", ["a"], ["a"], rank=1),
            None,
            "declined although a was found (at rank 1)",
        ),
        (
            rec("q", "unnecessary-abstention", ["b", "a"], ["a", "b"], rank=1),
            None,
            "declined although a, b were found (first at rank 1)",
        ),
        (
            rec("q", "wrong-answer", ["a"], ["a"], answer="Son 5 días [a]"),
            Case(id="q", question="?", expected=("a",), must_contain=("cinco días", "5 días")),
            "answer lacks 'cinco días'",
        ),
        (
            rec("q", "wrong-answer", ["a"], ["a"], answer="no"),
            Case(id="q", question="?", expected=("a",), answer="sí"),
            "answer differs from the reference 'sí'",
        ),
        (rec("q", "unsupported-answer", ["a"], ["a"], why="no source"), None, "no source"),
    ],
)
def test_explain_says_where_to_look(record, case, want):
    from ragtriage.core.gate import explain

    assert explain(record, case, 3) == want


def test_the_junit_serializer_writes_what_elementtree_writes():
    import xml.etree.ElementTree as ET

    from ragtriage.core.gate import _serialize as xml_text

    root = ET.Element("testsuites", name='a"b&c<d>\te\nf')
    suite = ET.SubElement(root, "testsuite", name="s")
    ET.SubElement(suite, "testcase", name="garantía-1 & <x>").text = "line 1\nline & <2> \"q\""
    ET.SubElement(suite, "testcase", name="empty")
    f = ET.SubElement(ET.SubElement(suite, "testcase", name="t"), "failure", message="m\r\n")
    f.text = "]]> text"
    ET.indent(root)
    assert xml_text(root) == ET.tostring(root, encoding="unicode")
