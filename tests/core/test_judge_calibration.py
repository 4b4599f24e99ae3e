"""Cohen's κ against hand-worked examples and scikit-learn; grades appended and merged."""

from __future__ import annotations

import json
import random

import orjson
import pytest

from ragtriage.core.errors import InputError
from ragtriage.core.judge import agreement, calibrate, refuse_unproven, thresholds
from ragtriage.core.judge.grades import (
    Grade,
    append_grade,
    grades_path,
    latest,
    make_grade,
    read_grades,
)
from ragtriage.core.text import fingerprint


def _pairs(yy, yn, ny, nn):
    return [(True, True)] * yy + [(True, False)] * yn + [(False, True)] * ny + [(False, False)] * nn


def test_kappa_worked_example():
    # 50 cases: judge yes & human yes 20, yes/no 5, no/yes 10, no/no 15.
    # p_o = 35/50 = 0.7; judge yes 25/50, human yes 30/50:
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5; κ = (0.7 - 0.5) / 0.5 = 0.4
    a = agreement(_pairs(20, 5, 10, 15))
    assert a["n"] == 50
    assert a["agreement"] == pytest.approx(0.7)
    assert a["kappa"] == pytest.approx(0.4)
    assert a["confusion"] == [[20, 5], [10, 15]]


def test_kappa_second_worked_example_negative():
    # Disagreeing more than chance: yy 1, yn 4, ny 4, nn 1 -> p_o 0.2, p_e 0.5, κ = -0.6
    a = agreement(_pairs(1, 4, 4, 1))
    assert a["kappa"] == pytest.approx(-0.6)


def test_kappa_is_null_when_nothing_paired_or_chance_is_one():
    assert agreement([])["kappa"] is None
    assert agreement([])["agreement"] is None
    same = agreement(_pairs(7, 0, 0, 0))  # both always said yes: p_e = 1
    assert same["agreement"] == 1.0 and same["kappa"] is None


def test_kappa_matches_scikit_learn():
    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(14)
    for _ in range(200):
        n = rng.randint(2, 60)
        bias = rng.random()
        a = [rng.random() < bias for _ in range(n)]
        h = [x if rng.random() < rng.random() else not x for x in a]
        ours = agreement(zip(a, h))["kappa"]
        if len(set(a) | set(h)) == 1:
            assert ours is None  # scikit-learn answers nan here
            continue
        assert ours == pytest.approx(cohen_kappa_score(a, h))


def _rec(cid, answer, supported=True, judge=None):
    r = {"id": cid, "answer": answer, "supported": supported, "prompt_ids": ["c1"]}
    if judge is not None:
        r["judge"] = judge
    return r


def test_grades_append_only_and_last_grade_of_same_answer_wins(tmp_path):
    path = grades_path(tmp_path / "shop-es.yaml")
    assert path.name == "shop-es.grades.jsonl"
    rec = _rec("garantía-1", "Tiene 2 años de garantía [g1].")
    append_grade(path, make_grade(rec, False, None, by="ana", when="2026-01-01T00:00:00Z"))
    first = path.read_bytes()
    append_grade(path, make_grade(rec, True, True, by="ana", when="2026-01-02T00:00:00Z"))
    assert path.read_bytes().startswith(first)  # appended, never rewritten
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    assert lines[0] == {
        "case": "garantía-1",
        "answer_sha": fingerprint("Tiene 2 años de garantía [g1]."),
        "prompt_ids": ["c1"],
        "supported": False,
        "correct": None,
        "by": "ana",
        "when": "2026-01-01T00:00:00Z",
    }
    grades, warnings = read_grades([path])
    assert not warnings
    table = latest(grades)
    assert table[("garantía-1", fingerprint(rec["answer"]))].supported is True


def test_grade_of_another_answer_does_not_apply(tmp_path):
    path = tmp_path / "t.grades.jsonl"
    append_grade(path, make_grade(_rec("a", "old answer"), True, None, by="x", when="2026-01-01T00:00:00Z"))
    table = latest(read_grades([path])[0])
    judged = {"supported": True, "correct": None, "reason": "", "cached": False}
    report = calibrate([_rec("a", "a new answer", judge=judged)], table)
    assert report["supported"]["n"] == 0


def test_grades_merge_from_two_files_and_conflict_markers(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    r1, r2 = _rec("q1", "uno"), _rec("q2", "dos")
    append_grade(a, make_grade(r1, True, None, by="ana", when="2026-01-01T00:00:00Z"))
    append_grade(b, make_grade(r1, False, None, by="ben", when="2026-01-03T00:00:00Z"))
    append_grade(b, make_grade(r2, True, False, by="ben", when="2026-01-02T00:00:00Z"))
    grades, _ = read_grades([a, b])
    table = latest(grades)
    assert table[("q1", fingerprint("uno"))].by == "ben"  # later `when` wins across files
    assert table[("q2", fingerprint("dos"))].correct is False
    # a git merge that left markers: both sides are read, the markers skipped with a warning
    merged = tmp_path / "m.jsonl"
    merged.write_bytes(
        b"<<<<<<< HEAD\n" + a.read_bytes() + b"=======\n" + b.read_bytes() + b">>>>>>> x\n{bad\n"
    )
    grades, warnings = read_grades([merged])
    assert len(grades) == 3
    assert [w.line for w in warnings] == [1, 3, 6, 7]
    assert all(str(w).startswith(f"{merged}:") for w in warnings)


def test_calibrate_pairs_judge_and_grounding_with_grades():
    table: dict[tuple[str, str], Grade] = {}
    recs = []
    # judge right 3 times, wrong once; grounding says supported every time
    for i, (j_sup, human) in enumerate([(True, True), (False, False), (False, False), (True, False)]):
        r = _rec(f"c{i}", f"answer {i}", supported=True, judge={"supported": j_sup, "correct": None})
        recs.append(r)
        g = make_grade(r, human, None, by="x", when="2026-01-01T00:00:00Z")
        table[(g.case, g.answer_sha)] = g
    recs.append(_rec("err", "x", judge={"error": "boom"}))
    rep = calibrate(recs, table)
    assert rep["supported"]["confusion"] == [[1, 1], [0, 2]]
    assert rep["supported"]["agreement"] == pytest.approx(0.75)
    assert rep["grounding"]["confusion"] == [[1, 3], [0, 0]]
    assert rep["grounding"]["kappa"] == pytest.approx(0.0)
    assert rep["correct"]["n"] == 0 and rep["correct"]["kappa"] is None
    assert "by_language" not in rep
    langs = {"c0": "es", "c1": "es", "c2": "de", "c3": "de"}
    rep = calibrate(recs, table, langs)
    assert rep["by_language"]["es"]["supported"]["n"] == 2


def test_bar_refused_below_kappa_or_grades_allowed_above():
    weak = {"supported": agreement(_pairs(20, 5, 10, 15)), "correct": agreement([])}
    with pytest.raises(InputError) as e:
        refuse_unproven(["judge_supported"], weak, 0.6, 30, "--min")
    msg = str(e.value.problems[0])
    assert "0.40 [" in msg and "50 graded" in msg and "lower bound of κ's 95 % interval ≥ 0.6" in msg
    strong = {"supported": agreement(_pairs(25, 1, 1, 23)), "correct": agreement([])}
    assert strong["supported"]["kappa_interval"]["lo"] >= 0.6  # κ 0.92 on 50: the bound holds too
    refuse_unproven(["judge_supported", "hit"], strong, 0.6, 30, "--min")  # allowed: no exception
    with pytest.raises(InputError):
        refuse_unproven(["judge_supported"], strong, 0.6, 51, "--min")  # too few grades
    with pytest.raises(InputError):
        refuse_unproven(["judge_correct"], strong, 0.6, 30, "--min")  # κ unknown on correct


def test_a_judge_whose_kappa_clears_the_bar_but_not_its_lower_bound_is_refused():
    """κ = 0.60 on 30 grades is about [0.27, 0.86]: not yet a judge a gate can trust."""
    border = {"supported": agreement(_pairs(12, 3, 3, 12)), "correct": agreement([])}
    assert border["supported"]["kappa"] == pytest.approx(0.6)
    with pytest.raises(InputError) as e:
        refuse_unproven(["judge_supported"], border, 0.6, 30, "--min")
    assert "0.60 [0.2" in str(e.value.problems[0])


def test_thresholds_from_gates_then_defaults():
    assert thresholds({}) == (0.6, 30)
    assert thresholds({"judge_kappa": 0.8, "judge_min_grades": 10}) == (0.8, 10)


def test_undo_takes_back_only_the_last_own_line(tmp_path):
    from ragtriage.core.judge.grades import undo_append

    path = tmp_path / "t.grades.jsonl"
    g1 = make_grade(_rec("a", "uno"), True, None, by="x", when="2026-01-01T00:00:00Z")
    g2 = make_grade(_rec("a", "uno"), False, None, by="x", when="2026-01-02T00:00:00Z")
    append_grade(path, g1)
    before = path.read_bytes()
    append_grade(path, g2)
    assert undo_append(path, g2) is True
    assert path.read_bytes() == before
    assert undo_append(path, g2) is False  # already taken back: nothing changes
    append_grade(path, g2)
    append_grade(path, make_grade(_rec("b", "dos"), True, None, by="y", when="2026-01-03T00:00:00Z"))
    size = path.stat().st_size
    assert undo_append(path, g2) is False  # someone graded since: g2 stays, history is not rewritten
    assert path.stat().st_size == size


def test_grade_order_is_by_time_in_utc_and_a_bad_when_is_reported(tmp_path):
    """Issue 20: ``when`` was compared as a string, so ``…T09:00:00-05:00`` (14:00 UTC) lost
    to ``…T10:00:00Z``; an empty or bad ``when`` was silent."""
    from ragtriage.core.judge.grades import latest, read_grades

    p = tmp_path / "t.grades.jsonl"
    rows = [
        {"case": "q", "answer_sha": "s", "supported": False, "when": "2026-05-01T09:00:00-05:00"},
        {"case": "q", "answer_sha": "s", "supported": True, "when": "2026-05-01T10:00:00Z"},
        {"case": "r", "answer_sha": "s", "supported": True, "when": "2026-05-01T10:00:00"},
        {"case": "r", "answer_sha": "s", "supported": False, "when": ""},
        {"case": "r", "answer_sha": "s", "supported": False, "when": "yesterday"},
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    grades, warnings = read_grades([p])
    won = latest(grades)
    assert won[("q", "s")].supported is False  # 14:00 UTC is after 10:00 UTC
    assert won[("r", "s")].supported is True  # a dated grade beats an empty or bad `when`
    texts = [str(w) for w in warnings]
    assert len(texts) == 2 and ":4:" in texts[0] and "when: empty" in texts[0]
    assert ":5:" in texts[1] and "'yesterday' is not an ISO-8601 time" in texts[1]
