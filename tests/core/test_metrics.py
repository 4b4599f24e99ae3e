"""Retrieval metrics: evaluation.md's worked examples and property tests against
a plain reference implementation of the definitions."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragtriage.core.metrics import MISSING, at_k, first_positions, retrieval, retrieval_at, retrieval_means


def test_worked_example_k2():
    m = retrieval(["a", "x", "b"], ["a", "b"], 2)
    assert (m["precision"], m["recall"], m["rr"]) == (0.5, 0.5, 1.0)
    assert m["rank"] == 1 and m["hit"] is True


def test_worked_example_k4_divides_by_k():
    m = retrieval(["a", "x", "b"], ["a", "b"], 4)
    assert (m["precision"], m["recall"], m["rr"]) == (0.5, 1.0, 1.0)


def test_mean_recall_weighs_questions():
    p = first_positions([["a"], ["b", "y", "z"]], [["a"], ["b", "c", "d"]])
    means = retrieval_means(p, 3)
    assert means["recall"] == pytest.approx((1 + 1 / 3) / 2)
    assert round(means["recall"], 3) == 0.667


def test_duplicates_count_once_and_keep_their_slot():
    m = retrieval(["x", "a", "a", "b"], ["a", "b"], 3)
    assert m["hits"] == 1 and m["rank"] == 2 and m["rr"] == 0.5
    m = retrieval(["x", "a", "a", "b"], ["a", "b"], 4)
    assert m["hits"] == 2 and m["precision"] == 0.5


def test_rank_is_over_the_whole_ranking_rr_only_inside_k():
    m = retrieval(["x", "y", "z", "a"], ["a"], 2)
    assert m["rank"] == 4 and m["rr"] == 0.0 and m["hit"] is False
    assert retrieval(["x"], ["a"], 1)["rank"] == 0


def test_unanswerable_is_null_not_zero():
    m = retrieval(["a", "b"], [], 2)
    assert m["recall"] is None and m["rr"] is None and m["hit"] is None
    assert m["precision"] == 0.0 and m["rank"] == 0
    p = first_positions([["a"], ["a"]], [["a"], []])
    assert retrieval_means(p, 1)["hit"] == 1.0  # the unanswerable case is not a 0
    assert retrieval_means(first_positions([["a"]], [[]]), 1) == {
        "hit": None,
        "recall": None,
        "precision": None,
        "mrr": None,
    }


def test_expect_all():
    assert retrieval(["a", "x", "b"], ["a", "b"], 2, "all")["hit"] is False
    assert retrieval(["a", "x", "b"], ["a", "b"], 3, "all")["hit"] is True
    p = first_positions([["a", "x", "b"]], [["a", "b"]], ["all"])
    assert at_k(p, 2)["hit"][0] == 0.0 and at_k(p, 3)["hit"][0] == 1.0


def test_scores_never_resort_short_and_empty_rankings():
    assert retrieval([], ["a"], 3) == {
        "rank": 0,
        "hits": 0,
        "precision": 0.0,
        "recall": 0.0,
        "rr": 0.0,
        "hit": False,
    }
    assert retrieval(["a"], ["a"], 5)["precision"] == 0.2
    with pytest.raises(ValueError):
        retrieval(["a"], ["a"], 0)


def test_retrieval_at_from_records_skips_error_and_unlabelled():
    recs = [
        {"ranking": ["a", "b"], "expected": ["b"], "reason": "supported-correct"},
        {"ranking": ["c"], "expected": ["c"], "reason": "error"},
        {"ranking": ["c"], "expected": [], "reason": "unlabelled"},
        {"ranking": ["z"], "expected": [], "unanswerable": True, "reason": "appropriate-abstention"},
    ]
    assert retrieval_at(recs, 1)["hit"] == 0.0
    assert retrieval_at(recs, 2) == {"hit": 1.0, "recall": 1.0, "precision": 0.5, "mrr": 0.5}


# --------------------------------------------------------------- reference implementation


def ref(ranking, expected, k, expect="any"):
    """The definitions, written as plainly as possible."""
    gold = []
    for g in expected:
        if g not in gold:
            gold.append(g)
    seen = []
    hits = 0
    first_in_k = None
    for i, cid in enumerate(ranking[:k]):
        if cid in seen:
            continue
        seen.append(cid)
        if cid in gold:
            hits += 1
            if first_in_k is None:
                first_in_k = i + 1
    rank = 0
    for i, cid in enumerate(ranking):
        if cid in gold:
            rank = i + 1
            break
    out = {"rank": rank, "hits": hits, "precision": hits / k}
    if not gold:
        out.update(recall=None, rr=None, hit=None)
    else:
        out["recall"] = hits / len(gold)
        out["rr"] = 1 / first_in_k if first_in_k else 0.0
        out["hit"] = all(g in ranking[:k] for g in gold) if expect == "all" else hits >= 1
    return out


ids = st.sampled_from(["a", "b", "c", "d", "e", "garantía-1", "rückgabe-1"])
case = st.tuples(st.lists(ids, max_size=8), st.lists(ids, max_size=4), st.sampled_from(["any", "all"]))


@settings(max_examples=300, deadline=None)
@given(case, st.integers(1, 10))
def test_per_case_matches_reference(c, k):
    ranking, expected, expect = c
    assert retrieval(ranking, expected, k, expect) == pytest.approx(ref(ranking, expected, k, expect))


def _eq(a, b):
    if b is None:
        return math.isnan(a)
    return a == pytest.approx(float(b))


@settings(max_examples=150, deadline=None)
@given(st.lists(case, max_size=12), st.lists(st.integers(1, 10), min_size=1, max_size=4))
def test_vectorised_matches_reference_for_many_k(cases, ks):
    rankings = [c[0] for c in cases]
    expecteds = [c[1] for c in cases]
    expects = [c[2] for c in cases]
    p = first_positions(rankings, expecteds, expects)
    assert list(p.rank) == [ref(r, g, 1)["rank"] for r, g in zip(rankings, expecteds)]
    for k in ks:
        m = at_k(p, k)
        for i, (r, g, e) in enumerate(cases):
            want = ref(r, g, k, e)
            assert m["hits"][i] == want["hits"]
            for name in ("precision", "recall", "rr", "hit"):
                assert _eq(m[name][i], want[name]), (name, r, g, k)
        means = retrieval_means(p, k)
        ans = [ref(r, g, k, e) for r, g, e in cases if g]
        if not ans:
            assert means["recall"] is None
        else:
            assert means["recall"] == pytest.approx(sum(x["recall"] for x in ans) / len(ans))
            assert means["mrr"] == pytest.approx(sum(x["rr"] for x in ans) / len(ans))
            assert means["hit"] == pytest.approx(sum(bool(x["hit"]) for x in ans) / len(ans))


def test_first_positions_are_zero_based_and_missing_is_far():
    p = first_positions([["x", "a"]], [["a"]])
    assert p.pos[0, 0] == 1 and MISSING > 10**9
    assert at_k(p, 1)["hit"][0] == 0.0 and at_k(p, 2)["hit"][0] == 1.0
