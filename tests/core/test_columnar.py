"""The columnar path (a results: source scored a block at a time) gives every case the
record the per-case path gives it, byte for byte: random runs with ties, repeated ids,
unanswerable and unlabelled cases, ``expect: all``, errors and missing lines, and cases
labelled by documents or by quotes (whose chunk gold the block does not compute)."""

from __future__ import annotations

import json
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragtriage.core.columnar import retrieval_block
from ragtriage.core.corpus import Chunk, Corpus
from ragtriage.core.evaluate import evaluate
from ragtriage.core.gold import Gold
from ragtriage.core.metrics import retrieval
from ragtriage.core.runfile import dump_record
from ragtriage.core.schema import Case, Settings
from ragtriage.core.scoring import make_record

POOL = ["a", "b", "c", "d", "e", "garantía-1", "rückgabe-1", "x"]
TEXTS = {
    "a": "El envío cuesta 3 €.",
    "b": "Llega en cinco días.",
    "c": "La garantía dura dos años.",
    "d": "Abrimos de 9 a 14.",
    "e": "Devoluciones en 14 días.",
    "garantía-1": "La garantía cubre 24 meses.",
    "rückgabe-1": "Rückgabe innerhalb von 30 Tagen.",
}

ids = st.sampled_from(POOL)
DOC_OF = {"a": "envios.md", "b": "envios.md", "c": "garantia.md", "d": "horario.md", "e": "envios.md"}
CORPUS = Corpus({cid: Chunk(cid, text, DOC_OF.get(cid)) for cid, text in TEXTS.items()})
QUOTES = ["El envío cuesta 3 €.", "Llega en cinco días.", "La garantía", "Nada de esto."]


@st.composite
def case_and_result(draw, i: int = 0):
    kind = draw(st.sampled_from(["one", "many", "all", "unanswerable", "unlabelled", "docs", "quotes"]))
    expected: list[str] = []
    if kind == "one" or kind == "docs" and draw(st.booleans()):  # (documents alone, or beside a chunk)
        expected = [draw(ids)]
    elif kind in ("many", "all"):
        expected = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    docs = draw(st.lists(st.sampled_from(["envios.md", "garantia.md", "horario.md"]), min_size=1, max_size=2,
                         unique=True)) if kind == "docs" else []  # fmt: skip
    quotes = (
        draw(st.lists(st.sampled_from(QUOTES), min_size=1, max_size=2, unique=True))
        if kind == "quotes"
        else []
    )
    case = Case(
        expected_docs=docs,
        evidence=quotes,
        id=f"q{i}",
        question="¿cuánto?",
        expected=expected,
        expect="all" if kind == "all" else "any",
        unanswerable=kind == "unanswerable",
        must_contain=draw(st.sampled_from([(), ("3 €",), ("cinco días",)])),
    )
    ranking = draw(st.lists(ids, max_size=12))  # repeats: the first position counts
    res: dict = {"id": case.id, "ranking": ranking}
    if draw(st.booleans()):
        tie = draw(st.booleans())  # equal scores never re-sort a ranking
        res["scores"] = [1.0 if tie else 1.0 - j / 20 for j in range(len(ranking))]
    answer = draw(
        st.sampled_from(
            [
                None,
                "No lo sé.",
                "El envío cuesta 3 € [a].",
                "Cuesta 4 € [a].",
                "Llega en cinco días [b]",
                "x [zz]",
            ]
        )
    )
    if answer is not None:
        res["answer"] = answer
    if draw(st.integers(0, 9)) == 0:
        res["error"] = "HTTP 500: boom"
    if draw(st.integers(0, 9)) == 0:
        res["supported"] = draw(st.booleans())
    if draw(st.integers(0, 9)) == 0 and ranking:
        res["prompt_ids"] = ranking[1:3]
    if draw(st.integers(0, 9)) == 0:
        res["trace"] = {"n": 1}
    return case, res


@st.composite
def runs(draw):
    n = draw(st.integers(1, 12))
    pairs = [draw(case_and_result(i)) for i in range(n)]
    return pairs, draw(st.integers(1, 6))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_a_block_scores_every_case_as_the_per_case_path(data):
    pairs, k = data
    cases = [c for c, _ in pairs]
    results = [r for _, r in pairs]
    block = retrieval_block(cases, results, k)
    for (case, res), got in zip(pairs, block):
        ret = retrieval(res.get("ranking") or [], case.expected, k, case.expect)
        assert got == (ret["rank"], ret["hit"], ret["precision"], ret["recall"], ret["rr"])
        assert [type(v) for v in got] == [type(ret[f]) for f in ("rank", "hit", "precision", "recall", "rr")]
        gold = Gold.of(cases, CORPUS)  # documents and quotes: the per-case fields of issue 24 too
        one = make_record(case, res, k, TEXTS.get, Settings(language="es"), gold=gold)
        many = make_record(case, res, k, TEXTS.get, Settings(language="es"), got, gold=gold)
        assert dump_record(one) == dump_record(many)  # every field, in the same order, byte for byte


def _write_system(tmp_path, results: list[dict]) -> str:
    """A python: system answering each question with the stored result (the per-case path)."""
    mod = tmp_path / "stored_answers.py"
    by_q = {r["question"]: {k: v for k, v in r.items() if k not in ("id", "question")} for r in results}
    mod.write_text(
        f"import json\nANSWERS = json.loads({json.dumps(json.dumps(by_q))})\n"
        "def answer(question, k):\n    return dict(ANSWERS[question])\n",
        encoding="utf-8",
    )
    return "python:stored_answers:answer"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs(), st.integers(0, 3))
def test_a_results_file_and_the_same_answers_asked_give_the_same_run_file(
    tmp_path_factory, monkeypatch, data, missing
):
    pairs, k = data
    tmp = tmp_path_factory.mktemp("run")
    monkeypatch.chdir(tmp)
    lines = ["version: 1", "language: es", "cases:"]
    for i, (case, _) in enumerate(pairs):
        lines.append(f"  - id: {case.id}\n    question: pregunta {i}")
        if case.expected:
            lines.append(f"    expected: [{', '.join(case.expected)}]")
            if case.expect == "all":
                lines.append("    expect: all")
        if case.unanswerable:
            lines.append("    unanswerable: true")
        if case.must_contain:
            lines.append(f"    must_contain: {json.dumps(list(case.must_contain), ensure_ascii=False)}")
    (tmp / "t.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    stored = []
    for i, (_, res) in enumerate(pairs):
        r = dict(res, question=f"pregunta {i}", latency_ms=1.0)  # the python: path measures latency
        stored.append(r)
    given_ = [r for i, r in enumerate(stored) if i % 5 != missing or len(stored) == 1]
    with open(tmp / "answers.jsonl", "w", encoding="utf-8") as f:
        for r in given_:
            f.write(json.dumps({k: v for k, v in r.items() if k != "question"}, ensure_ascii=False) + "\n")
    spec = _write_system(tmp, given_)
    sys.modules.pop("stored_answers", None)
    a = evaluate("t.yaml", "results:answers.jsonl", k, out=tmp / "a.jsonl")
    b = evaluate("t.yaml", spec, k, out=tmp / "b.jsonl", concurrency=3, retries=0)
    ra = {r["id"]: r for r in a.cases}
    rb = {r["id"]: r for r in b.cases}
    for cid in ra:
        if "error" in ra[cid] and ra[cid]["error"].startswith("no result for this case"):
            continue  # a missing line; the python: system raises KeyError there
        assert dump_record(ra[cid]) == dump_record(rb[cid])
