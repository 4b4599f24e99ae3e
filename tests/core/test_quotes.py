"""Evidence quotes (formats.md §1 ``evidence``, evaluation.md "Documents and quotes"):
resolution, scoring, the run file, and re-chunking with real splitters."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import ragtriage
from ragtriage.core.corpus import Chunk, Corpus
from ragtriage.core.gold import Gold
from ragtriage.core.quote_check import check_quotes
from ragtriage.core.quotes import contains, norm, resolve_cases
from ragtriage.core.schema import Case, Settings
from ragtriage.core.scoring import make_record, rescore
from ragtriage.core.testset.document import TestSetDocument

from . import deckkit

S = Settings(language="de")
CHUNKS = [
    Chunk("r-1", "Die Rückgabe ist 30 Tage lang möglich. Das Geld ist in fünf Werktagen zurück.", "rueck.md"),
    Chunk("r-2", "Bitte legen Sie den Kassenbon bei, denn ohne den Bon ist leider keine", "rueck.md"),
    Chunk("r-3", "Erstattung des Kaufpreises möglich. Danke für Ihren Einkauf!", "rueck.md"),
    Chunk("f-1", "Häufige Fragen. Das Geld ist in fünf Werktagen zurück.", "faq.md"),
    Chunk("v-1", "Die Version 2.5 ist erschienen. Wir liefern in Maßen.", "news.md"),
]
CORPUS = Corpus({c.id: c for c in CHUNKS})
SPLIT = "denn ohne den Bon ist leider keine Erstattung des Kaufpreises möglich."


def gold_of(*cases):
    return {
        cid: (g.resolutions[0].status, g.ids, g.expect) for cid, g in resolve_cases(cases, CHUNKS).items()
    }


def test_a_quote_resolves_to_the_chunks_that_hold_it():
    got = gold_of(
        Case(id="one", question="q", evidence=["Die Rückgabe ist 30 Tage\n lang möglich."]),  # whitespace
        Case(id="split", question="q", evidence=[SPLIT]),
        Case(id="two-docs", question="q", evidence=["Das Geld ist in fünf Werktagen zurück."]),
        Case(id="narrowed", question="q", evidence=["Das Geld ist in fünf Werktagen zurück."], expected_docs=["faq.md"]),
        Case(id="elsewhere", question="q", evidence=["Die Rückgabe ist 30 Tage lang möglich."], expected_docs=["faq.md"]),
        Case(id="edited", question="q", evidence=["Die Rückgabe ist 40 Tage lang möglich."]),
    )  # fmt: skip
    assert got == {
        "one": ("found", ("r-1",), "any"),
        "split": ("split", ("r-2", "r-3"), "all"),  # a quote over two chunks needs both
        "two-docs": ("ambiguous", (), "any"),  # several documents: never guessed
        "narrowed": ("found", ("f-1",), "any"),  # the case's documents choose
        "elsewhere": ("elsewhere", (), "any"),
        "edited": ("missing", (), "any"),
    }


def test_the_one_rule_of_the_stale_check_token_boundaries_no_casefold():
    assert contains("Die Version 2.5 ist erschienen.", "Die Version 2.5 ist")
    assert not contains("Die Version 2.5 ist erschienen.", "Die Version 2.")  # not inside a number
    assert not contains("Wir liefern in Maßen.", "liefern in massen")  # case and ß are the text
    assert contains("Wir  liefern\nin Maßen.", "liefern in Maßen")
    assert contains("Cafe\u0301 offen", "Café offen")  # NFC on both sides
    got = gold_of(
        Case(id="v", question="q", evidence=["Die Version 2."]),
        Case(id="w", question="q", evidence=["in Maßen"]),
    )
    assert got == {"v": ("missing", (), "any"), "w": ("found", ("v-1",), "any")}


def test_stale_shows_candidates_for_what_no_longer_resolves():
    cases = [Case(id="e", question="q", evidence=["Die Rückgabe ist 40 Tage lang möglich."]),
             Case(id="a", question="q", evidence=["Das Geld ist in fünf Werktagen zurück."])]  # fmt: skip
    rep = check_quotes(cases, CORPUS)
    missing, ambiguous = rep.unresolved
    assert missing.resolution.status == "missing" and missing.resolution.candidates[0][0] == "r-1"
    assert ambiguous.resolution.status == "ambiguous"
    assert {(i, d) for i, _s, d in ambiguous.resolution.candidates} == {
        ("r-1", "rueck.md"),
        ("f-1", "faq.md"),
    }


def test_expected_and_evidence_that_disagree_is_a_warning_and_expected_scores():
    case = Case(id="x", question="q", expected=["r-2"], evidence=["Das Geld ist in fünf Werktagen zurück."],
                expected_docs=["rueck.md"])  # fmt: skip
    rep = check_quotes([case], CORPUS)
    assert [m for _, m in rep.disagreements] == [
        "evidence 'Das Geld ist in fünf Werktagen zurück.' is in r-1, which `expected` does not name"
    ]
    rec = make_record(case, {"ranking": ["r-1"], "answer": None}, 1, {}.get, S, gold=Gold.of([case], CORPUS))
    assert rec["expected"] == ["r-2"] and rec["hit"] is False  # `expected` is the gold; the quote is shown
    assert rec["evidence"][0]["chunks"] == ["r-1"]


def test_a_case_labelled_by_quotes_scores_as_one_labelled_by_their_chunks():
    by_quote = Case(id="q", question="q", evidence=[SPLIT], must_contain=["Bon"])
    by_ids = Case(id="q", question="q", expected=["r-2", "r-3"], expect="all", must_contain=["Bon"])
    gold = Gold.of([by_quote], CORPUS)
    for ranking in (["r-2", "r-3"], ["r-3", "x", "r-2"], ["r-1"], []):
        res = {"ranking": ranking, "answer": "Ohne den Bon keine Erstattung. [r-2]"}
        a = make_record(by_quote, res, 2, {}.get, S, gold=gold)
        b = make_record(by_ids, res, 2, {}.get, S)
        fields = ("expected", "expect", "rank", "hit", "precision", "recall", "rr", "reason")
        assert {f: a.get(f) for f in fields} == {f: b.get(f) for f in fields}, ranking
    # stored: rescored where the corpus is not at hand, the run's own resolution is used
    again = rescore(a, by_quote, 2, {}.get, S)
    assert again["expected"] == ["r-2", "r-3"] and again["evidence"] == a["evidence"]


def test_a_quote_that_does_not_resolve_leaves_the_case_unscored():
    case = Case(id="q", question="q", evidence=[SPLIT, "Die Rückgabe ist 40 Tage lang möglich."])
    rec = make_record(
        case, {"ranking": ["r-2", "r-3"], "answer": None}, 3, {}.get, S, gold=Gold.of([case], CORPUS)
    )
    assert rec["reason"] == "unlabelled" and rec["expected"] == []  # a partial gold would be a guess
    assert [e["status"] for e in rec["evidence"]] == ["split", "missing"]


# ------------------------------------------------------------------ the demo, re-chunked


def _covered(quote: str, pieces: list[str]) -> bool:
    """Do consecutive chunk texts together hold ``quote``: the first ends with its start, the
    last starts with its end, the ones between lie inside it (a splitter's overlap allowed)?"""
    q, ts = norm(quote), [norm(t) for t in pieces]
    first = max((k for k in range(1, len(q)) if ts[0].endswith(q[:k])), default=0)
    last = max((k for k in range(1, len(q)) if ts[-1].startswith(q[-k:])), default=0)
    spans = [(0, first), (len(q) - last, len(q))] + [(q.find(t), q.find(t) + len(t)) for t in ts[1:-1]]
    end = 0
    for a, b in sorted(spans):
        if a < 0 or a > end + 1:
            return False
        end = max(end, b)
    return end == len(q)


def _copy_demo(tmp_path: Path, chunks: list[dict]) -> Path:
    dst = tmp_path / "folien-de"
    shutil.copytree(deckkit.HERE, dst)
    deckkit.write_jsonl(chunks, dst / "folien-de.chunks.jsonl")
    return dst / "folien-de-zitate.yaml"


def test_the_committed_chunks_are_one_per_slide():
    lines = (deckkit.HERE / "folien-de.chunks.jsonl").read_text(encoding="utf-8").splitlines()
    import json

    assert [json.loads(x) for x in lines] == deckkit.slide_chunks()


@pytest.mark.parametrize("splitter", ["slides", "langchain", "llamaindex"])
def test_rechunking_leaves_every_quote_labelled_case_correct(tmp_path, splitter):
    chunks = {
        "slides": deckkit.slide_chunks,
        "langchain": deckkit.langchain_chunks,
        "llamaindex": deckkit.llamaindex_chunks,
    }[splitter]()
    path = _copy_demo(tmp_path, chunks)
    docs_of = {c.id: c.expected_docs for c in TestSetDocument.load(deckkit.HERE / "folien-de.yaml").cases}
    doc = TestSetDocument.load(path)
    text = {c["id"]: c["text"] for c in chunks}
    doc_of = {c["id"]: c["doc"] for c in chunks}
    report = check_quotes(doc.cases, path.parent / "folien-de.chunks.jsonl")
    assert not report.unresolved and len(report.entries) == 27
    for e in report.entries:
        r = e.resolution
        assert {doc_of[c] for c in r.chunks} <= set(docs_of[e.case])  # the right deck
        if r.status == "found":
            assert all(contains(text[c], r.quote) for c in r.chunks)
        else:  # split: the pieces together hold it (overlapping or not), and none alone does
            assert _covered(r.quote, [text[c] for c in r.chunks]), r
            assert not any(contains(text[c], r.quote) for c in r.chunks)
    run = ragtriage.evaluate(str(path), system="builtin", k=3)
    reasons = {c["id"]: c["reason"] for c in run.cases}
    assert "unlabelled" not in reasons.values()  # every quote-labelled case is scored, no fix needed
    assert run.summary["hit"] is not None and run.summary["answerable"] == 26
    for c in run.cases:
        if not c.get("unanswerable"):
            assert c["expected"] and all(doc_of[x] in docs_of[c["id"]] for x in c["expected"])
    if splitter == "langchain":  # its 160-character chunks cut some quotes in two: each needs both pieces
        assert report.counts.get("split", 0) >= 2
