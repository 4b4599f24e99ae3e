"""The grading queue's "narrowest first" order (N), without a terminal: the stratum of
the judge's verdict where one more grade lowers the variance of the corrected rate
most, on a worked example with known numbers, and that grading in that order gives a
narrower interval than grading in the file's order on a synthetic run."""

from __future__ import annotations

import pytest

from ragtriage.core.judge import corrected_rates
from ragtriage.tui.grading import (
    GradeBook,
    Tally,
    grading_queue,
    narrowest_queue,
    stratum_gain,
    stratum_gains,
    tallies,
)


def _record(i: int, supported: bool, correct: bool | None = None) -> dict:
    return {
        "id": f"c{i}",
        "answer": f"answer {i}",
        "prompt_ids": ["x"],
        "supported": supported,  # the grounding check agrees with the judge: no "disagreement" first
        "judge": {"supported": supported, "correct": correct},
    }


def _run(yes: int, no: int) -> list[dict]:
    """``yes`` answers the judge said supported to, then ``no`` it said unsupported to."""
    return [_record(i, i < yes) for i in range(yes + no)]


def _grade(book: GradeBook, records, ids, truth) -> None:
    by_id = {r["id"]: r for r in records}
    for cid in ids:
        book.give(by_id[cid], truth[cid], None, "tester")


def test_the_worked_example_picks_the_stratum_with_the_largest_gain(tmp_path):
    # 900 answers the judge said yes to, 20 graded, 2 of them wrongly (the expert said no);
    # 100 it said no to, 4 graded, 2 wrongly
    records = _run(900, 100)
    book = GradeBook(tmp_path / "t.yaml")
    truth = {r["id"]: r["judge"]["supported"] for r in records}
    yes_graded = [f"c{i}" for i in range(20)]
    no_graded = [f"c{900 + i}" for i in range(4)]
    for cid in yes_graded[:2] + no_graded[:2]:
        truth[cid] = not truth[cid]
    _grade(book, records, yes_graded + no_graded, truth)
    tally = tallies(records, book)
    assert tally[("supported", True)] == Tally(900, 20, 2)
    assert tally[("supported", False)] == Tally(100, 4, 2)
    # p = (d + 1) / (n + 2); gain = (N_h / N)² · p(1 − p) / ((n + 1)(n + 2))
    yes_gain = 0.9**2 * (3 / 22) * (19 / 22) / (21 * 22)
    no_gain = 0.1**2 * (3 / 6) * (3 / 6) / (5 * 6)
    assert stratum_gain(tally[("supported", True)], 1000) == pytest.approx(yes_gain)  # 2.065e-4
    assert stratum_gain(tally[("supported", False)], 1000) == pytest.approx(no_gain)  # 8.33e-5
    assert stratum_gains(tally, (True, None)) == pytest.approx(yes_gain)
    nxt = narrowest_queue(records, book, "run.jsonl")[0]
    assert int(nxt[1:]) < 900  # the judge's "yes" stratum: one more grade there narrows most

    # with the "no" stratum not graded at all, its prior ½ makes it the next one
    fresh = GradeBook(tmp_path / "u.yaml")
    _grade(fresh, records, yes_graded, truth)
    tally = tallies(records, fresh)
    assert stratum_gain(tally[("supported", False)], 1000) == pytest.approx(0.1**2 * 0.25 / 2)  # 1.25e-3
    order = narrowest_queue(records, fresh, "run.jsonl")
    assert int(order[0][1:]) >= 900
    assert sorted(order) == sorted(grading_queue(records, fresh, "run.jsonl"))  # the same answers


def test_within_a_stratum_the_order_is_the_runs_and_does_not_move():
    records = _run(30, 30)

    class NoGrades:
        def grade_of(self, _rec):
            return None

    book = NoGrades()
    first = narrowest_queue(records, book, "run.jsonl")  # type: ignore[arg-type]
    assert first == narrowest_queue(records, book, "run.jsonl")  # type: ignore[arg-type]
    assert first != narrowest_queue(records, book, "other.jsonl")  # type: ignore[arg-type]
    yes = [c for c in first if int(c[1:]) < 30]
    assert yes != sorted(yes, key=lambda c: int(c[1:]))  # shuffled, not the file's order
    assert first[0] in [f"c{i}" for i in range(30)]  # the larger-share tie goes to the first seen


def _synthetic(n: int = 1000) -> tuple[list[dict], dict[str, bool]]:
    """A judge that says yes to 90 % of the answers and is right on 98 % of those, and
    says no to 10 % and is wrong on half of those (the expert's grade is ``truth``)."""
    records, truth = [], {}
    for i in range(n):
        said = i % 10 != 0
        records.append(_record(i, said))
        truth[f"c{i}"] = (i % 50 != 1) if said else (i % 20 == 0)
    return records, truth


def _grade_in_order(tmp_path, name: str, order: str, grades: int):
    records, truth = _synthetic()
    book = GradeBook(tmp_path / f"{name}.yaml")
    for _ in range(grades):
        if order == "file":
            nxt = next(r["id"] for r in records if book.grade_of(r) is None)
        else:
            nxt = narrowest_queue(records, book, "run.jsonl")[0]  # the screen orders again after each grade
        _grade(book, records, [nxt], truth)
    est = corrected_rates(records, book.table)["supported"]
    return est, sum(truth.values()) / len(truth)


@pytest.mark.parametrize("grades", [40, 60])
def test_grading_narrowest_first_gives_a_narrower_interval_than_the_file_order(tmp_path, grades):
    file_est, true_rate = _grade_in_order(tmp_path, "file", "file", grades)
    narrow_est, _ = _grade_in_order(tmp_path, "narrow", "narrowest", grades)
    width = {k: e.interval.hi - e.interval.lo for k, e in (("file", file_est), ("narrow", narrow_est))}
    assert width["narrow"] < 0.85 * width["file"], width
    for est in (file_est, narrow_est):
        assert est.graded == grades
        assert est.interval.lo <= true_rate <= est.interval.hi
        assert est.interval.method == "stratified PPI"
