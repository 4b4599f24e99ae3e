"""The app's plain logic: the edit log and recovery file, the table's rows, filter and sort."""

from __future__ import annotations

import json

from ragtriage.core.document import TestSetDocument
from ragtriage.tui.data import find_stale, read_reasons
from ragtriage.tui.rows import CaseRows
from ragtriage.tui.session import Session, find_recovery, recovery_path


def test_each_edit_is_logged_to_the_recovery_file_and_replays(shop):
    s = Session(TestSetDocument.load(shop))
    s.update_case("domingo", notes="abre solo online")
    s.remove_case("precio-entrega")
    s.undo()
    s.add_case(None, id="horario", question="¿A qué hora abrís?", unanswerable=True)
    data = json.loads(recovery_path(shop).read_text("utf-8"))
    assert [op["op"] for op in data["ops"]] == ["update_case", "remove_case", "undo", "add_case"]

    rec = find_recovery(shop)
    assert rec is not None and len(rec) == 3 and not rec.base_changed
    fresh = Session(TestSetDocument.load(shop))
    applied, problems = fresh.replay(rec)
    assert (applied, problems) == (3, [])
    assert fresh.doc.text == s.doc.text


def test_save_clears_the_log_and_the_recovery_file(shop):
    s = Session(TestSetDocument.load(shop))
    s.update_case("domingo", notes="x")
    assert recovery_path(shop).exists()
    s.save()
    assert not recovery_path(shop).exists() and s.ops == [] and not s.dirty
    assert find_recovery(shop) is None


def test_a_recovery_made_on_another_version_of_the_file_says_so(shop):
    s = Session(TestSetDocument.load(shop))
    s.update_case("domingo", notes="x")
    shop.write_text(shop.read_text("utf-8") + "# edited elsewhere\n", "utf-8")
    assert find_recovery(shop).base_changed


def test_rows_flags_filter_sort_and_next_flagged(shop):
    doc = TestSetDocument.load(shop)
    rows = CaseRows.from_cases(doc.cases, stale={"reembolso"}, reasons={"devolucion": "retrieval-miss"})
    by_id = {r.id: r for r in rows.rows}
    assert by_id["domingo"].flags_text == "∅ unanswerable"
    assert by_id["reembolso"].flags_text == "⚠ stale"
    assert by_id["devolucion"].cell("reason") == "✗ retrieval-miss"
    rows.set_filter("PAGO")  # case-insensitive, over id, topic, question, chunk ids, tags
    assert [rows.visible(i).id for i in range(len(rows))] == ["contra-reembolso", "tarjeta-rechazada"]
    rows.set_filter("")
    rows.set_sort("id", reverse=True)
    assert rows.visible(0).id == "tarjeta-rechazada"
    rows.set_sort(None)
    assert rows.next_flagged(0) == 2  # devolucion (failed)
    assert rows.next_flagged(2) == 3  # reembolso (stale)


def test_stale_check_finds_a_moved_chunk(shop):
    from ragtriage.core.corpus import load_corpus

    doc = TestSetDocument.load(shop)
    corpus = load_corpus(shop.parent / "rechunked.chunks.jsonl")
    stale = find_stale(doc, corpus)
    assert [(e.case, e.label, e.status) for e in stale] == [("precio-entrega", "entrega-1", "moved")]
    assert stale[0].candidates[0][0] == "envios-oficina-1"


def test_stale_fallback_without_the_engine_finds_a_moved_chunk(shop, monkeypatch):
    import sys

    from ragtriage.core.corpus import load_corpus

    monkeypatch.setitem(sys.modules, "ragtriage.core.staleness", None)  # import fails
    doc = TestSetDocument.load(shop)
    corpus = load_corpus(shop.parent / "rechunked.chunks.jsonl")
    stale = find_stale(doc, corpus)
    assert [(e.case, e.label) for e in stale] == [("precio-entrega", "entrega-1")]
    assert stale[0].candidates[0][0] == "envios-oficina-1"


def test_read_reasons_skips_meta_and_summary(tmp_path):
    p = tmp_path / "run.jsonl"
    p.write_text('{"type":"meta"}\n{"type":"case","id":"a","reason":"retrieval-miss"}\n{"type":"summary"}\n')
    assert read_reasons(p) == {"a": "retrieval-miss"}


def test_the_filter_finds_passes_and_failures_by_word():
    from ragtriage.core.schema import Case
    from ragtriage.tui.rows import make_row

    cases = [Case(id=f"c{i}", question="q", expected=["x"]) for i in range(4)]
    reasons = ["wrong-answer", "supported-correct", "error", None]
    rows = CaseRows()
    rows.replace([make_row(c, reason=r) for c, r in zip(cases, reasons)])
    rows.set_filter("fail")
    assert [rows.visible(i).id for i in range(len(rows))] == ["c0"]
    rows.set_filter("pass")
    assert [rows.visible(i).id for i in range(len(rows))] == ["c1"]
