"""Per-case values behind every summary rate, the intervals they carry, slices, and the
paired comparison of two runs (evaluation.md, "Intervals and comparisons")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragtriage.core import clusters as clus
from ragtriage.core.comparison import Options, compare_runs, paired_values
from ragtriage.core.comparison_text import render_markdown, render_text, verdict_line
from ragtriage.core.outcomes import RATE_METRICS, case_values
from ragtriage.core.rates import interval_of, slices, summary_intervals
from ragtriage.core.schema import Case
from ragtriage.core.scoring import make_record
from ragtriage.core.stats import REGRESSION, wilson
from ragtriage.core.summary import summarize
from tests.core.runkit import NL, five


def five_records(k: int = 1):
    cases, results = five()
    return [make_record(c, r, k, {}.get, NL) for c, r in zip(cases, results)]


def test_the_mean_of_the_case_values_is_the_summary_rate():
    recs = five_records()
    s = summarize(recs, 1)
    for m in RATE_METRICS:
        v = case_values(recs, m)
        if s.get(m) is None:  # (the document rates: no case has document gold)
            assert not v.values, m
            continue
        assert sum(v.values) / len(v.values) == pytest.approx(s[m]), m


def _rec(i: int, reason: str, unans: bool = False, hit: bool = True, **kw):
    r = {"type": "case", "id": f"c{i}", "reason": reason, "expected": [] if unans else [f"x{i}"]}
    r |= {"unanswerable": True} if unans else {"hit": hit, "recall": float(hit), "rr": float(hit)}
    r |= {
        "precision": float(hit) / 3,
        "abstained": False,
        "supported": True,
        "correct": reason in ("supported-correct",),
    }
    return r | kw


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["supported-correct", "retrieval-miss", "wrong-answer", "error", "unlabelled",
                                 "appropriate-abstention", "unanswerable-answered"]), min_size=1, max_size=30))  # fmt: skip
def test_case_values_have_the_summary_denominators(reasons):
    recs = [
        _rec(i, r, unans=r in ("appropriate-abstention", "unanswerable-answered"), hit=r != "retrieval-miss")
        for i, r in enumerate(reasons)
    ]
    s = summarize(recs, 3)
    for m in RATE_METRICS:
        v = case_values(recs, m)
        if s.get(m) is None:
            assert not v.values, m
        else:
            assert sum(v.values) / len(v.values) == pytest.approx(s[m]), m


def test_unclustered_yes_no_rate_gets_the_wilson_interval():
    recs = five_records()
    iv = summary_intervals(recs)["accuracy"]
    w = wilson(2, 5)
    assert (iv.lo, iv.hi, iv.method) == (w.lo, w.hi, "wilson")


def test_clustered_rate_is_never_narrower_than_wilson():
    recs = [_rec(i, "supported-correct" if i % 3 else "retrieval-miss", hit=bool(i % 3)) for i in range(60)]
    lab = {r["id"]: f"doc:{int(r['id'][1:]) // 6}" for r in recs}
    iv = interval_of(case_values(recs, "hit"), lab)
    w = wilson(40, 60)
    assert iv.lo <= w.lo and iv.hi >= w.hi and "bootstrap over 10 clusters" in iv.method


def test_every_case_the_same_still_has_width():
    recs = [_rec(i, "supported-correct") for i in range(8)]
    iv = summary_intervals(recs)["recall"]
    assert iv.hi == 1.0 and iv.lo < 0.7 and "every case the same" in iv.method


def test_slices_by_tag_have_n_and_intervals():
    recs = [_rec(i, "supported-correct" if i < 3 else "wrong-answer") for i in range(5)]
    tags = {"c0": ["a"], "c1": ["a", "b"], "c2": ["b"], "c3": ["a"], "c4": []}
    got = {s.name: s for s in slices(recs, "tag", tags)}
    assert list(got) == ["a", "b", "(no tag)"]
    assert got["a"].n == 3 and got["a"].rates["pass"] == pytest.approx(2 / 3)
    assert got["a"].intervals["pass"].method == "wilson"


def test_gold_documents_make_the_clusters(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        '{"id": "x0", "text": "a", "doc": "envíos.md"}\n{"id": "x1", "text": "b", "doc": "envíos.md"}\n'
        '{"id": "x2", "text": "c"}\n',
        encoding="utf-8",
    )
    recs = [
        _rec(0, "supported-correct"),
        _rec(1, "wrong-answer"),
        _rec(2, "wrong-answer"),
        _rec(3, "x", unans=True),
    ]
    lab = clus.for_records(recs, "doc", corpus)
    assert lab == {"c0": "doc:envíos.md", "c1": "doc:envíos.md", "c2": "case:c2", "c3": "case:c3"}
    assert clus.for_records(recs, "none", corpus) is None
    assert "2 cases share 1 documents" in clus.describe(lab, "doc")


# ------------------------------------------------------------------ two runs


def _runs(both: int, worse: int, better: int, neither: int):
    a, b = [], []
    for i, (pa, pb) in enumerate([(1, 1)] * both + [(1, 0)] * worse + [(0, 1)] * better + [(0, 0)] * neither):
        a.append(_rec(i, "supported-correct" if pa else "wrong-answer"))
        b.append(_rec(i, "supported-correct" if pb else "wrong-answer"))
    return a, b


def test_the_worked_pair_of_runs_is_a_real_regression_with_its_numbers():
    a, b = _runs(150, 9, 2, 39)
    rc = compare_runs(a, b, ["pass"], clusters_note="cases resampled one by one (no clusters)")
    assert rc.verdict == REGRESSION
    line = verdict_line(rc)
    assert line == "verdict: a real regression — pass −3.5 pp [−7.1, −0.1], one-sided p 0.019 < α 0.05"
    assert "9 ↓ / 2 ↑" in render_text(rc)


def test_missing_and_errored_cases_count_as_failures_and_are_listed():
    a, b = _runs(10, 0, 0, 0)
    b = b[:8] + [dict(b[8], reason="error")]  # c9 gone, c8 errored
    ids, va, vb, _ = paired_values(a, b, "pass")
    assert ids == [f"c{i}" for i in range(10)] and list(vb[-2:]) == [0.0, 0.0]
    rc = compare_runs(a, b)
    assert rc.only_a == ["c9"] and "1 only in A (failures in B): c9" in render_text(rc)


def test_four_flips_are_a_regression_and_three_are_not():
    a, b = _runs(196, 4, 0, 0)
    assert compare_runs(a, b).verdict == REGRESSION
    a, b = _runs(197, 3, 0, 0)
    assert compare_runs(a, b).verdict != REGRESSION


def test_conservative_uses_the_exact_test():
    a, b = _runs(196, 4, 0, 0)
    rc = compare_runs(a, b, options=Options(conservative=True))
    assert rc.verdict != REGRESSION  # exact p 0.063
    assert "exact McNemar" in render_text(rc)


def test_flips_inside_one_document_are_one_piece_of_evidence():
    a, b = _runs(196, 4, 0, 0)
    lab = {
        r["id"]: "doc:one" if r["id"] in ("c196", "c197", "c198", "c199") else f"case:{r['id']}" for r in a
    }
    assert compare_runs(a, b, clusters=lab).verdict != REGRESSION


def test_repeats_are_averaged_within_a_case():
    a, b = _runs(20, 0, 0, 0)
    for r in b[:10]:
        r["repeats"] = [{"reason": "wrong-answer"}, {"reason": "wrong-answer"}]  # passes 1 of 3
    ids, va, vb, rep = paired_values(a, b, "pass")
    assert rep and vb[0] == pytest.approx(1 / 3) and vb[15] == 1.0
    rc = compare_runs(a, b)
    assert rc.gate.comparisons[0].kind == "score"


def test_a_a_comparison_prints_the_noise_floor():
    a, b = _runs(180, 5, 6, 9)
    rc = compare_runs(a, b, same_system=True)
    assert rc.noise_floor is not None and "A/A" in render_text(rc)


def test_tags_are_compared_with_bh_labelled_exploratory():
    a, b = _runs(150, 9, 2, 39)
    tags = {r["id"]: ["<script>alert(1)</script>"] if int(r["id"][1:]) % 2 else ["b|c"] for r in a}
    rc = compare_runs(a, b, tags_of=tags)
    assert [s.name for s in rc.slices] == ["<script>alert(1)</script>", "b|c"]
    md = render_markdown(rc)
    assert "exploratory" in md and "<script>" not in md and "b\\|c" in md


def test_non_inferiority_with_a_margin():
    a, b = _runs(900, 5, 6, 89)
    rc = compare_runs(a, b, options=Options(margin=0.02))
    assert verdict_line(rc).startswith("verdict: no regression beyond δ = 2.0 pp — every lower bound")


def test_inconclusive_names_the_smallest_detectable_change():
    a, b = _runs(20, 2, 1, 7)
    line = verdict_line(compare_runs(a, b))
    assert (
        line.startswith("verdict: inconclusive — ") and "the smallest change this set can detect is" in line
    )


def test_hit_at_another_k_is_recomputed_from_the_rankings():
    cases = [Case(id=f"q{i}", question="?", expected=["a"]) for i in range(3)]
    res = [{"id": f"q{i}", "ranking": ["x", "a"] if i else ["a"], "answer": None} for i in range(3)]
    recs = [make_record(c, r, 1, {}.get, NL) for c, r in zip(cases, res)]
    ids, va, vb, _ = paired_values(recs, recs, "hit@2", k_a=1, k_b=1)
    assert list(va) == [1.0, 1.0, 1.0]
    ids, va, vb, _ = paired_values(recs, recs, "hit", k_a=1, k_b=1)
    assert list(va) == [1.0, 0.0, 0.0]


def test_the_apps_summary_panel_has_intervals_and_slices():
    from ragtriage.core.summary_panel import summary_panel

    recs = [_rec(i, "supported-correct" if i < 3 else "wrong-answer", topic="t\x1b[2J") for i in range(5)]
    tags = {"c0": ["a"], "c1": ["a"], "c2": ["b"], "c3": ["b"], "c4": ["a"]}
    panel = summary_panel(recs, 3, summarize(recs, 3), tags_of=tags)
    lines = panel.lines()
    assert lines[0] == "hit@3 1.000 [0.57, 1.00]".ljust(39) + "recall@3 1.000 [0.57, 1.00]"
    assert all(len(line) <= 78 for line in lines)  # fits an 80-column pane
    assert "correct 0.600 [0.23, 0.88]" in " ".join(lines)
    assert lines[5].startswith("95 % intervals; ")  # after the rates, before the slices
    at = lines.index("  a  n 3")
    assert lines[at + 1].startswith("    pass 0.667 [0.21, 0.94]") and "hit@3 1.000" in lines[at + 1]
    assert "correct 0.667 [0.21, 0.94]" in lines[at + 2]
    assert "  t\\x1b[2J  n 5" in lines  # a topic's escape shown, not obeyed
    assert lines[lines.index("  t\\x1b[2J  n 5") + 1].startswith("    pass 0.600 [0.23, 0.88]")


def test_the_panel_shows_the_intervals_and_slices_run_prints():
    from ragtriage.core.rates import slices, summary_intervals
    from ragtriage.core.summary_panel import cell, summary_panel

    recs = [
        _rec(i, ["supported-correct", "wrong-answer", "retrieval-miss"][i % 3], topic=f"t{i % 2}")
        for i in range(30)
    ]
    tags = {f"c{i}": ["x"] if i % 4 else ["y", "x"] for i in range(30)}
    panel = summary_panel(recs, 3, summarize(recs, 3), tags_of=tags)
    text = "\n".join(panel.lines())
    for m, iv in summary_intervals(recs, None).items():
        label = {"accuracy": "correct", "unknown_abstention": "unknown abstention"}.get(m, m)
        label += "@3" if m in ("hit", "recall", "mrr", "precision") else ""
        assert cell(label, summarize(recs, 3)[m], iv) in text, m
    for s in slices(recs, "tag", tags, None):
        assert f"  {s.name}  n {s.n}" in text
        assert cell("pass", s.rates["pass"], s.intervals["pass"]) in text


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["supported-correct", "retrieval-miss", "wrong-answer", "error", "unlabelled",
                                 "appropriate-abstention", "unanswerable-answered"]), min_size=1, max_size=25),
       st.booleans())  # fmt: skip
def test_the_one_pass_value_table_gives_the_values_of_case_values(reasons, abstain):
    from ragtriage.core.outcomes import value_table

    recs = [
        _rec(
            i,
            r,
            unans=r in ("appropriate-abstention", "unanswerable-answered"),
            hit=r != "retrieval-miss",
            abstained=abstain and i % 2 == 0,
        )  # fmt: skip
        for i, r in enumerate(reasons)
    ]
    table = value_table(recs)
    for m in RATE_METRICS:
        v = case_values(recs, m)
        idx, vals = table[m]
        assert [recs[i]["id"] for i in idx] == v.ids and list(vals) == v.values, m


def test_two_empty_runs_say_there_is_nothing_to_compare():
    rc = compare_runs([], [])
    assert rc.verdict == "inconclusive" and "pass: no case to compare" in verdict_line(rc)
    assert "NaN" not in render_text(rc)


def test_slices_read_once_give_each_slices_own_values_and_intervals():
    from ragtriage.core.outcomes import case_values
    from ragtriage.core.rates import SLICE_METRICS, interval_of, slice_members, slices

    reasons = ["supported-correct", "wrong-answer", "retrieval-miss", "error", "appropriate-abstention"]
    recs = [
        _rec(i, reasons[i % 5], topic=f"t{i % 3}", unans=reasons[i % 5] == "appropriate-abstention")
        for i in range(60)
    ]
    tags = {f"c{i}": (["x"] if i % 2 else []) + (["y"] if i % 3 == 0 else []) for i in range(60)}
    clusters = {f"c{i}": f"doc:{i % 12}" for i in range(60)}
    for by, tags_of in (("tag", tags), ("topic", None)):
        got = slices(recs, by, tags_of, clusters)
        members = slice_members(recs, by, tags_of)
        assert [s.name for s in got] == list(members)
        for s in got:
            for m in SLICE_METRICS:
                vals = case_values(members[s.name], m)
                if not vals.values:
                    assert m not in s.rates
                    continue
                assert s.rates[m] == pytest.approx(sum(vals.values) / len(vals.values))
                assert s.intervals[m] == interval_of(vals, clusters), (by, s.name, m)


def _slices_case_by_case(recs, by, tags, clusters):
    """The slices as defined: each slice's own case values and interval (the reference)."""
    from ragtriage.core.rates import SLICE_METRICS, slice_members

    out = {}
    for name, members in slice_members(recs, by, tags).items():
        for m in SLICE_METRICS:
            vals = case_values(members, m)
            if vals.values:
                out[name, m] = (sum(vals.values) / len(vals.values), interval_of(vals, clusters))
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["supported-correct", "wrong-answer", "retrieval-miss", "unlabelled", "error"]),
            st.booleans(),
            st.booleans(),
            st.integers(0, 5),
            st.sets(st.sampled_from("abc"), max_size=2),
        ),
        min_size=1,
        max_size=160,
    ),
    st.booleans(),
)
def test_slices_from_one_table_equal_each_slice_on_its_own(rows, clustered):
    """The slices are computed from one table of the whole run; every rate and interval
    must be the one the slice's own records give, bit for bit (clusters renumbered too)."""
    recs, tags = [], {}
    for i, (reason, unans, hit, doc, tag) in enumerate(rows):
        r = _rec(i, reason, unans=unans, hit=hit)
        if hit and not unans:  # scores that differ, so the bootstrap (not Wilson) decides
            r["rr"] = r["recall"] = 1 / (1 + doc)
        r["topic"] = f"t{doc % 3}"
        recs.append(r)
        tags[r["id"]] = sorted(tag)
    # 40 documents (more than the bootstrap's few-units floor), numbered against case order
    clusters = {r["id"]: f"doc:{(j * 7) % 40}" for j, r in enumerate(reversed(recs))} if clustered else None
    for by in ("tag", "topic"):
        want = _slices_case_by_case(recs, by, tags if by == "tag" else None, clusters)
        got = {}
        for s in slices(recs, by, tags if by == "tag" else None, clusters):
            for m, v in s.rates.items():
                got[s.name, m] = (v, s.intervals.get(m))
        assert got == want


def test_slices_from_one_table_resample_each_slice_as_on_its_own():
    """Large slices, many documents, scores that differ: the bootstrap decides the intervals,
    so a slice numbered or summed otherwise than on its own shows (seeded data)."""
    import random

    r = random.Random(7)
    recs, tags = [], {}
    for i in range(900):
        rec = _rec(i, r.choice(["supported-correct", "wrong-answer", "retrieval-miss"]), hit=r.random() < 0.7)
        if rec["hit"]:
            rec["rr"] = rec["recall"] = 1 / r.randint(1, 7)
        rec["topic"] = f"t{r.randrange(3)}"
        recs.append(rec)
        tags[rec["id"]] = sorted(r.sample("abc", r.randint(0, 2)))
    clusters = {rec["id"]: f"doc:{r.randrange(80)}" for rec in recs}
    for by in ("tag", "topic"):
        want = _slices_case_by_case(recs, by, tags if by == "tag" else None, clusters)
        got = {}
        for s in slices(recs, by, tags if by == "tag" else None, clusters):
            for m, v in s.rates.items():
                got[s.name, m] = (v, s.intervals.get(m))
        assert any("bootstrap over" in iv.method for _, iv in want.values())
        assert got == want
