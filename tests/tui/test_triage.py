"""Triage screen, driven with real keys on real files: a copy of the Spanish shop
and a run of it made with the builtin system through the engine."""

from __future__ import annotations

import difflib
import json
import shutil
import sys
import threading
import types
from pathlib import Path

import orjson
import pytest

from ragtriage.core.diagnosis import TRIAGE_ORDER
from ragtriage.core.evaluate import evaluate
from ragtriage.core.runfile import read_run
from ragtriage.tui import make_app
from ragtriage.tui.edits import UpdateCase
from ragtriage.tui.triage_state import sidecar_path

from .conftest import until

ROOT = Path(__file__).resolve().parents[2]
SIZE = (120, 36)


@pytest.fixture
def shop(tmp_path):
    """(test set, run file, summary): testsets/shop-es.yaml + chunks copied, run with builtin."""
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    ts = tmp_path / "shop-es.yaml"
    run = evaluate(ts, "builtin", out=tmp_path / "run.jsonl")
    return ts, tmp_path / "run.jsonl", run.summary


def triage_app(run, testset=None):
    ts = testset or Path(read_run(run).meta["testset"])
    return make_app(ts, run, mode="triage", recovery=False)


async def settle(app, pilot) -> None:
    for _ in range(4):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


def text(widget) -> str:
    content = widget.render()
    return getattr(content, "plain", str(content))


async def goto(pilot, screen, case_id: str) -> None:
    """Move the cursor with j until ``case_id`` is selected (real keys)."""
    screen.table.action_first()
    for _ in range(len(screen.state) + 1):
        if screen.table.current_id == case_id:
            return
        await pilot.press("j")
    raise AssertionError(f"{case_id} not reached")


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


# ---------------------------------------------------------------------------- opening


async def test_groups_and_counts_equal_the_run_summary(shop):
    ts, run, summary = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert type(screen).__name__ == "TriageScreen"
        assert screen.state.counts() == summary["reasons"]
        # failures first, in the fixed order, then passes
        order = list(screen.state.counts())
        assert order == [r for r in TRIAGE_ORDER if r in summary["reasons"]]
        assert order[-2:] == ["appropriate-abstention", "supported-correct"]
        # group headers carry glyph, word and count
        lines = screen.state.lines()
        headers = [screen.table.render_line(y).text for y, (_, i) in enumerate(lines) if i < 0]
        assert headers[0].strip().startswith("✗ retrieval-miss  2  fail")
        assert "✓ supported-correct  3  pass" in headers[-1]
        status = text(screen.query_one("#triage-status"))
        assert "✗ 4 fail" in status and "✓ 4 pass" in status
        # j/k through cases (headers skipped), tab between groups
        first = screen.table.current_id
        assert screen.state.record(first)["reason"] == "retrieval-miss"
        await pilot.press("j")
        second = screen.table.current_id
        assert second != first and screen.state.record(second)["reason"] == "retrieval-miss"
        await pilot.press("j")
        assert screen.state.record(screen.table.current_id)["reason"] == "unnecessary-abstention"
        await pilot.press("k")
        assert screen.table.current_id == second
        await pilot.press("tab")
        assert screen.table.current_group == "unnecessary-abstention"
        await pilot.press("tab")
        assert screen.table.current_group == "wrong-answer"
        await pilot.press("shift+tab")
        assert screen.table.current_group == "unnecessary-abstention"


async def test_case_view_shows_ranks_scores_answer_and_must_contain(shop):
    ts, run, _ = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "tarjeta-rechazada")
        detail = text(screen.query_one("#triage-detail"))
        assert "El pago con mi tarjeta no pasa" in detail
        assert "✓ expected pago-2 at rank 1, inside k = 3" in detail
        assert "1. pago-2  1.942  ★ expected" in detail and "2. pago-1  1.322" in detail
        assert "[pago-1]" in detail and "✓ supported" in detail  # the answerer took pago-1's sentence
        assert "✗ missing  “otra tarjeta”" in detail
        await goto(pilot, screen, "reembolso")
        detail = text(screen.query_one("#triage-detail"))
        assert "✗ expected devolver-2 at rank 5, outside k = 3" in detail
        await goto(pilot, screen, "plazo-entrega")
        await settle(app, pilot)
        detail = text(screen.query_one("#triage-detail"))
        assert "✗ expected entrega-2 not retrieved: not among the 2 chunks the system returned" in detail
        summary = text(screen.query_one("#triage-summary"))
        assert "hit@3 0.714" in summary and "k=1" in summary and "◀ run" in summary


# ---------------------------------------------------------------------------- relabel actions


async def test_accept_a_retrieved_chunk_fixes_a_retrieval_miss(shop):
    ts, run, summary = shop
    before = ts.read_text("utf-8")
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "plazo-entrega")
        assert screen.state.record("plazo-entrega")["reason"] == "retrieval-miss"
        await pilot.press("a")
        assert type(app.screen).__name__ == "ChunkChoice"
        await pilot.press("2")  # devolver-1, rank 2
        await settle(app, pilot)
        rec = screen.state.record("plazo-entrega")
        assert rec["expected"] == ["entrega-2", "devolver-1"]
        assert rec["hit"] is True and rec["rank"] == 2
        assert rec["reason"] == "wrong-answer"  # found now; the answer lacks "dos días"
        counts = screen.state.counts()
        assert counts["retrieval-miss"] == summary["reasons"]["retrieval-miss"] - 1
        assert counts["wrong-answer"] == summary["reasons"]["wrong-answer"] + 1
        assert screen.table.current_id == "plazo-entrega"
        assert screen.table.current_group == "wrong-answer"
        await pilot.press("ctrl+s")  # one save policy: ctrl+s on every screen
        await settle(app, pilot)
    after = ts.read_text("utf-8")
    removed, added = changed_lines(before, after)
    assert removed == ["    expected: [entrega-2]"]
    assert added == ["    expected: [entrega-2, devolver-1]"]  # devolver-1 had its label already
    assert after.replace("    expected: [entrega-2, devolver-1]", "    expected: [entrega-2]") == before


async def test_replace_the_expected_chunk(shop):
    ts, run, _ = shop
    before = ts.read_text("utf-8")
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "reembolso")
        await pilot.press("r")
        await pilot.press("j", "enter")  # second choice: entrega-3
        await settle(app, pilot)
        rec = screen.state.record("reembolso")
        assert rec["expected"] == ["entrega-3"] and rec["rank"] == 2
        assert rec["reason"] == "unnecessary-abstention"
        await pilot.press("ctrl+s")  # one save policy: ctrl+s on every screen
        await settle(app, pilot)
    after = ts.read_text("utf-8")
    removed, added = changed_lines(before, after)
    assert "    expected: [devolver-2]" in removed and "    expected: [entrega-3]" in added
    assert "  entrega-3:" in added
    label = added[added.index("  entrega-3:") :]
    assert any(line.startswith("    sha: ") for line in label)
    assert any("número de seguimiento" in line for line in label)
    assert "  devolver-2:" in removed  # no case expects it any more: its label goes


async def test_mark_unanswerable(shop):
    ts, run, summary = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "garantía")
        assert screen.state.record("garantía")["reason"] == "unnecessary-abstention"
        await pilot.press("u")
        await settle(app, pilot)
        rec = screen.state.record("garantía")
        assert rec["reason"] == "appropriate-abstention" and rec["recall"] is None
        assert screen.state.counts()["appropriate-abstention"] == 2
        assert screen.table.current_group == "appropriate-abstention"
        await pilot.press("ctrl+s")  # one save policy: ctrl+s on every screen
        await settle(app, pilot)
    from ragtriage.core.document import TestSetDocument

    doc = TestSetDocument.load(ts, use_cache=False)
    case = doc.case("garantía")
    assert case.unanswerable and case.expected == ()
    assert "garantía-1" not in doc.labels  # no case expects it any more


async def test_edit_must_contain(shop):
    ts, run, _ = shop
    before = ts.read_text("utf-8")
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "tarjeta-rechazada")
        await pilot.press("m")
        assert type(app.screen).__name__ == "MustContainDialog"
        await pilot.press(*["backspace"] * len("otra tarjeta"), *"tarjeta", "ctrl+s")
        await settle(app, pilot)
        rec = screen.state.record("tarjeta-rechazada")
        assert rec["correct"] is True and rec["reason"] == "supported-correct"
        assert "✓ pass" in text(screen.query_one("#triage-detail"))
        await pilot.press("ctrl+s")  # one save policy: ctrl+s on every screen
        await settle(app, pilot)
    removed, added = changed_lines(before, ts.read_text("utf-8"))
    assert removed == ['    must_contain: ["otra tarjeta"]'] and added == ['    must_contain: [tarjeta]']


async def test_note_and_reviewed_are_kept_across_sessions(shop):
    ts, run, _ = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "reembolso")
        await pilot.press("o", *"el cliente dice reembolso", "enter")
        await pilot.press("v")
        await settle(app, pilot)
        detail = text(screen.query_one("#triage-detail"))
        assert "✎ review note (tester, " in detail and "on this answer): el cliente dice reembolso" in detail
    notes = [json.loads(line) for line in ts.with_name("shop-es.notes.jsonl").read_text("utf-8").splitlines()]
    assert [(n["case"], n["note"], n["by"], n["run"]) for n in notes] == [
        ("reembolso", "el cliente dice reembolso", "tester", "run.jsonl")
    ]
    assert notes[0]["answer_sha"]  # the answer it was about
    data = json.loads(sidecar_path(run).read_text("utf-8"))
    assert data["cases"]["reembolso"]["reviewed"]["reason"] == "retrieval-miss"
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "reembolso")
        detail = text(screen.query_one("#triage-detail"))
        assert "☑ reviewed" in detail and "el cliente dice reembolso" in detail
        row = screen.table.render_line(screen.table.cursor - int(screen.table.scroll_offset.y)).text
        assert "☑" in row and "✍" in row
        assert "☑ 1" in text(screen.query_one("#triage-status"))
        await pilot.press("v")  # toggles off
        await settle(app, pilot)
    assert "reviewed" not in json.loads(sidecar_path(run).read_text("utf-8"))["cases"].get("reembolso", {})


async def test_rerun_one_case_asks_the_system_again(shop):
    ts, run, _ = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "plazo-entrega")
        # the question is rewritten (as in the editor); relabel alone cannot change the ranking
        app.edit(UpdateCase("plazo-entrega", {"question": "cuándo llega el pedido"}))
        await pilot.press("R")
        await settle(app, pilot)
        rec = screen.state.record("plazo-entrega")
        assert rec["ranking"][0] == "entrega-2" and rec["reason"] == "supported-correct"
        assert screen.table.current_group == "supported-correct"
    side = json.loads(sidecar_path(run).read_text("utf-8"))
    assert side["rerun"]["plazo-entrega"]["reason"] == "supported-correct"
    app = triage_app(run)  # kept across sessions
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.screen.state.record("plazo-entrega")["reason"] == "supported-correct"


async def test_editor_opens_on_the_case_and_edits_are_recomputed(shop):
    ts, run, _ = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await goto(pilot, screen, "precio-entrega")
        await pilot.press("e")
        assert type(app.screen).__name__ == "EditorScreen" and app.screen.case_id == "precio-entrega"
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is screen
        app.edit(UpdateCase("precio-entrega", {"expected": ["pago-1"]}))  # as the editor does
        await settle(app, pilot)
        assert screen.state.record("precio-entrega")["reason"] == "retrieval-miss"


async def test_relabel_is_recomputed_on_reopen(shop):
    ts, run, summary = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await goto(pilot, app.screen, "garantía")
        await pilot.press("u")
        await settle(app, pilot)
        await pilot.press("ctrl+s")  # one save policy: ctrl+s on every screen
        await settle(app, pilot)
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.screen.state.record("garantía")["reason"] == "appropriate-abstention"
        assert app.screen.state.counts()["appropriate-abstention"] == 2


# ---------------------------------------------------------------------------- runs from the app


async def test_run_from_the_app_with_builtin_fills_the_table(shop):
    ts, run, summary = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await pilot.press("ctrl+r")
        assert type(app.screen).__name__ == "RunDialog"
        out = app.screen.query_one("#run-out").value
        await pilot.press("ctrl+s")
        await pilot.press("j", "k")  # keys are handled while the worker runs
        await settle(app, pilot)
        assert not app.run_session.running
        assert len(screen.state) == 8
        new = read_run(out)
        assert new.summary is not None and len(new.cases) == 8
        assert screen.state.counts() == new.summary["reasons"]
        assert app.run_path == Path(out) and Path(out).parent.name == "runs"  # as the CLI's runs
        await pilot.press("tab")
        assert screen.table.current_group is not None


@pytest.fixture
def gated_system(monkeypatch, tmp_path):
    """A python: system whose first 3 answers come at once and the rest wait on a gate."""
    gate = threading.Event()
    calls = []
    lock = threading.Lock()

    def answer(question, k):
        with lock:
            calls.append(question)
            n = len(calls)
        if n > 3:
            gate.wait(30)
        return {"ranking": [], "answer": None}

    mod = types.ModuleType("triage_gated_system")
    mod.answer = answer
    monkeypatch.setitem(sys.modules, "triage_gated_system", mod)
    yield gate
    gate.set()


async def test_keys_work_during_a_run_and_cancel_keeps_what_finished(shop, gated_system):
    ts, run, _ = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await pilot.press("ctrl+r")
        dialog = app.screen
        dialog.query_one("#run-system").value = "python:triage_gated_system:answer"
        out = Path(dialog.query_one("#run-out").value)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.state is not None and len(screen.state) == 3)
        assert app.run_session.running
        assert "running 3/8" in text(screen.query_one("#triage-status"))
        assert screen.query_one("#triage-progress-row").display
        # keys keep working during the run
        screen.table.action_first()
        first = screen.table.current_id
        await pilot.press("j")
        assert screen.table.current_id != first
        await pilot.press("v")
        assert app.run_session.reviewed(screen.table.current_id)
        await pilot.press("c")  # cancel
        await until(pilot, lambda: "cancelling" in text(screen.query_one("#triage-run-status")))
        gated_system.set()  # the cases in flight answer only after the cancel was taken
        await settle(app, pilot)
        assert not app.run_session.running
        assert len(screen.state) == 3
    lines = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert [x["type"] for x in lines] == ["meta", "case", "case", "case"]  # no summary: resumable


async def test_bad_k_in_the_run_dialog_is_shown_not_run(shop):
    ts, run, _ = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+r")
        dialog = app.screen
        dialog.query_one("#run-k").value = "0"
        await pilot.press("ctrl+s")
        assert app.screen is dialog
        assert "k: a whole number of 1 or more" in text(dialog.query_one("#run-error"))
        await pilot.press("escape")
        assert type(app.screen).__name__ == "TriageScreen"


# ---------------------------------------------------------------------------- from edit --run


async def test_cases_screen_opens_triage_when_a_run_is_loaded(shop):
    ts, run, summary = shop
    app = make_app(ts, run, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert type(app.screen).__name__ == "CasesScreen"
        app.screen.table.focus()  # the Cases screen sometimes leaves focus on its hidden filter (tui branch)
        await pilot.press("t")
        await settle(app, pilot)
        screen = app.screen
        assert type(screen).__name__ == "TriageScreen"
        assert screen.state.counts() == summary["reasons"]
        await goto(pilot, screen, "garantía")
        await pilot.press("u")
        await settle(app, pilot)
        assert app.run_session.reason("garantía") == "appropriate-abstention"
        await pilot.press("escape")
        await settle(app, pilot)
        row = app.screen.rows.rows[[r.id for r in app.screen.rows.rows].index("garantía")]
        assert row.reason == "appropriate-abstention"  # the Cases column is the same records
        await pilot.press("t")  # and Triage again, at once: the run is not read again
        assert type(app.screen).__name__ == "TriageScreen"
        await pilot.press("escape")
        assert type(app.screen).__name__ == "CasesScreen"


async def test_t_without_a_run_says_how_to_make_one(shop):
    ts, _run, _ = shop
    app = make_app(ts, None, recovery=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.table.focus()
        await pilot.press("t")
        assert type(app.screen).__name__ == "CasesScreen"
        assert any("no run loaded: ctrl+r runs the test set" in n.message for n in app._notifications)


async def test_every_action_is_in_the_footer_and_the_palette(shop):
    ts, run, _ = shop
    app = triage_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        names = {c.title for c in app.get_system_commands(app.screen)}
        for action in (
            "Accept chunk",
            "Replace expected",
            "Unanswerable",
            "Must contain",
            "Editor",
            "Note",
            "Reviewed",
            "Re-run case",
            "Run…",
            "Summary",
            "Next group",
        ):
            assert action in names, action
        assert "Cancel run" not in names  # only while a run is going on
        await pilot.press("question_mark")
        assert type(app.screen).__name__ == "HelpScreen"
        help_text = text(app.screen.query_one("#help-text"))
        assert "Triage — keys" in help_text and "Accept chunk" in help_text and "Re-run case" in help_text
        await pilot.press("escape")
        await pilot.press("i")
        assert not app.screen.query_one("#triage-summary-pane").display


async def test_a_prefetched_run_is_the_one_shown(shop):
    from ragtriage.tui.run_session import Prefetch

    ts, run, summary = shop
    prefetch = Prefetch(run)  # what `ragtriage triage` does before the app starts
    app = make_app(ts, run, mode="triage", recovery=False, prefetch=prefetch)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.screen.state.counts() == summary["reasons"]
