"""Document-level gold (evaluation.md, "Documents and quotes"): the worked examples as
tests, and every document number against pytrec_eval and ir_measures on document qrels."""

from __future__ import annotations

import random

import ir_measures
import pytest
import pytrec_eval
from ir_measures import RR, P, R, Success

from ragtriage.core.corpus import Chunk, Corpus
from ragtriage.core.docrank import doc_ranking, doc_retrieval_at
from ragtriage.core.gate import Bar, measure
from ragtriage.core.gold import Gold
from ragtriage.core.outcomes import case_values
from ragtriage.core.schema import Case, Settings
from ragtriage.core.scoring import make_record
from ragtriage.core.summary import summarize

S = Settings(language="de")
DOCS = {"a1": "A", "a2": "A", "b1": "B", "c1": "C", "d1": "D", "x": None}
CORPUS = Corpus({cid: Chunk(cid, f"text {cid}", doc) for cid, doc in DOCS.items()})
GOLD = Gold.of([], CORPUS)


def rec(ranking, expected_docs, k, expect="any", **result):
    case = Case(id="q", question="wo steht das", expected_docs=expected_docs, expect=expect)
    return make_record(case, {"ranking": ranking, "answer": None, **result}, k, {}.get, S, gold=GOLD)


def doc_numbers(r):
    return (r["doc_rank"], r["doc_hit"], r["doc_precision"], r["doc_recall"], r["doc_rr"])


# ------------------------------------------------------------------ the worked examples


def test_a_document_at_ranks_1_and_4_counts_once_and_k_counts_documents():
    ranking = ["a1", "b1", "c1", "a2", "d1"]  # A, B, C, A again, D
    assert doc_ranking(ranking, GOLD.doc_of) == ["A", "B", "C", "D"]
    assert doc_numbers(rec(ranking, ["D"], 3)) == (4, False, 0.0, 0.0, 0.0)
    # k = 4 documents reaches D, the fifth chunk: the second A took no place
    assert doc_numbers(rec(ranking, ["D"], 4)) == (4, True, 0.25, 1.0, 0.25)
    assert doc_numbers(rec(ranking, ["A"], 1)) == (1, True, 1.0, 1.0, 1.0)


def test_a_chunk_without_doc_takes_a_place_and_is_never_expected():
    r = rec(["x", "a1", "b1"], ["B"], 2)
    assert r["doc_ranking"] == [None, "A", "B"]
    assert doc_numbers(r) == (3, False, 0.0, 0.0, 0.0)  # skipped, B would have been at 2
    assert doc_numbers(rec(["x", "a1", "b1"], ["B"], 3)) == (3, True, 1 / 3, 1.0, 1 / 3)
    # an id the corpus does not know is a document nobody knows either
    assert rec(["nowhere", "b1"], ["B"], 1)["doc_hit"] is False


def test_ties_keep_the_order_given():
    r = rec(["b1", "a1"], ["A"], 1, scores=[0.8, 0.8])
    assert doc_numbers(r) == (2, False, 0.0, 0.0, 0.0)
    # the peers disagree on that tie (so the cross-check below passes scores made from ranks):
    q = {"q": {"A": 1}}
    run = {"q": {"B": 0.8, "A": 0.8}}
    trec = pytrec_eval.RelevanceEvaluator(q, {"success.1"}).evaluate(run)["q"]["success_1"]
    irm = ir_measures.calc_aggregate([RR @ 1], [ir_measures.Qrel("q", "A", 1)],
                                     [ir_measures.ScoredDoc("q", d, s) for d, s in run["q"].items()])  # fmt: skip
    assert trec == 0.0 and irm[RR @ 1] == 1.0  # trec_eval: B first (ids descending); ir_measures: A


def test_expect_all_over_two_decks():
    docs = {"d1-3": "deck-1", "x9": "deck-9", "d1-1": "deck-1", "d2-5": "deck-2"}
    gold = Gold.of([], Corpus({c: Chunk(c, "t", d) for c, d in docs.items()}))
    case = Case(id="q", question="q", expected_docs=["deck-1", "deck-2"], expect="all")
    ranking = ["d1-3", "x9", "d1-1", "d2-5"]  # documents: deck-1, deck-9, deck-2

    def at(k):
        return doc_numbers(make_record(case, {"ranking": ranking, "answer": None}, k, {}.get, S, gold=gold))

    assert at(2) == (1, False, 0.5, 0.5, 1.0)
    assert at(3) == (1, True, 2 / 3, 1.0, 1.0)  # deck-2's chunk is the 4th chunk, the 3rd document


def test_the_systems_own_docs_win_over_the_corpus():
    r = rec(["a1", "b1"], ["Z"], 1, docs=["Z", None])
    assert r["doc_ranking"] == ["Z", None] and r["doc_hit"] is True
    # a document retriever: docs alone
    assert rec([], ["B"], 2, docs=["A", "B", "A"])["doc_ranking"] == ["A", "B"]


def test_the_summary_and_the_gate_of_a_set_labelled_only_by_documents():
    cases = [
        ("c1", ["a1", "b1", "c1", "a2", "d1"], ["D"]),  # doc rank 4
        ("c2", ["x", "a1", "b1"], ["B"]),  # doc rank 3
        ("c3", ["b1", "a1"], ["A"]),  # doc rank 2
        ("c4", ["c1"], ["C"]),  # doc rank 1
    ]
    recs = []
    for cid, ranking, want in cases:
        case = Case(id=cid, question="q", expected_docs=want)
        recs.append(make_record(case, {"ranking": ranking, "answer": "x"}, 3, {}.get, S, gold=GOLD))
    s = summarize(recs, 3)
    assert s["with_docs"] == 4 and s["with_chunks"] == 0 and s["hit"] is None
    assert s["doc_hit"] == 0.75  # c2, c3, c4 within 3 documents
    assert s["doc_mrr"] == pytest.approx((0 + 1 / 3 + 1 / 2 + 1) / 4)
    assert s["doc_precision"] == pytest.approx(1 / 3 * 3 / 4)
    assert s["doc_recall"] == 0.75
    assert [r["reason"] for r in recs][0] == "retrieval-miss"  # the document is not in the top 3
    assert recs[3]["reason"] != "unlabelled"
    bars = [Bar("doc_hit@4", "doc_hit", 4, 1.0, "--min"), Bar("doc_mrr", "doc_mrr", None, 0.45, "gates")]
    got = measure(bars, recs, s, 3)
    assert got[0].value == 1.0 and got[0].passed  # every document within 4
    assert got[1].value == pytest.approx(s["doc_mrr"]) and got[1].passed
    assert case_values(recs, "doc_hit@1").values == [0.0, 0.0, 0.0, 1.0]
    assert doc_retrieval_at(recs, 2)["doc_hit"] == 0.5


# ------------------------------------------------------------------ the peers


def _random_set(seed: int, n: int = 300):
    rnd = random.Random(seed)
    chunk_doc = {f"c{i}": (f"D{rnd.randrange(25)}" if rnd.random() > 0.15 else None) for i in range(200)}
    gold = Gold.of([], Corpus({c: Chunk(c, "t", d) for c, d in chunk_doc.items()}))
    out = []
    for q in range(n):
        ranking = list(dict.fromkeys(rnd.choice(list(chunk_doc)) for _ in range(rnd.randrange(0, 15))))
        want = rnd.sample([f"D{i}" for i in range(25)], rnd.randrange(1, 4))
        expect = rnd.choice(["any", "all"])
        out.append((Case(id=f"q{q}", question="q", expected_docs=want, expect=expect), ranking))
    return out, gold


@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_every_document_number_equals_pytrec_eval_and_ir_measures(k):
    cases, gold = _random_set(k)
    qrels = {c.id: {d: 1 for d in c.expected_docs} for c, _ in cases}
    run, recs = {}, []
    for c, ranking in cases:
        r = make_record(c, {"ranking": ranking, "answer": None}, k, {}.get, S, gold=gold)
        recs.append(r)
        docs = [d if d is not None else f"__no-doc-{i}" for i, d in enumerate(r["doc_ranking"])]
        run[c.id] = {d: float(len(docs) - i) for i, d in enumerate(docs)}  # scores from ranks: no ties
    trec = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{k}", f"recall.{k}", "recip_rank"}).evaluate(run)
    qrel_list = [ir_measures.Qrel(q, d, 1) for q, ds in qrels.items() for d in ds]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    irm: dict = {}
    for m in ir_measures.iter_calc([P @ k, R @ k, RR @ k, Success @ k], qrel_list, scored):
        irm[(m.query_id, str(m.measure))] = m.value
    compared = 0
    for c, r in zip((c for c, _ in cases), recs):
        t = trec.get(c.id, {})
        q = c.id
        assert (
            r["doc_precision"]
            == pytest.approx(t.get(f"P_{k}", 0.0))
            == pytest.approx(irm.get((q, f"P@{k}"), 0.0))
        )
        assert (
            r["doc_recall"]
            == pytest.approx(t.get(f"recall_{k}", 0.0))
            == pytest.approx(irm.get((q, f"R@{k}"), 0.0))
        )
        assert r["doc_rr"] == pytest.approx(irm.get((q, f"RR@{k}"), 0.0))
        full = t.get("recip_rank", 0.0)
        assert r["doc_rank"] == (round(1 / full) if full else 0)
        want = (
            irm.get((q, f"R@{k}"), 0.0) == 1.0
            if c.expect == "all"
            else irm.get((q, f"Success@{k}"), 0.0) == 1.0
        )
        assert r["doc_hit"] is want
        compared += 6
    s = summarize(recs, k)
    agg = ir_measures.calc_aggregate([P @ k, R @ k, RR @ k, Success @ k], qrel_list, scored)
    assert s["doc_precision"] == pytest.approx(agg[P @ k])
    assert s["doc_recall"] == pytest.approx(agg[R @ k])
    assert s["doc_mrr"] == pytest.approx(agg[RR @ k])
    assert compared == 6 * len(cases)
