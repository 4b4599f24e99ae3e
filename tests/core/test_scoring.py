"""Scoring, diagnosis and the summary: evaluation.md's five-case table at k = 1."""

import pytest

from ragtriage.core.diagnosis import REASONS, diagnose
from ragtriage.core.schema import Case, Settings
from ragtriage.core.scoring import make_record, rescore
from ragtriage.core.summary import SUMMARY_KEYS, summarize
from tests.core.runkit import NL, five


def test_five_cases_at_k1():
    cases, results = five()
    recs = [make_record(c, r, 1, {}.get, NL) for c, r in zip(cases, results)]
    assert [r["reason"] for r in recs] == [
        "supported-correct",
        "wrong-answer",
        "retrieval-miss",
        "appropriate-abstention",
        "unanswerable-answered",
    ]
    s = summarize(recs, 1)
    assert tuple(s) == SUMMARY_KEYS
    assert s["accuracy"] == pytest.approx(0.4)
    assert s["coverage"] == pytest.approx(0.6)
    assert s["faithfulness"] == pytest.approx(1 / 3)
    assert s["unknown_abstention"] == pytest.approx(0.5)
    assert s["recall"] == pytest.approx(4 / 9)
    assert s["mrr"] == pytest.approx(2 / 3)
    assert (round(s["faithfulness"], 3), round(s["recall"], 3), round(s["mrr"], 3)) == (0.333, 0.444, 0.667)
    assert (s["n"], s["answerable"], s["answered"], s["unlabelled"], s["errors"]) == (5, 3, 3, 0, 0)
    assert s["reasons"] == {
        "appropriate-abstention": 1,
        "unanswerable-answered": 1,
        "retrieval-miss": 1,
        "wrong-answer": 1,
        "supported-correct": 1,
    }
    assert s["tokens"] is None


def test_error_and_unlabelled_counted_but_left_out():
    cases, results = five()
    cases.append(Case(id="q6", question="?", expected=["a"]))
    results.append({"id": "q6", "error": "HTTP 500"})
    cases.append(Case(id="q7", question="?"))  # unlabelled draft
    results.append({"id": "q7", "ranking": ["a"], "answer": "ja [a]"})
    recs = [make_record(c, r, 1, {}.get, NL) for c, r in zip(cases, results)]
    assert recs[5]["reason"] == "error" and recs[5]["why"] == "error: HTTP 500"
    assert recs[6]["reason"] == "unlabelled"
    s = summarize(recs, 1)
    assert (s["n"], s["errors"], s["unlabelled"]) == (7, 1, 1)
    assert s["accuracy"] == pytest.approx(0.4)
    assert s["reasons"]["error"] == 1 and s["reasons"]["unlabelled"] == 1


def test_empty_denominators_are_null_and_zero_reasons_omitted():
    s = summarize([], 3)
    assert all(s[m] is None for m in ("hit", "recall", "mrr", "supported", "accuracy", "unknown_abstention"))
    assert s["reasons"] == {} and s["n"] == 0
    only = summarize(
        [make_record(Case(id="u", question="?", unanswerable=True), {"answer": None}, 3, {}.get, NL)], 3
    )
    assert only["hit"] is None and only["unknown_abstention"] == 1.0 and only["faithfulness"] is None
    assert only["supported"] == 1.0  # an abstention is supported


def test_builtin_grounding_used_without_external_verdict_and_tokens_summed():
    c = Case(id="d", question="?", expected=["devolver-2"], must_contain=["5"])
    texts = {"devolver-2": "te devolvemos el dinero en cinco días"}.get
    es = Settings(language="es")
    good = make_record(c, {"ranking": ["devolver-2"], "answer": "En 5 días [devolver-2]"}, 3, texts, es)
    assert good["reason"] == "supported-correct" and good["why"] == ""
    bad = make_record(
        c,
        {"ranking": ["devolver-2"], "answer": "En 5 días, 30 en total [devolver-2]", "tokens": 40},
        3,
        texts,
        es,
    )
    assert bad["reason"] == "unsupported-answer" and bad["why"] == "number 30 missing from source"
    abst = make_record(c, {"ranking": ["devolver-2"], "answer": "No lo sé"}, 3, texts, es)
    assert abst["reason"] == "unnecessary-abstention" and abst["supported"] is True
    assert summarize([bad, bad], 3)["tokens"] == 80


def test_rescore_after_relabel_uses_stored_ranking_and_keeps_external_verdict():
    c = Case(id="q", question="?", expected=["a"], answer="ja")
    rec = make_record(c, {"ranking": ["x", "b"], "answer": "ja", "supported": True}, 1, {}.get, NL)
    assert rec["reason"] == "retrieval-miss" and rec["external_supported"] is True
    relabelled = Case(id="q", question="?", expected=["x"], answer="ja")
    again = rescore(rec, relabelled, 1, {}.get, NL)
    assert again["reason"] == "supported-correct" and again["rank"] == 1
    # a computed (not external) `supported` in a stored record is not taken as a verdict
    rec2 = make_record(c, {"ranking": ["a"], "answer": "ja"}, 1, {}.get, NL)
    assert rec2["supported"] is False and rec2["why"] == "no source"
    assert rescore(rec2, c, 1, {}.get, NL)["why"] == "no source"


def test_diagnosis_order():
    kw = dict(
        error=False,
        unanswerable=False,
        unlabelled=False,
        hit=True,
        abstained=False,
        correct=True,
        supported=True,
    )
    assert diagnose(**kw) == "supported-correct"
    assert diagnose(**{**kw, "supported": False}) == "unsupported-answer"
    assert diagnose(**{**kw, "correct": False, "supported": False}) == "wrong-answer"
    assert diagnose(**{**kw, "abstained": True, "correct": False}) == "unnecessary-abstention"
    assert diagnose(**{**kw, "hit": False, "correct": False}) == "retrieval-miss"
    assert diagnose(**{**kw, "unanswerable": True, "hit": None}) == "unanswerable-answered"
    assert diagnose(**{**kw, "unanswerable": True, "abstained": True}) == "appropriate-abstention"
    assert diagnose(**{**kw, "unlabelled": True}) == "unlabelled"
    assert diagnose(**{**kw, "error": True, "unlabelled": True}) == "error"
    assert REASONS[0] == "error" and REASONS[-1] == "supported-correct"
