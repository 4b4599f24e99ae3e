"""Stale labels against real splitters, judged by offset ground truth (issue 11).

Three real pages (``testsets/pydocs``: the Python tutorial's *Data Structures* and *Errors
and Exceptions*, the library's *json*) are labelled against one chunking and re-chunked by
the splitters people use — langchain-text-splitters' ``RecursiveCharacterTextSplitter`` and
llama-index's ``SentenceSplitter`` — with ids reused (``json-7`` names other text after
re-chunking), with and without ``doc``/``start``/``end``, and after editing the pages: a
paragraph added on top (every offset moves), a word changed in some labelled paragraphs, a
section deleted. Every splitter gives each chunk's offsets in its page, and the edits are
known, so where each label's text lies now is known exactly. The contract: **no wrong
automatic fix** (the chunk a fix points at holds the labelled text, at the labelled place),
**no false ok**, and every id ``--fix`` writes holds the labelled text.
"""

from __future__ import annotations

import pytest

from ragtriage.core.text import normalize_text
from tests.core.stalekit import PAGES, SCENARIOS, Span, holds, run


@pytest.mark.parametrize("spans", [True, False], ids=["spans", "text-only"])
@pytest.mark.parametrize("old_name, new_name, kind", SCENARIOS)
def test_no_wrong_automatic_fix_and_no_false_ok(old_name, new_name, kind, spans):
    labelled, ed, new, report = run(old_name, new_name, kind, spans)
    by_id = {sp.id: sp for sp in labelled}
    wrong, false_ok, fixes = [], [], 0
    for e in report.labels:
        sp = by_id[e.label]
        lead, trail = len(sp.text) - len(sp.text.lstrip()), len(sp.text) - len(sp.text.rstrip())
        now = ed.moved(sp.doc, sp.start + lead, sp.end - trail)  # None: the text was edited or deleted
        if e.status == "ok":
            own = new[e.label]
            if normalize_text(own.text) != normalize_text(sp.text):
                false_ok.append(e.label)
        if e.fix != "auto":
            continue
        fixes += 1
        target = new[e.candidates[0][0]]
        at_place = (
            now is not None and target.doc == sp.doc and target.start <= now[0] and now[1] <= target.end
        )
        # a text the page holds twice (the same "Changed in version 3.6: ..." under two
        # functions) cannot be told apart by its words: either copy holds the labelled text
        repeated = PAGES[sp.doc].count(sp.text) > 1 or ed.pages[sp.doc].count(sp.text) > 1
        if not holds(target.text, sp.text) or not (at_place or repeated):
            wrong.append((e.label, e.status, target.id))
    assert wrong == [] and false_ok == []
    assert fixes > 0  # the check is not vacuous: re-chunking moved text that is still there
    new_expected, record = report.fix_plan()
    assert new_expected
    for case, ids in new_expected.items():
        label = by_id[case.removeprefix("q-")]
        for cid in ids:
            assert holds(new[cid].text, label.text), (case, cid)
            assert cid not in record or record[cid]["text"] == new[cid].text


@pytest.mark.parametrize("spans", [True, False], ids=["spans", "text-only"])
def test_labels_whose_text_was_edited_are_never_fixed_automatically(spans):
    labelled, ed, new, report = run("paragraphs", "langchain-800", "words", spans)
    by_id = {sp.id: sp for sp in labelled}
    edited = [
        e
        for e in report.labels
        if ed.moved(by_id[e.label].doc, by_id[e.label].start, by_id[e.label].end) is None
        and PAGES[by_id[e.label].doc].count(by_id[e.label].text) == 1  # not a repeated paragraph
    ]
    assert edited  # the scenario edits some labelled paragraphs
    for e in edited:
        assert e.fix != "auto" and e.status not in ("ok", "moved", "merged"), (e.label, e.status)
        assert e.candidates, e.label  # an edited text still shares content with some chunk


def test_a_blank_line_dropped_by_the_splitter_does_not_make_a_split_missing():
    """Old chunks of 800 characters hold several paragraphs; re-chunked by paragraph, the
    blank lines between them belong to no chunk: with spans as without, these are splits."""
    for spans in (True, False):
        labelled, _, new, report = run("langchain-800", "paragraphs", "none", spans)
        statuses = {e.label: e.status for e in report.labels}
        multi = [sp.id for sp in labelled if "\n\n" in sp.text]
        assert multi
        assert all(statuses[i] in ("split", "changed") for i in multi), spans
        for e in report.labels:
            if e.label in multi and e.expect == "all":
                covered = " ".join(normalize_text(new[c].text) for c, _ in e.candidates)
                assert normalize_text(by_text(labelled, e.label)) in covered


def by_text(labelled: list[Span], cid: str) -> str:
    return next(sp.text for sp in labelled if sp.id == cid)
