"""The app's plain logic: the edit log and recovery file, the table's rows, filter and sort."""

from __future__ import annotations

import json

from ragtriage.core.document import TestSetDocument
from ragtriage.tui.edits import AddCase, Batch, RemoveCase, SetLabel, UpdateCase, edit_from_record
from ragtriage.tui.rows import CaseRows, make_row
from ragtriage.tui.session import Session, find_recovery, window_files
from ragtriage.tui.stale_state import check_labels_of


def test_each_edit_is_logged_to_the_recovery_file_and_replays(shop):
    s = Session(TestSetDocument.load(shop))
    s.apply(UpdateCase("domingo", {"notes": "abre solo online"}))
    s.apply(RemoveCase("precio-entrega"))
    s.undo()
    s.apply(AddCase(None, {"id": "horario", "question": "¿A qué hora abrís?", "unanswerable": True}))
    data = json.loads(s.recovery_file.read_text("utf-8"))
    assert [op["op"] for op in data["ops"]] == ["update_case", "remove_case", "undo", "add_case"]

    assert find_recovery(shop) is None  # this session's own file: never offered while it lives
    s.release_recovery()  # the window ends (what a crash does): the next one offers it
    rec = find_recovery(shop)
    assert rec is not None and len(rec) == 3 and not rec.base_changed
    fresh = Session(TestSetDocument.load(shop))
    applied, problems = fresh.replay(rec)
    assert (applied, problems) == (3, [])
    assert fresh.doc.text == s.doc.text


def test_each_edit_says_what_it_touched_and_only_the_fields_that_changed(shop):
    s = Session(TestSetDocument.load(shop))
    before = s.doc.case("reembolso")
    change = s.apply(UpdateCase("reembolso", {"unanswerable": True, "expected": None, "topic": before.topic}))
    assert change.cases == {"reembolso"} and change.labels == set(before.expected)
    assert change.what == "reembolso: expected, unanswerable"  # the topic did not change
    nothing = s.apply(UpdateCase("domingo", {"unanswerable": True}))  # already so
    assert nothing.edit is None and len(s.ops) == 1  # not a step: nothing to undo
    undone = s.undo()
    assert undone is not None and undone.what == change.what and undone.focus == "reembolso"
    assert s.doc.case("reembolso") == before
    renamed = s.apply(UpdateCase("domingo", {"id": "domingos"}))
    assert renamed.cases == {"domingo", "domingos"} and renamed.what == "domingo: renamed to domingos"


def test_a_batch_is_one_step_and_every_edit_reads_back_from_its_record(shop):
    s = Session(TestSetDocument.load(shop))
    batch = Batch((SetLabel("entrega-1", None), UpdateCase("domingo", {"notes": "x"})), "two fixes")
    change = s.apply(batch)
    assert change.labels >= {"entrega-1"} and change.what == "two fixes"
    assert s.undo() is not None and s.undo() is None  # one ctrl+z took both back
    for edit in (*batch.edits, batch, AddCase(3, {"id": "n", "question": "?"}), RemoveCase("x")):
        assert edit_from_record(edit.record()) == edit


def test_save_clears_the_log_and_the_recovery_file(shop):
    s = Session(TestSetDocument.load(shop))
    s.apply(UpdateCase("domingo", {"notes": "x"}))
    assert s.recovery_file.exists()
    s.save()
    assert not window_files(shop) and s.ops == [] and not s.dirty
    assert find_recovery(shop) is None


def test_an_edit_made_while_a_save_runs_stays_unsaved_and_logged(shop):
    s = Session(TestSetDocument.load(shop))
    s.apply(UpdateCase("domingo", {"notes": "saved"}))
    job = s.begin_save()  # the interface thread's half; the worker's follows
    s.apply(UpdateCase("domingo", {"notes": "typed during the save"}))
    s.finish_save(job.run())
    on_disk = TestSetDocument.load(shop, use_cache=False)
    assert on_disk.case("domingo").notes == "saved"
    assert s.dirty and s.doc.case("domingo").notes == "typed during the save"
    logged = json.loads(s.recovery_file.read_text("utf-8"))["ops"]
    assert [op["op"] for op in logged] == ["update_case"]  # only the unsaved one
    s.save()
    assert not s.dirty and not window_files(shop)


def test_a_recovery_made_on_another_version_of_the_file_says_so(shop):
    s = Session(TestSetDocument.load(shop))
    s.apply(UpdateCase("domingo", {"notes": "x"}))
    shop.write_text(shop.read_text("utf-8") + "# edited elsewhere\n", "utf-8")
    s.release_recovery()
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


def test_stale_check_finds_a_moved_chunk_and_checks_only_the_labels_asked(shop):
    from ragtriage.core.corpus import load_corpus

    doc = TestSetDocument.load(shop)
    corpus = load_corpus(shop.parent / "rechunked.chunks.jsonl")
    stale = check_labels_of(doc, corpus, None)
    assert [(e.case, e.label, e.status) for e in stale] == [("precio-entrega", "entrega-1", "moved")]
    assert stale[0].candidates[0][0] == "envios-oficina-1"
    assert check_labels_of(doc, corpus, frozenset({"entrega-1"})) == stale
    assert check_labels_of(doc, corpus, frozenset({"devolver-1"})) == []  # that one is fine


def test_rows_of_a_few_changed_cases_are_made_again_in_place(shop):
    doc = TestSetDocument.load(shop)
    rows = CaseRows.from_cases(doc.cases)
    ids = [c.id for c in doc.cases]
    new = make_row(doc.case("domingo"), stale=True)
    assert rows.update({"domingo": new}, ids.index)
    assert rows.rows[ids.index("domingo")] is new
    order = [*ids[:2], "nuevo", *ids[2:]]
    order.remove("reembolso")
    from ragtriage.core.schema import Case

    added = make_row(Case(id="nuevo", question="?"))
    assert rows.update({"nuevo": added, "reembolso": None}, order.index)
    assert [r.id for r in rows.rows] == order
    rows.set_filter("nuevo")
    assert [rows.visible(i).id for i in range(len(rows))] == ["nuevo"]
    assert not rows.update({"zzz": make_row(Case(id="zzz", question="?"))}, lambda _cid: 99)  # out of step


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


def test_the_expected_column_shows_documents_and_quotes_not_an_empty_cell():
    from ragtriage.core.schema import Case

    by_doc = make_row(Case(id="d", question="?", expected_docs=("garantía.md", "rückgabe.md")))
    assert by_doc.expected == "doc:garantía.md, doc:rückgabe.md"
    quote = "Die   Rücksendung ist innerhalb von 30 Tagen kostenlos"
    by_quote = make_row(Case(id="q", question="?", evidence=(quote,)))
    assert by_quote.expected == "“Die Rücksendung ist inn…”"  # spaces folded, 24 characters with the …
    mixed = make_row(
        Case(id="m", question="?", expected=("rückgabe-1",), expected_docs=("a.md",), evidence=("30 Tage",))
    )
    assert mixed.expected == "rückgabe-1, doc:a.md, “30 Tage”"
    assert "doc:a.md" in mixed.haystack and "30 tage" in mixed.haystack  # the filter finds them
    assert by_doc.flags == () and by_quote.flags == ()  # gold by document or quote is not a draft


def test_a_row_is_found_by_its_file_position_and_a_wrong_guess_still_finds_it(shop):
    """The Cases screen guesses a row's place from the file (one compare where a scan of
    100k ids took 7 ms); a wrong guess, an id not shown and repeated ids are still right."""
    from ragtriage.core.schema import Case

    doc = TestSetDocument.load(shop)
    ids = [c.id for c in doc.cases]
    guesses: list[str] = []

    def wrong(cid: str) -> int | None:
        guesses.append(cid)
        return 0  # always the first row

    for hint in (None, doc.index_of, wrong, lambda _cid: 10**6, lambda _cid: None):
        rows = CaseRows.from_cases(doc.cases)
        rows.hint = hint
        assert [rows.position_of(cid) for cid in ids] == list(range(len(ids)))
        assert rows.position_of("no-such-case") is None
        order = [*ids[:3], "nuevo", *ids[3:]]
        order.remove("reembolso")
        assert rows.update(
            {"nuevo": make_row(Case(id="nuevo", question="?")), "reembolso": None}, order.index
        )
        assert [rows.position_of(cid) for cid in order] == list(range(len(order)))
        assert rows.position_of("reembolso") is None
    assert "precio-entrega" in guesses
    twice = CaseRows([make_row(Case(id="a", question="?")), make_row(Case(id="a", question="??"))])
    twice.hint = lambda _cid: 1
    assert twice.position_of("a") == 1 and twice.position_of("b") is None
