"""The stale review's plain helpers (ragtriage.tui.data): the engine's proposal, the hold-back
rule and the highlight of the remembered text, without Textual."""

from __future__ import annotations

from ragtriage.core.staleness import Fix, StaleEntry, Status
from ragtriage.tui.data import Proposal, held_back, proposal, remembered_spans


def _e(case, label, status, cands, fix, expect=None):
    return StaleEntry(case, label, status, [(c, 0.5) for c in cands], fix, expect)


def test_an_automatic_label_proposes_the_target_settle_gives():
    e = _e("a", "x-5", Status.CHANGED, ["x-0", "x-3"], Fix.AUTO)
    assert proposal([e], e) == Proposal(("x-0",), auto=True)


def test_an_automatic_fix_onto_an_id_still_stale_elsewhere_becomes_review_as_in_settle():
    e = _e("a", "x-5", Status.MERGED, ["x-18"], Fix.AUTO)
    other = _e("b", "x-18", Status.CHANGED, ["x-2", "x-3"], Fix.REVIEW, "all")
    p = proposal([e, other], e)
    assert p == Proposal(("x-18",))  # its only candidate, for a person: not automatic
    assert e.fix == Fix.AUTO  # the entries shown are not changed
    assert held_back([e, other], e, p.ids) == [other]


def test_a_split_proposes_every_candidate_with_expect_all_and_alternatives_propose_nothing():
    split = _e("a", "x-9", Status.SPLIT, ["x-0", "x-1"], Fix.REVIEW, "all")
    assert proposal([split], split) == Proposal(("x-0", "x-1"), expect_all=True)
    two = _e("b", "x-52", Status.MERGED, ["x-12", "x-13"], Fix.REVIEW)
    assert proposal([two], two) is None
    none = _e("c", "x-1", Status.MISSING, [], Fix.REVIEW)
    assert proposal([none], none) is None


def test_the_labels_own_id_is_not_held_back_by_the_cases_sharing_it():
    a = _e("a", "x-7", Status.MERGED, ["x-7"], Fix.AUTO)
    b = _e("b", "x-7", Status.MERGED, ["x-7"], Fix.AUTO)
    assert held_back([a, b], a, ["x-7"]) == []


def test_remembered_spans_cover_the_text_across_reflowed_lines_and_case():
    remembered = "Insert an item at a given position.\nThe first argument is the index."
    text = "list.insert(i, x) insert an item at a given\nposition. The first argument is the index. list.remove(x)"
    spans = remembered_spans(remembered, text)
    assert [text[s:e] for s, e in spans] == [
        "insert an item at a given\nposition. The first argument is the index."
    ]


def test_remembered_spans_of_split_pieces_and_of_unrelated_text():
    remembered = "one two three four five six seven eight"
    assert [
        ("one two three four five"[s:e]) for s, e in remembered_spans(remembered, "one two three four five")
    ] == ["one two three four five"]
    tail = "six seven eight and more"
    assert [tail[s:e] for s, e in remembered_spans(remembered, tail)] == ["six seven eight"]
    assert remembered_spans(remembered, "nothing of it here at all") == []
    assert remembered_spans(remembered, "two words") == []  # under three words in a row: no mark
    assert remembered_spans("Yes", "yes, that is it") == [(0, 4)]  # a short text: itself
