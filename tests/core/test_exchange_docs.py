"""Document gold and quotes through export and import (formats.md, "Exchange"): every
format carries what it can, TREC document qrels with --level doc."""

from __future__ import annotations

import json

import pytest

from ragtriage.core.exchange import export_testset, read_import
from ragtriage.core.schema import Case
from tests.conftest import TESTSETS
from tests.core.test_exchange import load_plain

DOCS = TESTSETS / "folien-de" / "folien-de.yaml"
QUOTES = TESTSETS / "folien-de" / "folien-de-zitate.yaml"
CHUNKS = TESTSETS / "folien-de" / "folien-de.chunks.jsonl"


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "deepeval"])
@pytest.mark.parametrize("path", [DOCS, QUOTES], ids=["documents", "quotes"])
def test_every_case_field_survives_a_roundtrip(tmp_path, fmt, path):
    doc = load_plain(path)
    text, _ = export_testset(doc, fmt)
    p = tmp_path / f"out.{'json' if fmt == 'deepeval' else fmt}"
    p.write_text(text, encoding="utf-8")
    got = [Case(**c) for c in read_import(p, fmt).cases]
    assert got == list(doc.cases)


def test_ragas_reference_contexts_are_the_quotes_and_come_back_as_quotes(tmp_path):
    doc = load_plain(QUOTES)
    text, notes = export_testset(doc, "ragas")
    rows = [json.loads(x) for x in text.splitlines()]
    by_q = {c.question: c for c in doc.cases}
    for row in rows:
        assert row["reference_contexts"] == list(by_q[row["user_input"]].evidence)
    p = tmp_path / "q.ragas.jsonl"
    p.write_text(text, encoding="utf-8")
    back = read_import(p, "ragas", corpus_path=CHUNKS)  # a quote is no chunk's whole text
    assert [c.get("evidence", []) for c in back.cases] == [list(c.evidence) for c in doc.cases]
    # document gold has no place in ragas: said, not silently lost
    _, notes = export_testset(load_plain(DOCS), "ragas")
    assert any("expected_docs" in n for n in notes)


def test_trec_document_qrels_and_back(tmp_path):
    doc = load_plain(DOCS)
    text, notes = export_testset(doc, "trec", level="doc")
    assert "ausland-laptop 0 homeoffice.md 1\nausland-laptop 0 datenschutz.md 1\n" in text
    assert len(text.splitlines()) == sum(len(c.expected_docs) for c in doc.cases)
    p = tmp_path / "f.qrels"
    p.write_text(text, encoding="utf-8")
    back = {c["id"]: c["expected_docs"] for c in read_import(p, "trec", level="doc").cases}
    assert back == {c.id: list(c.expected_docs) for c in doc.cases if c.expected_docs}
    chunk_level, notes = export_testset(doc, "trec")
    assert chunk_level == "" and any("--level doc" in n for n in notes)


def test_a_document_name_with_spaces_is_one_trec_column(tmp_path):
    from ragtriage.core.exchange.trec import export_qrels

    text, _ = export_qrels([Case(id="q", question="q", expected_docs=["Folien 12.pptx"])], "doc")
    assert text == "q 0 Folien%2012.pptx 1\n"
    p = tmp_path / "x.qrels"
    p.write_text(text, encoding="utf-8")
    assert read_import(p, "trec", level="doc").cases[0]["expected_docs"] == ["Folien 12.pptx"]
