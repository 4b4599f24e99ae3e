"""`ragtriage export` / `ragtriage import`: round trips through files, reports, refusals, bad files."""

from __future__ import annotations

import json

import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.core.schema import CASE_FIELDS
from tests.conftest import TESTSETS

SHOP_ES = TESTSETS / "shop-es.yaml"
CORPUS_ES = TESTSETS / "shop-es.chunks.jsonl"

# what each format carries (case fields), besides the question
CARRIES = {
    "jsonl": CASE_FIELDS,
    "csv": CASE_FIELDS,
    "deepeval": CASE_FIELDS,
    "ragas": ("question", "expected", "answer"),
    "trec": ("id", "expected"),
}


def fields(case, names):
    return {n: getattr(case, n) for n in names}


@pytest.mark.parametrize("fmt", list(CARRIES))
def test_export_import_roundtrip_through_the_cli(cli, tmp_path, fmt):
    exported = tmp_path / f"shop.{fmt}"
    r = cli("export", SHOP_ES, "--format", fmt, "-o", exported)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "imported.yaml"
    r = cli("import", exported, "--format", fmt, "-o", out, "--corpus", CORPUS_ES)
    assert r.returncode == 0, r.stderr
    src = TestSetDocument.load(SHOP_ES, use_cache=False)
    new = TestSetDocument.load(out, use_cache=False)
    want = [c for c in src.cases if fmt != "trec" or c.expected]
    assert [fields(c, CARRIES[fmt]) for c in new.cases] == [fields(c, CARRIES[fmt]) for c in want]
    # the new test set is commented, points at the corpus, and has labels for what it expects
    assert new.text.startswith(f"# Imported from shop.{fmt} ({fmt}) by `ragtriage import`.")
    assert new.corpus_path.resolve() == CORPUS_ES.resolve()
    # Spanish questions make a Spanish test set (decline phrases, number words); qrels have no questions
    if fmt == "trec":
        assert new.settings.language == "en" and "set `language:`" in new.text
    else:
        assert new.settings.language == "es" and "language: es, guessed from the questions" in new.text
    expected = {cid for c in new.cases for cid in c.expected}
    assert set(new.labels) == expected
    for cid in expected:
        assert new.labels[cid].sha == src.labels[cid].sha
        assert new.labels[cid].text == src.labels[cid].text
    r = cli("validate", out)
    if fmt == "ragas":  # ragas cannot say "unanswerable": the Sunday case comes back as a draft to label
        assert r.returncode == 2
        assert [line for line in r.stderr.splitlines() if "a draft" not in line] == []
    else:
        assert r.returncode == 0, r.stderr


def test_jsonl_export_is_stable_through_import(cli, tmp_path):
    """export → import → export gives the same bytes: nothing is lost, nothing invented."""
    first = cli("export", SHOP_ES, "--format", "jsonl")
    assert first.returncode == 0, first.stderr
    (tmp_path / "a.jsonl").write_text(first.stdout, encoding="utf-8")
    r = cli("import", tmp_path / "a.jsonl", "--format", "jsonl", "-o", tmp_path / "b.yaml")
    assert r.returncode == 0, r.stderr
    second = cli("export", tmp_path / "b.yaml", "--format", "jsonl")
    assert second.stdout == first.stdout


def test_export_stdout_and_notes_on_stderr(cli):
    r = cli("export", SHOP_ES, "--format", "ragas")
    assert r.returncode == 0
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 8 and rows[0]["reference_context_ids"] == ["entrega-1"]
    assert "note: ragas has no place for case ids (8 case(s)); topic (8 case(s)); must_contain" in r.stderr


def test_export_trec_with_run_writes_qrels_and_run(cli, tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_text(
        json.dumps(
            {"type": "meta", "testset": str(SHOP_ES), "testset_hash": None, "system": "builtin", "k": 3}
        )
        + "\n"
        + json.dumps(
            {
                "type": "case",
                "id": "precio-entrega",
                "ranking": ["entrega-1", "pago-1"],
                "reason": "supported-correct",
            }
        )
        + "\n"
        + json.dumps({"type": "case", "id": "not-in-the-set", "ranking": ["x"], "reason": "wrong-answer"})
        + "\n",
        encoding="utf-8",
    )
    r = cli("export", SHOP_ES, "--format", "trec", "--run", run, "-o", tmp_path / "shop.qrels")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "shop.qrels").read_text(encoding="utf-8").splitlines()[
        0
    ] == "precio-entrega 0 entrega-1 1"
    assert (tmp_path / "shop.run").read_text(encoding="utf-8").splitlines() == [
        "precio-entrega Q0 entrega-1 1 2 builtin",
        "precio-entrega Q0 pago-1 2 1 builtin",
    ]


def test_export_ragas_with_run_carries_what_the_system_did(cli_in, tmp_path):
    """Issue 12 #21: a run's retrieved contexts and answers handed to ragas."""
    run = tmp_path / "run.jsonl"
    r = cli_in("run", SHOP_ES, "--out", run, "--quiet")
    assert r.returncode == 0, r.stderr
    r = cli_in("export", SHOP_ES, "--format", "ragas", "--run", run)
    assert r.returncode == 0, r.stderr
    samples = [json.loads(line) for line in r.stdout.splitlines()]
    records = {
        rec["id"]: rec for rec in map(json.loads, run.read_text().splitlines()) if rec["type"] == "case"
    }
    texts = {c["id"]: c["text"] for c in map(json.loads, CORPUS_ES.read_text().splitlines())}
    doc = TestSetDocument.load(SHOP_ES)
    assert len(samples) == len(doc.cases)
    for case, sample in zip(doc.cases, samples, strict=True):
        rec = records[case.id]
        assert sample["retrieved_context_ids"] == rec["ranking"][:3]  # the run's k (issue 20)
        assert sample["retrieved_contexts"] == [texts[cid] for cid in rec["ranking"][:3]]
        assert sample.get("response") == rec.get("answer")
    assert "the first 3 ranked chunks of each case (the run's k" in r.stderr


def test_export_ragas_writes_the_top_k_so_ragas_and_ragtriage_agree(cli_in, tmp_path):
    """Issue 20: the whole ranking as retrieved_context_ids made ragas report recall 1.000 where
    ragtriage said hit@3 0.967. Cut at the run's k, the share of cases whose expected chunk
    is among the exported ids is ragtriage's hit@k; --k cuts elsewhere."""
    run = tmp_path / "run.jsonl"
    assert cli_in("run", SHOP_ES, "--out", run, "--quiet", "--k", "2").returncode == 0
    lines = [json.loads(x) for x in run.read_text().splitlines()]
    summary = lines[-1]
    r = cli_in("export", SHOP_ES, "--format", "ragas", "--run", run)
    samples = [json.loads(line) for line in r.stdout.splitlines()]
    doc = TestSetDocument.load(SHOP_ES)
    found = [
        bool(set(c.expected) & set(s["retrieved_context_ids"]))
        for c, s in zip(doc.cases, samples, strict=True)
        if c.expected
    ]
    assert all(len(s["retrieved_context_ids"]) <= 2 for s in samples)
    assert sum(found) / len(found) == pytest.approx(summary["hit"])
    wide = cli_in("export", SHOP_ES, "--format", "ragas", "--run", run, "--k", "10")
    assert "the first 10 ranked chunks" in wide.stderr
    assert cli_in("export", SHOP_ES, "--format", "ragas", "--k", "3").returncode == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--format", "csv", "--run", "r.jsonl"], "--run: only with --format trec"),
        (["--format", "trec", "--run", "r.jsonl"], "--run: needs -o PATH"),
    ],
)
def test_export_refusals(cli, argv, message):
    r = cli("export", SHOP_ES, *argv)
    assert r.returncode == 2 and message in r.stderr


def test_import_reports_what_it_could_not_map(cli, tmp_path):
    src = tmp_path / "goldens.json"
    src.write_text(
        json.dumps(
            [
                {
                    "input": "¿Cuánto cuesta el envío a una oficina?",
                    "expected_output": "3 €",
                    "context": ["La entrega a una oficina de mensajería cuesta 3 €."],
                    "actual_output": "5 €",
                },
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    out = tmp_path / "new.yaml"
    r = cli("import", src, "--format", "deepeval", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "`actual_output` (1 golden(s)) belongs to a run" in r.stderr
    assert "give --corpus" in r.stderr
    doc = TestSetDocument.load(out, use_cache=False)
    assert doc.cases[0].id == "cuánto-cuesta-el-envío-a-una-oficina"
    assert doc.cases[0].answer == "3 €" and doc.cases[0].unlabelled
    assert "# - `actual_output` (1 golden(s)) belongs to a run" in doc.text


def test_import_never_overwrites_without_force(cli, tmp_path):
    out = tmp_path / "x.yaml"
    out.write_text("keep me\n", encoding="utf-8")
    exported = tmp_path / "e.csv"
    assert cli("export", SHOP_ES, "--format", "csv", "-o", exported).returncode == 0
    r = cli("import", exported, "--format", "csv", "-o", out)
    assert r.returncode == 2 and "already exists" in r.stderr
    assert out.read_text(encoding="utf-8") == "keep me\n"
    r = cli("import", exported, "--format", "csv", "-o", out, "--force")
    assert r.returncode == 0, r.stderr
    assert len(TestSetDocument.load(out, use_cache=False).cases) == 8


def test_import_bad_file_is_located_and_writes_nothing(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a", "question": "q"}\n{"id": "b", "question": "r", "expeced": ["x"], "tags": 3}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out.yaml"
    r = cli("import", bad, "--format", "jsonl", "-o", out)
    assert r.returncode == 2
    assert f"{bad}:2: case 'b': tags:" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()
    r = cli("import", tmp_path / "missing.csv", "--format", "csv", "-o", out)
    assert r.returncode == 2 and "file not found" in r.stderr and not out.exists()


def test_unwritable_outputs_exit_2_without_traceback(cli, tmp_path):
    r = cli("export", SHOP_ES, "--format", "csv", "-o", "/proc/ragtriage-test.csv")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "/proc/ragtriage-test.csv" in r.stderr
    r = cli("export", SHOP_ES, "--format", "csv", "-o", tmp_path)
    assert r.returncode == 2 and "is a folder" in r.stderr
    exported = tmp_path / "e.csv"
    assert cli("export", SHOP_ES, "--format", "csv", "-o", exported).returncode == 0
    r = cli("import", exported, "--format", "csv", "-o", tmp_path / "no" / "such" / "x.yaml")
    assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    r = cli("import", exported, "--format", "csv", "-o", tmp_path / "x.txt")
    assert r.returncode == 2 and "name it .yaml" in r.stderr
