"""The judge's rates corrected by the grades (judge.md): the one estimator of
``ragtriage judge``, the reports, ``check`` and the app — stratified PPI by the
judge's verdict — on worked numbers computed by hand, under a grading that is not a
uniform sample (where PPI++ is wrong), and ``unknown`` when a verdict is too thinly
graded."""

from __future__ import annotations

import math

import pytest

from ragtriage.core.judge import corrected_rates
from ragtriage.core.judge.grades import make_grade
from ragtriage.core.stats import ppi_rate

Z = 1.959963984540054


def _run(yes: int, no: int) -> list[dict]:
    """``yes`` answers the judge said supported to (ids y0…), then ``no`` it did not (n0…)."""
    recs = [{"id": f"y{i}", "answer": f"a{i}", "judge": {"supported": True}} for i in range(yes)]
    recs += [{"id": f"n{i}", "answer": f"b{i}", "judge": {"supported": False}} for i in range(no)]
    return recs


def _grades(records: list[dict], human: dict[str, bool]) -> dict:
    by_id = {r["id"]: r for r in records}
    table = {}
    for cid, h in human.items():
        g = make_grade(by_id[cid], h, None, "tester", "2026-01-01T00:00:00Z")
        table[(g.case, g.answer_sha)] = g
    return table


def test_worked_numbers_of_the_stratified_estimate():
    # 100 judged answers: the judge said yes to 20 (w = 0.2) and no to 80 (w = 0.8).
    # Graded: 8 of the "yes" (6 the expert calls supported, 2 not) and 8 of the "no"
    # (2 supported, 6 not) — 8 and 8 is not proportional to 20 and 80: not a uniform sample.
    records = _run(20, 80)
    human = {f"y{i}": i < 6 for i in range(8)} | {f"n{i}": i < 2 for i in range(8)}
    est = corrected_rates(records, _grades(records, human))["supported"]
    assert est is not None
    # per stratum: judge's rate + mean(human − judge) on its graded answers
    #   yes: 1 + (6·0 + 2·(−1))/8 = 0.75     no: 0 + (2·1 + 6·0)/8 = 0.25
    # weighted by the share: θ = 0.2·0.75 + 0.8·0.25 = 0.15 + 0.20 = 0.35
    assert est.estimate == pytest.approx(0.35)
    # within: var(human − judge) is 0.75·0.25 = 0.1875 in both strata, so
    #   0.2²·0.1875/8 + 0.8²·0.1875/8 = 0.68·0.0234375 = 0.0159375
    # the shares, measured on N = 100: (0.2·(0.75 − 0.35)² + 0.8·(0.25 − 0.35)²)/100 = 0.0004
    # var = 0.0163375, se = 0.127818…, half = 1.96·se = 0.250519…: [0.09948, 0.60052]
    half = Z * math.sqrt(0.0163375)
    assert est.interval.lo == pytest.approx(0.35 - half, abs=1e-9)
    assert est.interval.hi == pytest.approx(0.35 + half, abs=1e-9)
    assert (round(est.interval.lo, 5), round(est.interval.hi, 5)) == (0.09948, 0.60052)
    assert est.interval.method == "stratified PPI"
    assert est.graded == 16 and est.unlabelled == 84 and est.judge_rate == pytest.approx(0.2)
    assert corrected_rates(records, {})["supported"] is None  # nothing graded: no estimate at all


def test_grading_one_verdict_heavily_gives_the_stratified_estimate_not_ppi_plus_plus():
    # 1,000 answers: the judge said yes to 900 and is right on 855 of them (95 %), no to 100
    # and is right on 50 (50 %): the true rate is (855 + 50)/1000 = 0.905. The queue (narrowest
    # first) grades where the judge errs: 40 of the 100 "no" answers and only 20 of the 900 "yes".
    records = _run(900, 100)
    truth = {f"y{i}": i >= 45 for i in range(900)} | {f"n{i}": i < 50 for i in range(100)}
    graded = [f"y{i}" for i in range(44, 64)] + [f"n{i}" for i in range(30, 70)]  # 19/20 right, 20/40
    est = corrected_rates(records, _grades(records, {c: truth[c] for c in graded}))["supported"]
    assert est is not None and est.estimate is not None
    # stratified: 0.9·(1 − 1/20) + 0.1·(0 + 20/40) = 0.855 + 0.05 = 0.905
    assert est.estimate == pytest.approx(0.905)
    true_rate = sum(truth.values()) / len(truth)
    assert true_rate == pytest.approx(0.905) and est.interval.contains(true_rate)
    # PPI++ on the same grades treats them as a uniform sample of all 1,000: the "no" answers,
    # a tenth of the run, are two thirds of the grades, and its estimate is far off the truth
    y = [float(truth[c]) for c in graded]
    f = [1.0 if c.startswith("y") else 0.0 for c in graded]
    fu = [1.0] * 880 + [0.0] * 60
    plus = ppi_rate(y, f, fu)
    assert plus is not None
    assert abs(plus.estimate - true_rate) > 0.3  # 1.25: PPI++ is wrong under this grading
    assert not plus.interval.contains(true_rate)
    assert est.estimate != pytest.approx(plus.estimate, abs=0.1)


def test_a_verdict_with_fewer_than_two_grades_makes_the_rate_unknown_with_a_worst_case_interval():
    # the judge said yes to 80, no to 20; the "no" answers have one grade: the judge's error
    # there is not measured, so the corrected rate is unknown — not the judge's own word
    records = _run(80, 20)
    human = {f"y{i}": i != 0 for i in range(10)} | {"n0": True}
    est = corrected_rates(records, _grades(records, human))["supported"]
    assert est is not None and est.estimate is None
    # the "yes" stratum: 0.8·(1 − 1/10) = 0.72 known; var 0.8²·(0.09/10) + 0.2/100 (its shares'
    # term at its worst): the interval is [0.72 − half, 0.72 + half + 0.2], any rate in the 20 %
    half = Z * math.sqrt(0.64 * 0.009 + 0.2 / 100)
    assert est.interval.lo == pytest.approx(0.72 - half, abs=1e-9)
    assert est.interval.hi == pytest.approx(min(1.0, 0.72 + half + 0.2), abs=1e-9)
    assert "20% of the answers under a verdict with < 2 grades: any rate there" in est.interval.method
    d = est.to_dict()
    assert d["estimate"] is None and d["interval"]["lo"] == est.interval.lo  # JSON: null, never a guess
    # a second grade there makes it known
    human["n1"] = False
    assert corrected_rates(records, _grades(records, human))["supported"].estimate is not None


def test_a_verdict_given_once_and_graded_is_known():
    # every answer graded, the judge said no to one: nothing is left to correct there
    records = _run(4, 1)
    human = {f"y{i}": True for i in range(4)} | {"n0": False}
    est = corrected_rates(records, _grades(records, human))["supported"]
    assert est is not None and est.estimate == pytest.approx(0.8)
    # yes: 4 agree, floor var (1/4)(3/4) = 0.1875 → 0.8²·0.1875/4 = 0.03; no: one answer, var ¼
    # → 0.2²·0.25 = 0.01; shares: (0.8·0.2² + 0.2·0.8²)/5 = 0.032; var 0.072
    assert est.interval.lo == pytest.approx(0.8 - Z * math.sqrt(0.072), abs=1e-9)
    assert est.interval.hi == 1.0
