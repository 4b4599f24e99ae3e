"""Export/import: every format's round trip keeps what the format can carry; bad files are located."""

from __future__ import annotations

import csv
import io
import json
from types import SimpleNamespace

import pytest
import yaml

from ragtriage.core.errors import InputError
from ragtriage.core.exchange import (
    DUPLICATE_PREFIX,
    QUESTION_PLACEHOLDER,
    export_testset,
    export_trec_run,
    read_import,
)
from ragtriage.core.schema import CASE_FIELDS, Case, Label
from ragtriage.core.text import fingerprint
from tests.conftest import TESTSETS


def load_plain(path):
    """The test set's cases and labels, read without the document (enough for export)."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    return SimpleNamespace(
        cases=tuple(Case(**c) for c in data["cases"]),
        labels={k: Label(**v) for k, v in (data.get("labels") or {}).items()},
        corpus_path=path.parent / data["corpus"],
    )


TRICKY = SimpleNamespace(
    cases=(
        Case(
            id="garantía-1",
            question='¿Y si se rompe, "garantía"?\nSegunda línea, con coma; y punto y coma',
            topic="garantía | reparación",
            expected=("garantía-1", "garantía-2"),
            expect="all",
            must_contain=("2 años", "a | b", "[x]", " espacio "),
            answer="Sí.",
            tags=("ß", "día"),
            notes="línea 1\nlínea 2, «comillas»",
        ),
        Case(id="domingo", question="¿Abrís los domingos?", unanswerable=True, tags=("horario",)),
        Case(id="borrador", question="una pregunta sin etiquetar"),
        Case(id="q,4", question="with , comma", expected=("rückgabe-1",), must_contain=("14 Tagen",)),
    ),
    labels={
        "garantía-1": Label(
            sha=fingerprint("Dos años."),
            text="Dos años.",
            doc="g.md",
            start=0,
            end=9,
            when="2026-11-30T00:00:00Z",
            corpus="abc",
        ),
        "garantía-2": Label(sha=fingerprint("Escríbenos."), text="Escríbenos."),
        "rückgabe-1": Label(sha=fingerprint("14 Tage."), text="14 Tage."),
    },
    corpus_path=None,
)


def roundtrip(tmp_path, doc, fmt, corpus=None, suffix=None):
    text, notes = export_testset(doc, fmt, corpus_path=corpus)
    p = tmp_path / f"out.{suffix or fmt}"
    p.write_text(text, encoding="utf-8")
    return read_import(p, fmt, corpus_path=corpus), text, notes


def fields(c: Case, names):
    return {n: getattr(c, n) for n in names}


def as_case(d):
    return Case(**d)


@pytest.mark.parametrize(
    "doc",
    [TRICKY, load_plain(TESTSETS / "shop-es.yaml"), load_plain(TESTSETS / "shop-de.yaml")],
    ids=["tricky", "shop-es", "shop-de"],
)
def test_jsonl_roundtrip_keeps_every_field_and_label(tmp_path, doc):
    imp, text, notes = roundtrip(tmp_path, doc, "jsonl")
    assert [as_case(c) for c in imp.cases] == list(doc.cases)
    expected_ids = {cid for c in doc.cases for cid in c.expected}
    assert {k: Label(**v) for k, v in imp.labels.items()} == {
        k: v for k, v in doc.labels.items() if k in expected_ids
    }
    assert imp.notes == [] and notes == []
    first = json.loads(text.splitlines()[0])
    assert list(first) == [*CASE_FIELDS, "labels"]  # the flat form: every field on every line


@pytest.mark.parametrize("doc", [TRICKY, load_plain(TESTSETS / "shop-es.yaml")], ids=["tricky", "shop-es"])
def test_csv_roundtrip_keeps_every_case_field(tmp_path, doc):
    imp, text, notes = roundtrip(tmp_path, doc, "csv")
    assert [as_case(c) for c in imp.cases] == list(doc.cases)
    assert imp.labels == {}
    assert any("no labels" in n for n in notes)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == list(CASE_FIELDS)


def test_csv_lists_are_plain_when_possible(tmp_path):
    text, _ = export_testset(TRICKY, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["expected"] == "garantía-1 | garantía-2"
    assert json.loads(rows[0]["must_contain"]) == ["2 años", "a | b", "[x]", " espacio "]
    assert rows[0]["tags"] == "ß | día"
    assert rows[1]["unanswerable"] == "true" and rows[1]["expected"] == ""


def test_csv_written_by_a_spreadsheet(tmp_path):
    p = tmp_path / "sheet.csv"
    p.write_text(
        "\ufeffquestion;expected;Unanswerable;owner\n"
        "¿Cuánto cuesta?;entrega-1, entrega-2;;ana\n"
        "¿Domingo?;;sí;ana\n",
        encoding="utf-8",
    )
    imp = read_import(p, "csv")
    assert [c["id"] for c in imp.cases] == ["cuánto-cuesta", "domingo"]
    assert imp.cases[0]["expected"] == ["entrega-1", "entrega-2"]
    assert imp.cases[1]["unanswerable"] is True
    assert any("column(s) 'owner' are not case fields" in n for n in imp.notes)
    assert any("ids made from the question" in n for n in imp.notes)


@pytest.mark.parametrize("doc", [TRICKY, load_plain(TESTSETS / "shop-es.yaml")], ids=["tricky", "shop-es"])
def test_ragas_roundtrip_keeps_question_contexts_and_reference(tmp_path, doc):
    imp, text, notes = roundtrip(tmp_path, doc, "ragas", suffix="jsonl")
    assert len(imp.cases) == len(doc.cases)
    for got, want in zip(imp.cases, doc.cases):
        assert got["question"] == want.question
        assert tuple(got["expected"]) == want.expected
        assert got.get("answer") == want.answer
    # the context texts come back as remembered label texts
    for cid, label in imp.labels.items():
        assert label == doc.labels[cid].text
    rows = [json.loads(line) for line in text.splitlines()]
    assert set(rows[0]) <= {"user_input", "reference", "reference_contexts", "reference_context_ids"}
    assert any("must_contain" in n for n in notes)


def test_ragas_contexts_matched_to_chunks_by_text(tmp_path):
    corpus = TESTSETS / "shop-es.chunks.jsonl"
    chunks = {
        json.loads(l)["id"]: json.loads(l)["text"] for l in corpus.read_text(encoding="utf-8").splitlines()
    }
    p = tmp_path / "gen.jsonl"
    rows = [
        {
            "user_input": "¿Cuánto cuesta el envío?",
            "reference_contexts": [chunks["entrega-1"].upper()],
            "reference": "3 €",
            "synthesizer_name": "single_hop",
            "response": "x",
            "retrieved_contexts": ["y"],
        },
        {"user_input": "¿Y esto?", "reference_contexts": ["un texto que no está en ningún chunk"]},
    ]
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    imp = read_import(p, "ragas", corpus_path=corpus)
    assert imp.cases[0]["expected"] == ["entrega-1"]
    assert imp.cases[0]["tags"] == ["synthesizer_name:single_hop"]
    assert imp.cases[1]["expected"] == []  # no chunk's text: the passage is kept as a quote
    assert imp.cases[1]["evidence"] == ["un texto que no está en ningún chunk"]
    text = "\n".join(imp.notes)
    assert "`response` (1 row(s)) belongs to a run" in text
    assert "`retrieved_contexts` (1 row(s)) belongs to a run" in text
    assert "contexts that are no chunk's whole text: imported as `evidence` quotes: 1" in text
    assert "imported as drafts" not in text
    # without a corpus the texts cannot be mapped, and the report says how to fix it
    imp = read_import(p, "ragas")
    assert imp.cases[0]["expected"] == []
    assert any("give --corpus" in n for n in imp.notes)


@pytest.mark.parametrize("doc", [TRICKY, load_plain(TESTSETS / "shop-de.yaml")], ids=["tricky", "shop-de"])
def test_deepeval_roundtrip_keeps_every_case_field(tmp_path, doc):
    imp, text, notes = roundtrip(tmp_path, doc, "deepeval", suffix="json")
    assert [as_case(c) for c in imp.cases] == list(doc.cases)
    goldens = json.loads(text)
    assert set(goldens[0]) <= {"input", "expected_output", "context", "comments", "additional_metadata"}
    assert goldens[0]["input"] == doc.cases[0].question
    for cid, label in imp.labels.items():
        assert label == doc.labels[cid].text
    assert [n for n in imp.notes if "imported as drafts" not in n] == []


def test_deepeval_goldens_from_deepeval_itself(tmp_path):
    p = tmp_path / "goldens.json"
    p.write_text(
        json.dumps(
            {
                "goldens": [
                    {
                        "input": "What is the refund window?",
                        "expectedOutput": "14 days",
                        "context": ["Returns: 14 days."],
                        "actualOutput": "30 days",
                        "sourceFile": "returns.md",
                        "additionalMetadata": {"owner": "ana"},
                    },
                ]
            }
        ),
        encoding="utf-8",
    )
    imp = read_import(p, "deepeval")
    c = imp.cases[0]
    assert c["id"] == "what-is-the-refund-window" and c["answer"] == "14 days"
    assert c["notes"] == "source file: returns.md"
    text = "\n".join(imp.notes)
    assert "`actual_output` (1 golden(s)) belongs to a run" in text
    assert "additional_metadata `owner`" in text
    assert "`expected_output` → `answer`" in text


def test_deepeval_keeps_source_file_beside_comments(tmp_path):
    p = tmp_path / "goldens.json"
    golden = {"input": "Refund window?", "comments": "checked by ana", "source_file": "returns.md"}
    p.write_text(json.dumps([golden]), encoding="utf-8")
    notes = read_import(p, "deepeval").cases[0]["notes"]
    assert "checked by ana" in notes and "returns.md" in notes


def test_deepeval_own_jsonl_save_is_read(tmp_path):
    """deepeval's ``save_as(file_type="jsonl")`` writes one golden per line."""
    p = tmp_path / "goldens.jsonl"
    lines = [{"input": "Refund window?", "expected_output": "14 days"}, {"input": "Opening hours?"}]
    p.write_text("".join(json.dumps(g) + "\n" for g in lines), encoding="utf-8")
    imp = read_import(p, "deepeval")
    assert [c["question"] for c in imp.cases] == ["Refund window?", "Opening hours?"]
    assert imp.cases[0]["answer"] == "14 days"


def test_deeply_nested_import_is_located_not_a_traceback(tmp_path):
    p = tmp_path / "deep.jsonl"
    p.write_text('{"id": "a", "question": "q", "notes": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(InputError) as e:
        read_import(p, "jsonl")
    assert "nested too deeply" in str(e.value.problems[0])


def test_trec_ids_with_whitespace_stay_one_column():
    """trec_eval and ir_measures refuse lines with more than 6 (run) or 4 (qrels) columns."""
    run = export_trec_run([{"id": "q1", "ranking": ["doc a", "doc\tb"]}])
    assert all(len(line.split()) == 6 for line in run.splitlines())
    assert run.splitlines()[0].split()[:3] == ["q1", "Q0", "doc%20a"]


@pytest.mark.parametrize("cid", ["a b", "a\tb", "a%20b", "garantía 1", "x\u00a0y", "%", "a_b"])
def test_trec_ids_are_escaped_reversibly_never_onto_another_id(cid):
    """Issue 20: ``a b`` was written ``a_b``, the id of another real chunk."""
    from ragtriage.core.exchange.trec import trec_id, untrec_id

    col = trec_id(cid)
    assert len(col.split()) == 1 and untrec_id(col) == cid
    assert col == cid or trec_id(col) != col  # an escaped id is never an id written as it is
    for other in ["a_b", "a%20b", "a b", "ab", "garantía_1"]:
        if other != cid:
            assert trec_id(other) != col


def test_trec_eval_ranks_a_whitespace_id_as_ragtriage_does(tmp_path):
    """The ranking ``[a b, a_b]`` with ``a_b`` expected: ragtriage finds it at rank 2; the
    export must not make trec_eval see ``a_b`` at rank 1 (and count the duplicate slot)."""
    import pytrec_eval

    from ragtriage.core.exchange.trec import export_qrels
    from ragtriage.core.metrics import retrieval
    from ragtriage.core.schema import Case

    cases = [Case(id="q1", question="q?", expected=("a_b",))]
    recs = [{"id": "q1", "ranking": ["a b", "a_b", "c"]}]
    ours = retrieval(recs[0]["ranking"], ("a_b",), 3, "any")
    (tmp_path / "q.qrels").write_text(export_qrels(cases)[0], encoding="utf-8")
    (tmp_path / "r.run").write_text(export_trec_run(recs), encoding="utf-8")
    with open(tmp_path / "q.qrels") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(tmp_path / "r.run") as f:
        run = pytrec_eval.parse_run(f)
    got = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "P.1"}).evaluate(run)["q1"]
    assert ours["rr"] == got["recip_rank"] == 0.5
    assert got["P_1"] == 0.0


@pytest.mark.parametrize("doc", [TRICKY, load_plain(TESTSETS / "shop-es.yaml")], ids=["tricky", "shop-es"])
def test_trec_roundtrip_keeps_ids_and_expected(tmp_path, doc):
    imp, text, notes = roundtrip(tmp_path, doc, "trec", suffix="qrels")
    answerable = [c for c in doc.cases if c.expected]
    assert [(c["id"], tuple(c["expected"])) for c in imp.cases] == [(c.id, c.expected) for c in answerable]
    assert all(c["question"] == QUESTION_PLACEHOLDER for c in imp.cases)
    assert text.splitlines()[0].split() == [answerable[0].id, "0", answerable[0].expected[0], "1"]
    assert any("unanswerable" in n for n in notes)


def test_trec_qrels_with_zero_grades_and_beir_tsv(tmp_path):
    p = tmp_path / "q.qrels"
    p.write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 0\n", encoding="utf-8")
    imp = read_import(p, "trec")
    assert [(c["id"], c["expected"], c.get("unanswerable")) for c in imp.cases] == [
        ("q1", ["d1"], None),
        ("q2", [], True),
    ]
    p = tmp_path / "test.tsv"
    p.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    assert read_import(p, "trec").cases[0]["expected"] == ["d1"]


def test_trec_run_keeps_order_and_duplicate_slots():
    text = export_trec_run(
        [{"id": "q1", "ranking": ["a", "b", "a", "c"]}, {"id": "q2", "ranking": []}], tag="my run"
    )
    assert text.splitlines() == [
        "q1 Q0 a 1 4 my_run",
        "q1 Q0 b 2 3 my_run",
        f"q1 Q0 {DUPLICATE_PREFIX}3 3 2 my_run",
        "q1 Q0 c 4 1 my_run",
    ]


# ------------------------------------------------------------------ bad files


@pytest.mark.parametrize(
    "fmt, content, line, message",
    [
        (
            "jsonl",
            '{"id": "a", "question": "q"}\n{"id": "b", "question": ""}\n',
            2,
            "question: must not be empty",
        ),
        ("jsonl", '{"id": "a", "question": "q"}\n{nope\n', 2, "not valid JSON"),
        (
            "jsonl",
            '{"id": "a", "question": "q"}\n{"id": "a", "question": "r"}\n',
            2,
            "duplicate id 'a' (first at line 1)",
        ),
        (
            "jsonl",
            '{"id": "a", "question": "q", "unanswerable": true, "expected": ["x"]}\n',
            1,
            "unanswerable: true with expected",
        ),
        ("jsonl", '{"question": "q"}\n', 1, "id: is required"),
        (
            "jsonl",
            '{"id": "a", "question": "q", "expeced": ["x"]}\n',
            1,
            "case 'a': expeced: unknown field (did you mean 'expected'?)",
        ),
        ("jsonl", '{"id": "a", "question": "q", "tags": 3}\n', 1, "tags: Input should be a list"),
        ("csv", "id,question,unanswerable\na,q,maybe\n", 2, "'maybe' is not true/false"),
        ("csv", "id,question\na,q\n\"b,\"x\n", 3, "q"),
        ("csv", "id,text\na,q\n", 1, "no `question` column"),
        ("csv", 'id,question,must_contain\na,q,"[1, 2"\n', 2, "not a JSON array of strings"),
        ("csv", "id,question\na,\"line one\nline two\"\nb has space,q\n", 4, "contains whitespace"),
        (
            "ragas",
            '{"user_input": "q"}\n{"user_input": [{"content": "hi", "type": "human"}]}\n',
            2,
            "multi-turn",
        ),
        ("ragas", '{"reference": "x"}\n', 1, "user_input: is required"),
        (
            "ragas",
            '{"user_input": "q", "reference_contexts": "not a list", "reference_context_ids": [1, {}]}\n',
            1,
            "must be a list of strings",
        ),
        ("deepeval", '[\n  {"input": "q"},\n  {"input": ""}\n]\n', 3, "input: is required"),
        (
            "deepeval",
            '[\n  {"input": "q",\n   "additional_metadata": {"id": "x", "expect": "some"}}\n]\n',
            2,
            "expect",
        ),
        ("deepeval", '"q"\n', 1, "expected a JSON array"),
        ("deepeval", '{"input": "q"}\n{"input": ""}\n', 2, "input: is required"),
        ("deepeval", '[{"input": "q"},\n {"input": "r"\n]\n', 3, "not valid JSON"),
        ("trec", "q1 0 d1 1\nq1 d2\n", 2, "expected 4 columns"),
        ("trec", "q1 0 d1 high\n", 1, "relevance 'high' is not a number"),
    ],
)
def test_bad_files_are_located(tmp_path, fmt, content, line, message):
    p = tmp_path / f"bad.{fmt}"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_import(p, fmt)
    text = "\n".join(map(str, e.value.problems))
    assert message in text
    assert any(pr.file == str(p) and pr.line == line for pr in e.value.problems), text


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "ragas", "deepeval", "trec"])
def test_binary_empty_and_missing_files(tmp_path, fmt):
    p = tmp_path / "bin"
    p.write_bytes(b"\x00\x01\x02")
    with pytest.raises(InputError, match="not a text file"):
        read_import(p, fmt)
    p = tmp_path / "empty"
    p.write_text("" if fmt != "deepeval" else "[]", encoding="utf-8")
    with pytest.raises(InputError, match="no cases found|empty file"):
        read_import(p, fmt)
    with pytest.raises(InputError, match="file not found"):
        read_import(tmp_path / "missing", fmt)
    p = tmp_path / "latin1"
    p.write_bytes("id,question\na,caf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8") as e:
        read_import(p, fmt)
    assert e.value.problems[0].line == 2


# ------------------------------------------------------------------ cross-check with trec_eval


def test_trec_export_scored_by_trec_eval_matches_ragtriage(tmp_path):
    """Exported qrels + run, scored by trec_eval (pytrec-eval-terrier), give ragtriage's own
    P@k, recall@k and RR@k per question. The run file writes the given order as scores and
    a repeated chunk as a never-relevant placeholder, so trec_eval's re-sort by score and
    its handling of duplicates cannot move anything: duplicates are included here too."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    import random

    from ragtriage.core.exchange import export_qrels
    from ragtriage.core.metrics import retrieval

    rng = random.Random(7)
    pool = [f"c{i}" for i in range(40)]
    cases, records = [], []
    for i in range(60):
        expected = tuple(rng.sample(pool, rng.randint(1, 4)))
        depth = rng.randint(0, 12)
        ranking = [rng.choice(pool) for _ in range(depth)]  # may repeat ids, may be shorter than k
        if i % 5 == 0 and ranking:
            ranking.insert(rng.randrange(len(ranking)), expected[0])
        cases.append(Case(id=f"q{i}", question=f"question {i}", expected=expected))
        records.append({"id": f"q{i}", "ranking": ranking})
    qrels_text, _ = export_qrels(cases)
    (tmp_path / "x.qrels").write_text(qrels_text, encoding="utf-8")
    with open(tmp_path / "x.qrels", encoding="utf-8") as f:
        qrels = pytrec_eval.parse_qrel(f)
    assert any(len(set(r["ranking"])) < len(r["ranking"]) for r in records)  # duplicates are exercised
    for k in (1, 3, 5, 10):
        # RR@k: trec_eval's recip_rank has no cut-off, so it scores the run cut at k
        cut = [{"id": r["id"], "ranking": r["ranking"][:k]} for r in records]
        (tmp_path / f"k{k}.run").write_text(export_trec_run(cut), encoding="utf-8")
        (tmp_path / "full.run").write_text(export_trec_run(records), encoding="utf-8")
        with open(tmp_path / "full.run", encoding="utf-8") as f:
            run = pytrec_eval.parse_run(f)
        with open(tmp_path / f"k{k}.run", encoding="utf-8") as f:
            run_k = pytrec_eval.parse_run(f)
        full = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{k}", f"recall.{k}"}).evaluate(run)
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run_k)
        compared = 0
        for case, rec in zip(cases, records):
            ours = retrieval(rec["ranking"], case.expected, k)
            if case.id not in full:  # trec_eval leaves out questions with an empty ranking
                assert rec["ranking"] == []
                assert ours["precision"] == ours["recall"] == ours["rr"] == 0
                continue
            assert full[case.id][f"P_{k}"] == pytest.approx(ours["precision"]), (case.id, k)
            assert full[case.id][f"recall_{k}"] == pytest.approx(ours["recall"]), (case.id, k)
            assert rr.get(case.id, {"recip_rank": 0.0})["recip_rank"] == pytest.approx(ours["rr"]), (
                case.id,
                k,
            )
            compared += 1
        assert compared >= 50


@pytest.mark.parametrize(
    "questions, want",
    [
        ([c.question for c in load_plain(TESTSETS / "shop-es.yaml").cases], "es"),
        ([c.question for c in load_plain(TESTSETS / "shop-de.yaml").cases], "de"),
        (["What is the refund window?", "How long does the delivery take to my house?"], "en"),
        (
            [
                "Hoe lang duurt de levering naar mijn huis?",
                "Kan ik met een kaart betalen als het pakket er is?",
            ],
            "nl",
        ),
        (["q1", "q2"], None),
    ],
)
def test_guess_language(questions, want):
    from ragtriage.core.exchange import guess_language

    assert guess_language(questions) == want


def test_exchange_package_names_resolve_and_formats_are_the_clis():
    """Old import paths keep working through the package, and the CLI offers exactly FORMATS."""
    import ragtriage.core.exchange as exchange
    from ragtriage.cli import build_parser

    assert set(exchange.__all__) == {"FORMATS", *exchange._WHERE}
    for name in exchange.__all__:
        assert getattr(exchange, name) is not None
    with pytest.raises(AttributeError):
        exchange.no_such_name  # noqa: B018
    subs = next(a for a in build_parser()._actions if a.dest == "command").choices
    for cmd in ("export", "import"):
        fmt = next(a for a in subs[cmd]._actions if a.dest == "format")
        assert tuple(fmt.choices) == exchange.FORMATS


HOSTILE_IMPORTS = {
    "bom only": b"\xef\xbb\xbf",
    "nul": b"\x00" * 64,
    "not utf-8": b"\xff\xfe\xfa\n",
    "huge integer": b'{"id": "a", "question": "q", "k": ' + b"9" * 5000 + b"}\n",
    "deep nesting": b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
    "surrogate": b'{"id": "a", "question": "\\ud800", "user_input": "\\ud800", "input": "\\ud800"}\n',
    "array of numbers": b"[1, 2, 3]\n",
    "a string": b'"hello"\n',
    "one line of nothing": b"\n \n\t\n",
}


@pytest.mark.parametrize("content", sorted(HOSTILE_IMPORTS))
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "ragas", "deepeval", "trec"])
def test_hostile_import_files_are_located_problems(tmp_path, fmt, content):
    """Every reader: an InputError naming the file, never another exception."""
    p = tmp_path / f"hostile.{fmt}"
    p.write_bytes(HOSTILE_IMPORTS[content])
    with pytest.raises(InputError) as e:
        read_import(p, fmt)
    assert all(pr.file == str(p) for pr in e.value.problems)


@pytest.mark.parametrize("fmt", ["jsonl", "deepeval"])
def test_special_files_are_refused_as_imports(tmp_path, fmt):
    import os

    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path, "/dev/zero"):
        with pytest.raises(InputError):
            read_import(path, fmt)
