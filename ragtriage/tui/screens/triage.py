"""Triage: a run's failures grouped by reason, one case in full, and the actions
that fix the test set where the test set is wrong.

The run file is read in a worker; the grouped view needs only the run, so it
shows before the test set has finished loading. Every relabel goes through the
app's session (the test-set document), recomputes the case from the ranking and
answer stored in the run (no system call), moves it to its new group and saves.
Reviewed marks, notes and re-run cases are kept in ``RUN.triage.json``.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, ProgressBar, Static

from ...core.diagnosis import PASSING
from ...core.errors import InputError
from ..judge_panel import calibration_summary, grade_current, judge_detail
from ..triage_state import (
    Sidecar,
    TriageState,
    default_run_path,
    load_triage,
    ranking_depth,
    relabel_record,
    retrieval_sweep,
    stream_run,
    take_prefetched,
)
from ..triage_view import describe
from ..widgets.triage_table import TriageTable

SWEEP_MAX_K = 10
SAVE_AT_ONCE = 5000  # cases: above this a relabel is saved after SAVE_DELAY seconds without another
SAVE_DELAY = 1.5
RESCORE_INLINE = 5000  # cases: above this a full recompute runs in a worker
ANSWER_SWEEP_LIMIT = 500  # cases: above this the chart shows retrieval only (answers need a local re-run)


# a dead end with nothing to choose from says where the whole corpus can be searched
PICK_HINT = " · e opens the editor, where ctrl+o searches the whole corpus"


def fmt(v, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def bar(v: float | None, width: int = 10) -> str:
    """A text bar of ``width`` cells for a ratio in [0, 1]."""
    if v is None:
        return "·" * width
    eighths = round(max(0.0, min(1.0, v)) * width * 8)
    full, part = divmod(eighths, 8)
    s = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
    return s.ljust(width, "░")


def summary_text(summary: dict, k: int, sweep: list[dict] | None) -> Text:
    """The set's metrics and, with a sweep, hit / supported / correct against k."""
    t = Text()
    n = summary.get("n", 0)
    t.append("summary  ", style="bold")
    t.append(
        f"{n} cases · hit@{k} {fmt(summary.get('hit'))} · recall {fmt(summary.get('recall'))} · "
        f"mrr {fmt(summary.get('mrr'))} · precision {fmt(summary.get('precision'))}\n"
    )
    t.append(
        f"         supported {fmt(summary.get('supported'))} · faithfulness {fmt(summary.get('faithfulness'))}"
        f" · correct {fmt(summary.get('accuracy'))} · coverage {fmt(summary.get('coverage'))}"
        f" · unknown abstention {fmt(summary.get('unknown_abstention'))}"
    )
    if summary.get("tokens") is not None:
        t.append(f" · {summary['tokens']} prompt tokens")
    t.append("\n")
    if sweep:
        t.append(f"{'':5}{'hit':<17}{'supported':<17}{'correct':<17}\n", style="dim")
        for row in sweep:
            mark = "◀ run" if row["k"] == k else ""
            t.append(f"k={row['k']:<3}")
            for key in ("hit", "supported", "correct"):
                v = row.get(key)
                t.append(f"{bar(v)} {fmt(v, 2):<5} ")
            t.append(mark + "\n", style="bold")
    return t


class TriageScreen(Screen):
    """Home of ``ragtriage triage``; reachable from Cases when a run is loaded."""

    HELP_TITLE = "Triage"
    HELP_INTRO = """
The run's cases grouped by diagnosis reason: failures first, in the fixed
order, then passes. ✗ fail / ✓ pass; ☑ reviewed; ✎ has a note.
A relabel (accept, replace, unanswerable, must contain) recomputes the case at
once from the ranking and answer stored in the run — no system call — moves it
to its new group and saves the test set (labels recorded).
With a judge (run --judge): ⚖ judge disagrees lists the cases to settle; g grades
an answer into <testset>.grades.jsonl (u in the dialog undoes the last grade).
"""

    DEFAULT_CSS = """
    TriageScreen #triage-status { height: 1; background: $panel; color: $text; padding: 0 1; }
    TriageScreen #triage-main { height: 1fr; }
    TriageScreen #triage-table { width: 2fr; height: 1fr; }
    TriageScreen #triage-case { width: 3fr; height: 1fr; border-left: solid $panel; padding: 0 1; }
    TriageScreen #triage-summary { height: auto; max-height: 14; padding: 0 1; border-top: solid $panel; }
    TriageScreen #triage-progress-row { height: 1; padding: 0 1; }
    TriageScreen #triage-progress { width: auto; }
    TriageScreen #triage-run-status { width: 1fr; }
    """

    BINDINGS = [
        Binding("a", "accept", "Accept chunk", id="triage.accept"),
        Binding("r", "replace", "Replace expected", id="triage.replace"),
        Binding("u", "unanswerable", "Unanswerable", id="triage.unanswerable"),
        Binding("m", "must_contain", "Must contain", id="triage.must_contain"),
        Binding("e,enter", "edit", "Editor", id="triage.edit"),
        Binding("n", "note", "Note", id="triage.note"),
        Binding("v", "reviewed", "Reviewed", id="triage.reviewed"),
        Binding("x", "rerun_case", "Re-run case", id="triage.rerun_case"),
        Binding("ctrl+r", "run", "Run…", id="triage.run"),
        Binding("c", "cancel_run", "Cancel run", id="triage.cancel_run"),
        Binding("s", "toggle_summary", "Summary", id="triage.summary"),
        Binding("g", "grade", "Grade", id="triage.grade"),
        Binding("escape", "back", "Back", id="triage.back"),
    ]

    def __init__(self, run_path=None) -> None:
        super().__init__()
        self.run_path: Path | None = Path(run_path) if run_path else None
        self.state: TriageState | None = None
        self.sidecar: Sidecar | None = None
        self.meta: dict = {}
        self.k = 3
        self._ready = False
        self._synced = None  # (session id, generation, len(ops)) last seen
        self._doc_checked = False
        self._seen_cases: dict = {}
        self._cancel: threading.Event | None = None
        self._run_total = 0
        self._run_started = 0.0
        self._run_out: Path | None = None
        self._queue: deque = deque()
        self._summary_busy = False
        self._summary_again = False
        self._save_timer = None
        self._ticker = None
        self._sweep: list[dict] | None = None
        self._summary: dict | None = None
        self.load_error = None
        self._before_run = None  # (state, k, meta, run path, sidecar, summary, out existed) during a run

    # -- layout ------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("loading run…", id="triage-status")
        with Horizontal(id="triage-main"):
            yield TriageTable(id="triage-table", marks=self._marks)
            with VerticalScroll(id="triage-case"):
                yield Static("", id="triage-detail")
        yield Static("", id="triage-summary")
        with Horizontal(id="triage-progress-row"):
            yield ProgressBar(id="triage-progress", show_eta=True)
            yield Static("", id="triage-run-status")
        yield Footer()

    def on_mount(self) -> None:
        self._ready = True
        self.query_one("#triage-progress-row").display = False
        table = self.table
        table.loading = True
        table.focus()
        if self.run_path is None:
            self.run_path = self.app.run_path
        self.load_run()

    @property
    def table(self) -> TriageTable:
        return self.query_one(TriageTable)

    @property
    def running(self) -> bool:
        return self._cancel is not None

    # -- loading -----------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="triage-load", exit_on_error=False)
    def load_run(self) -> None:
        try:
            meta, summary, state, side = take_prefetched(self.run_path) or load_triage(self.run_path)
        except InputError as e:
            self.app.call_from_thread(self._load_failed, e)
            return
        self.app.call_from_thread(self._run_loaded, meta, summary, state, side)

    def _load_failed(self, error) -> None:
        self.load_error = error
        fail = getattr(self.app, "_fail", None)
        if fail is not None and getattr(self.app, "mode", None) == "triage":
            fail(error)
        else:
            self.notify("run not loaded: " + "; ".join(str(p) for p in error.problems[:2]), severity="error")
            self.app.pop_screen()

    def _run_loaded(self, meta: dict, summary: dict | None, state: TriageState, side: Sidecar) -> None:
        self.meta = meta
        self.k = state.k
        self.state = state
        self.sidecar = side
        self._summary = summary if summary is not None and not side.rerun else None
        table = self.table
        table.loading = False
        table.set_state(state)
        table.action_first()
        self._publish_reasons()
        self.on_state_changed()
        self.refresh_summary()
        if getattr(self.app, "mode", "edit") == "triage" and self.app.session is None:
            self.app.load_document()  # after the run is on screen: the two loads do not share the CPU

    # -- keeping up with the test set ----------------------------------------------------
    def on_state_changed(self) -> None:
        """Called by the app after every edit and load."""
        if self.state is None or not self.is_mounted:
            return
        s = self.app.session
        if s is not None:
            if not self._doc_checked:
                self._doc_checked = True
                self._first_sync(s)
            else:
                self._sync(s)
        self._update_status()
        self._show_detail()

    def _first_sync(self, session) -> None:
        """The test set is loaded: recompute the cases whose labels changed since the run."""
        doc = session.doc
        side = self.sidecar
        h = doc.content_hash
        if h == self.meta.get("testset_hash"):
            ids = list(side.rerun)
        elif side.testset_hash and h == side.testset_hash:
            ids = sorted(side.rescored | set(side.rerun))
        else:
            ids = None  # changed outside triage: recompute all
        self._synced = (id(session), session.generation, len(session.ops))
        if ids is None and len(self.state) > RESCORE_INLINE:
            self.notify(
                "the test set changed since this run: recomputing every case from the stored rankings…"
            )
            self._rescore_all(self.state, doc)
            return
        changed = self._rescore(ids, doc)
        if not changed and self.meta.get("system") == "builtin":
            self.refresh_summary()  # the answer sweep needs the test set
        if ids is None and changed:
            self.notify(
                f"the test set changed since this run: {changed} case{'s' * (changed != 1)} "
                "recomputed from the stored rankings"
            )

    @work(thread=True, exclusive=True, group="triage-rescore", exit_on_error=False)
    def _rescore_all(self, state: TriageState, doc) -> None:
        settings = doc.settings
        cases = {c.id: c for c in doc.cases}
        new = []
        for rec in list(state.records):
            case = cases.get(rec["id"])
            if case is not None:
                r = relabel_record(rec, case, state.k, settings)
                if r != rec:
                    new.append(r)
        self.app.call_from_thread(self._rescored_all, state, new)

    def _rescored_all(self, state: TriageState, new: list[dict]) -> None:
        if state is not self.state:
            return
        keep = self.table.current_id
        for rec in new:
            state.replace(rec)
            self.sidecar.rescored.add(rec["id"])
        self.table.refresh_lines(keep)
        self._publish_reasons()
        self._update_status()
        self._show_detail()
        self.refresh_summary()
        if new:
            self.notify(f"{len(new)} case{'s' * (len(new) != 1)} recomputed from the stored rankings")
        if self.app.session is not None:
            self._sync(self.app.session)  # edits made meanwhile

    def _sync(self, session) -> None:
        key = (id(session), session.generation, len(session.ops))
        if key == self._synced:
            return
        last = self._synced
        if last is not None and last[0] == id(session) and len(session.ops) < last[2]:
            self._synced = key  # a save cleared the log: the cases did not change
            return
        ops = None
        if last is not None and last[0] == id(session) and len(session.ops) >= last[2]:
            ops = session.ops[last[2] :]
        if ops is not None and all(op["op"] == "update_case" for op in ops):
            ids = {op["args"][0] for op in ops if op.get("args")}
            ids |= {op["kwargs"].get("id") for op in ops if op.get("kwargs", {}).get("id")}
            self._rescore(sorted(i for i in ids if i), session.doc)
        elif ops is not None and all(op["op"] == "set_label" for op in ops):
            pass
        elif len(self.state) > RESCORE_INLINE:  # undo, redo, a reload: recompute all, off the UI thread
            self._synced = key
            self._rescore_all(self.state, session.doc)
            return
        else:
            self._rescore(None, session.doc)
        self._synced = key

    def _rescore(self, ids, doc) -> int:
        """Recompute the given cases (None: all) from their stored ranking; returns how many changed."""
        state = self.state
        if state is None:
            return 0
        keep = self.table.current_id
        settings = doc.settings
        if ids is None:
            ids = [r["id"] for r in state.records]
        n = 0
        for cid in ids:
            if cid not in state or cid not in doc:
                continue
            old = state.record(cid)
            new = relabel_record(old, doc.case(cid), self.k, settings)
            if new != old:
                state.replace(new)
                self.sidecar.rescored.add(cid)
                n += 1
        if n:
            self.table.refresh_lines(keep)
            self._publish_reasons()
            self.refresh_summary()
        return n

    def _publish_reasons(self) -> None:
        """Let the Cases screen show the current reasons (it watches the dict's identity)."""
        from .cases import CasesScreen

        if any(isinstance(s, CasesScreen) for s in self.app.screen_stack):
            self.app.reasons = {r["id"]: r.get("reason") for r in self.state.records}

    # -- display -----------------------------------------------------------------------
    def _marks(self, case_id: str) -> str:
        side = self.sidecar
        if side is None:
            return ""
        out = []
        if side.reviewed(case_id):
            out.append("☑ reviewed")
        if side.note(case_id):
            out.append("✎ note")
        return " ".join(out)

    def _update_status(self) -> None:
        state = self.state
        if state is None:
            return
        parts = [self.run_path.name if self.run_path else "run"]
        app = self.app
        doc = app.doc
        parts.append(doc.path.name if doc is not None else "loading test set…")
        parts.append(f"{self.meta.get('system', '?')} · k={self.k}")
        n = len(state)
        fails = state.failures()
        parts.append(f"{n} case{'s' * (n != 1)} · ✗ {fails} fail · ✓ {n - fails} pass")
        side = self.sidecar
        reviewed = sum(1 for v in side.cases.values() if v.get("reviewed")) if side else 0
        if reviewed:
            parts.append(f"☑ {reviewed} reviewed")
        if self.running:
            parts.append(f"running {len(state)}/{self._run_total}")
        if app.session is not None and app.session.dirty:
            parts.append("● saving…" if self._save_timer is not None else "● unsaved")
        self.query_one("#triage-status", Static).update(" · ".join(parts))

    def _chunk_text(self):
        corpus = self.app.corpus
        if corpus is None:
            return None

        def lookup(cid: str):
            ch = corpus.get(cid)
            return ch.text if ch is not None else None

        return lookup

    def _show_detail(self, case_id: str | None = None) -> None:
        if self.state is None:
            return
        cid = case_id or self.table.current_id
        detail = self.query_one("#triage-detail", Static)
        if cid is None or cid not in self.state:
            detail.update("no case" if not len(self.state) else "")
            return
        rec = self.state.record(cid)
        doc = self.app.doc
        case = doc.case(cid) if doc is not None and cid in doc else None
        side = self.sidecar
        detail.update(
            describe(
                rec,
                self.k,
                case=case,
                chunk_text=self._chunk_text(),
                reviewed=side.reviewed(cid) if side else None,
                note=side.note(cid) if side else "",
                notes_field=case.notes if case is not None else None,
            )
            + judge_detail(self, rec)
        )

    @on(TriageTable.Highlighted)
    def _highlighted(self, event: TriageTable.Highlighted) -> None:
        self._show_detail(event.case_id)

    def on_screen_resume(self) -> None:
        self.on_state_changed()

    # -- summary and sweep --------------------------------------------------------------
    def refresh_summary(self) -> None:
        """Recompute the summary and the sweep in a worker; one at a time, the last request wins."""
        if self.state is None:
            return
        if self._summary_busy:
            self._summary_again = True
            return
        self._summary_busy = True
        self._summary_again = False
        self._compute_summary(self.state)

    @work(thread=True, group="triage-summary", exit_on_error=False)
    def _compute_summary(self, state: TriageState) -> None:
        summary, sweep = None, None
        try:
            records = list(state.records)
            summary = state.summary() if self._summary is None or state.version else self._summary
            depth = min(ranking_depth(records), SWEEP_MAX_K)
            if depth > 1:
                hits = retrieval_sweep(records, range(1, depth + 1))
                sweep = [{"k": k, "hit": h, "supported": None, "correct": None} for k, h in hits]
                for row in sweep:
                    if row["k"] == state.k:
                        row["supported"], row["correct"] = summary.get("supported"), summary.get("accuracy")
                answers = self._answer_sweep(len(records), depth)
                if answers:
                    for row in sweep:
                        a = answers.get(row["k"])
                        if a is not None and row["k"] != state.k:
                            row["supported"], row["correct"] = a
        finally:
            self.app.call_from_thread(self._summary_ready, state, summary, sweep)

    def _answer_sweep(self, n: int, depth: int) -> dict | None:
        """Supported / correct per k for a local ``builtin`` run (its answers are re-derived
        locally from one ranking, as ``ragtriage sweep`` does); None for other systems."""
        doc = self.app.doc
        if self.meta.get("system") != "builtin" or doc is None or n > ANSWER_SWEEP_LIMIT:
            return None
        try:
            from ...core.evaluate import sweep as core_sweep

            result = core_sweep(doc, "builtin", ks=list(range(1, depth + 1)), corpus=self.app.corpus)
        except Exception:  # the chart then shows retrieval only
            return None
        return {row["k"]: (row.get("supported"), row.get("correct")) for row in result["rows"]}

    def _summary_ready(self, state: TriageState, summary: dict, sweep) -> None:
        self._summary_busy = False
        if self._summary_again:
            self.refresh_summary()
        if state is not self.state or not self.is_mounted or summary is None:
            return
        self._sweep = sweep
        self.query_one("#triage-summary", Static).update(
            summary_text(summary, state.k, sweep) + calibration_summary(self, state.records)
        )

    def action_grade(self) -> None:
        grade_current(self)

    def action_toggle_summary(self) -> None:
        w = self.query_one("#triage-summary", Static)
        w.display = not w.display

    # -- actions: helpers ------------------------------------------------------------------
    def _current(self, need_doc: bool = True):
        """(case id, record, case) of the selected case, or None with a message."""
        if self.state is None:
            self.notify("still loading the run")
            return None
        cid = self.table.current_id
        if cid is None:
            self.notify("no case selected")
            return None
        rec = self.state.record(cid)
        if not need_doc:
            return cid, rec, None
        doc = self.app.doc
        if doc is None:
            self.notify("still loading the test set")
            return None
        if cid not in doc:
            self.notify(f"{cid} is not in the test set any more", severity="warning")
            return None
        return cid, rec, doc.case(cid)

    def _relabel(self, cid: str, message: str, **fields) -> bool:
        """Edit the case through the session, recompute it, save the test set."""
        from ...core.errors import TestSetError

        before = self.state.record(cid).get("reason")
        try:
            self.app.edit("update_case", cid, **fields)  # -> on_state_changed -> recomputed, regrouped
        except TestSetError as e:
            self.notify("not changed: " + "; ".join(p.message for p in e.problems[:2]), severity="error")
            return False
        self._sync(self.app.session)
        after = self.state.record(cid).get("reason")
        self.table.move_to(cid)
        move = f" · {before} → {after}" if before != after else f" · still {after}"
        self.notify(message + move)
        self._schedule_save()
        return True

    def _schedule_save(self) -> None:
        """Save at once on a small set; on a big one (a save there costs a second or more)
        after a short pause, so a burst of relabels is one save and keys never wait on it."""
        doc = self.app.doc
        if doc is None or len(doc) <= SAVE_AT_ONCE:
            self._save()
            return
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(SAVE_DELAY, self._save)
        self._update_status()

    def _save(self) -> None:
        """Save the test set (labels recorded) and the sidecar."""
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None
        self.app.action_save()
        s = self.app.session
        if s is not None and not s.dirty:
            self.sidecar.testset_hash = s.doc.content_hash
            self._synced = (id(s), s.generation, len(s.ops))
        self._save_sidecar()
        self._update_status()

    def _save_sidecar(self) -> None:
        try:
            self.sidecar.save()
        except OSError as e:
            self.notify(f"reviewed marks and notes not saved: {e}", severity="error")

    def _choices(self, rec: dict, exclude) -> list[tuple[str, str]]:
        ranking = rec.get("ranking") or []
        scores = rec.get("scores") or []
        lookup = self._chunk_text()
        out = []
        seen = set()
        for i, cid in enumerate(ranking):
            if cid in exclude or cid in seen:
                continue
            seen.add(cid)
            desc = f"rank {i + 1}" + (" (inside k)" if i < self.k else "")
            if i < len(scores) and isinstance(scores[i], (int, float)):
                desc += f" · {scores[i]:.3f}"
            text = lookup(cid) if lookup else None
            if text:
                text = " ".join(text.split())
                desc += " · " + (text[:70] + "…" if len(text) > 70 else text)
            out.append((cid, desc))
        return out

    # -- actions -------------------------------------------------------------------------
    def action_accept(self) -> None:
        cur = self._current()
        if cur is None:
            return
        cid, rec, case = cur
        choices = self._choices(rec, set(case.expected))
        if not choices:
            self.notify(
                (
                    "every retrieved chunk is already expected"
                    if rec.get("ranking")
                    else "nothing was retrieved"
                )
                + PICK_HINT
            )
            return
        from .triage_dialogs import ChunkChoice

        def chosen(chunk: str | None) -> None:
            if chunk is None:
                return
            expected = list(case.expected) + [chunk]
            self._relabel(
                cid, f"{cid}: {chunk} accepted as also correct", expected=expected, unanswerable=None
            )

        self.app.push_screen(
            ChunkChoice(
                f"Accept a retrieved chunk as also correct — {cid}",
                choices,
                "It is added to expected; its label is recorded on save.",
            ),
            chosen,
        )

    def action_replace(self) -> None:
        cur = self._current()
        if cur is None:
            return
        cid, rec, case = cur
        choices = self._choices(rec, set(case.expected))
        if not choices:
            self.notify("no other retrieved chunk to use instead" + PICK_HINT)
            return
        from .triage_dialogs import ChunkChoice

        old = ", ".join(case.expected) or "nothing"

        def chosen(chunk: str | None) -> None:
            if chunk is None:
                return
            self._relabel(
                cid, f"{cid}: expected {old} replaced by {chunk}", expected=[chunk], unanswerable=None
            )

        self.app.push_screen(
            ChunkChoice(
                f"Replace the expected chunk ({old}) — {cid}",
                choices,
                "The chosen chunk becomes the only expected one.",
            ),
            chosen,
        )

    def action_unanswerable(self) -> None:
        cur = self._current()
        if cur is None:
            return
        cid, _rec, case = cur
        if case.unanswerable:
            self._relabel(cid, f"{cid}: answerable again (✎ no expected chunk yet)", unanswerable=None)
        else:
            dropped = f" (expected {', '.join(case.expected)} removed)" if case.expected else ""
            self._relabel(cid, f"{cid}: ∅ unanswerable{dropped}", unanswerable=True, expected=None)

    def action_must_contain(self) -> None:
        cur = self._current()
        if cur is None:
            return
        cid, rec, case = cur
        from .triage_dialogs import MustContainDialog

        def done(strings: list[str] | None) -> None:
            if strings is None or list(strings) == list(case.must_contain):
                return
            shown = " · ".join(f"“{s}”" for s in strings) or "nothing"
            self._relabel(cid, f"{cid}: must contain {shown}", must_contain=strings or None)

        answer = rec.get("answer") if isinstance(rec.get("answer"), str) else None
        self.app.push_screen(MustContainDialog(cid, list(case.must_contain), answer), done)

    def action_edit(self) -> None:
        cur = self._current()
        if cur is None:
            return
        from .editor import EditorScreen

        self.app.push_screen(EditorScreen(cur[0]))

    def action_note(self) -> None:
        cur = self._current(need_doc=False)
        if cur is None:
            return
        cid = cur[0]
        from .triage_dialogs import NoteDialog

        def done(text: str | None) -> None:
            if text is None:
                return
            self.sidecar.set_note(cid, text)
            self._save_sidecar()
            self.table.refresh()
            self._show_detail()
            self.notify(f"{cid}: note kept" if text.strip() else f"{cid}: note removed")

        self.app.push_screen(NoteDialog(cid, self.sidecar.note(cid)), done)

    def action_reviewed(self) -> None:
        cur = self._current(need_doc=False)
        if cur is None:
            return
        cid, rec, _ = cur
        on = not self.sidecar.reviewed(cid)
        self.sidecar.set_reviewed(cid, rec.get("reason"), on)
        self._save_sidecar()
        self.table.refresh()
        self._show_detail()
        self._update_status()
        self.notify(f"{cid}: ☑ reviewed" if on else f"{cid}: not reviewed")

    # -- re-run one case ------------------------------------------------------------------
    def action_rerun_case(self) -> None:
        cur = self._current()
        if cur is None:
            return
        system = self.meta.get("system") or "builtin"
        self.notify(f"{cur[0]}: asking {system} again…", timeout=2)
        self._rerun_case(cur[0], system, self.k)

    @work(thread=True, group="triage-rerun", exit_on_error=False)
    def _rerun_case(self, cid: str, system: str, k: int) -> None:
        from ...core.evaluate import evaluate

        doc = self.app.doc
        try:
            run = evaluate(doc, system, k, ids=[cid], corpus=self.app.corpus)
        except InputError as e:
            self.app.call_from_thread(
                self.notify,
                "re-run failed: " + "; ".join(p.message for p in e.problems[:2]),
                severity="error",
            )
            return
        except Exception as e:  # a user's system blew up: say so, keep the app
            self.app.call_from_thread(
                self.notify, f"re-run failed: {type(e).__name__}: {e}", severity="error"
            )
            return
        if run.cases:
            self.app.call_from_thread(self._reran, run.cases[0])

    def _reran(self, rec: dict) -> None:
        if self.state is None or rec["id"] not in self.state:
            return
        old = self.state.record(rec["id"]).get("reason")
        self.state.replace(rec)
        self.sidecar.rerun[rec["id"]] = rec
        self._save_sidecar()
        self.table.refresh_lines(self.table.current_id)
        self.table.move_to(rec["id"])
        self._publish_reasons()
        self._update_status()
        self._show_detail()
        self.refresh_summary()
        new = rec.get("reason")
        glyph = "✓" if new in PASSING else "✗"
        self.notify(f"{rec['id']} re-run: {glyph} {new}" + (f" (was {old})" if old != new else ""))

    # -- a run from the app ----------------------------------------------------------------
    def action_run(self) -> None:
        from .run_dialog import RunDialog

        doc = self.app.doc
        if doc is None:
            self.notify("still loading the test set")
            return
        if self.running:
            self.notify("a run is going on: c cancels it")
            return
        folder = self.run_path.parent if self.run_path else Path(".")
        out = default_run_path(folder, doc.path)
        self.app.push_screen(
            RunDialog(self.meta.get("system") or "builtin", self.k, out, len(doc)), self.start_run
        )

    def start_run(self, req) -> None:
        if req is None:
            return
        doc = self.app.doc
        self._cancel = threading.Event()
        self._run_total = len(doc)
        self._run_started = time.monotonic()
        self._run_out = req.out
        self._run_generation = self.app.session.generation
        # what was on screen, brought back if the run fails before its first case
        self._before_run = (
            self.state,
            self.k,
            self.meta,
            self.run_path,
            self.sidecar,
            self._summary,
            req.out.exists(),
        )
        old_side = self.sidecar
        self.state = TriageState([], req.k)
        self.k = req.k
        self.meta = {"system": req.system, "k": req.k, "testset": str(doc.path)}
        self.run_path = req.out
        self.sidecar = old_side.carried_to(req.out) if old_side else Sidecar.load(req.out)
        self._summary = None
        self.table.set_state(self.state)
        bar_ = self.query_one("#triage-progress", ProgressBar)
        bar_.update(total=self._run_total, progress=0)
        self.query_one("#triage-progress-row").display = True
        self.query_one("#triage-run-status", Static).update(f" {req.system} · k={req.k} · c cancels")
        self._update_status()
        self._show_detail()
        self.refresh_bindings()
        self._queue = deque()
        self._ticker = self.set_interval(0.1, self._drain)
        self._run_worker(req, self._cancel, self.state)

    @work(thread=True, exclusive=True, group="triage-run", exit_on_error=False)
    def _run_worker(self, req, cancel: threading.Event, state: TriageState) -> None:
        """Runs off the UI thread; finished records go to a queue the screen drains
        on a timer, so the run never waits on the screen and keys never wait on the run."""
        queue = self._queue
        call = self.app.call_from_thread
        try:
            summary, interrupted = stream_run(
                self.app.doc, req.system, req.k, req.out, queue.append, cancel=cancel, corpus=self.app.corpus
            )
        except InputError as e:
            call(self._run_finished, state, req, None, True, "; ".join(p.message for p in e.problems[:2]))
            return
        except Exception as e:  # the user's system or a disk error: keep what finished
            call(self._run_finished, state, req, None, True, f"{type(e).__name__}: {e}")
            return
        call(self._run_finished, state, req, summary, interrupted, None)

    def _drain(self) -> None:
        """Move the records that finished since the last tick into the table."""
        batch = []
        queue = self._queue
        while queue:
            batch.append(queue.popleft())
        if batch:
            self._streamed(self.state, batch)

    def _streamed(self, state: TriageState, batch: list[dict]) -> None:
        if state is not self.state:
            return
        s = self.app.session
        edited = s is not None and s.generation != self._run_generation
        keep = self.table.current_id
        for rec in batch:
            if edited and rec["id"] in s.doc:
                rec = relabel_record(rec, s.doc.case(rec["id"]), state.k, s.doc.settings)
            state.add(rec)
        self.table.refresh_lines(keep)
        if keep is None:
            self.table.action_first()
        self.query_one("#triage-progress", ProgressBar).update(progress=len(state))
        self._update_status()

    def _run_finished(self, state: TriageState, req, summary, interrupted: bool, error: str | None) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self._drain()
        self._cancel = None
        self.query_one("#triage-progress-row").display = False
        self.refresh_bindings()
        if state is not self.state:
            return
        before, self._before_run = self._before_run, None
        if error and not len(state) and before is not None and before[0] is not None:
            self._restore_before_run(before, req, error)
            return
        self.app.run_path = req.out
        self.meta = dict(self.meta, testset_hash=self.app.doc.content_hash if self.app.doc else None)
        self._summary = summary
        if len(state) or req.out.exists():
            self._save_sidecar()
        n = len(state)
        if error:
            self.notify(
                f"run stopped: {error} · kept {n} finished case{'s' * (n != 1)} in {req.out}",
                severity="error",
                timeout=8,
            )
        elif interrupted:
            self.notify(
                f"run cancelled: kept {n} finished case{'s' * (n != 1)} in {req.out} "
                "(ragtriage run --resume continues it)",
                severity="warning",
                timeout=8,
            )
        else:
            fails = state.failures()
            self.notify(f"run finished: {n} cases · ✗ {fails} fail · ✓ {n - fails} pass · {req.out}")
        self._publish_reasons()
        self._update_status()
        self._show_detail()
        self.refresh_summary()

    def _restore_before_run(self, before, req, error: str) -> None:
        """A run that failed before any case (a bad system spec, a server that is down) left
        an empty table and a run file with no case: show the earlier run again instead."""
        self.state, self.k, self.meta, self.run_path, self.sidecar, self._summary, existed = before
        if not existed:
            try:
                req.out.unlink()
            except OSError:
                pass
        self.table.set_state(self.state)
        self.table.action_first()
        self.notify(
            f"run failed before any case: {error} · still showing {self.run_path.name}",
            severity="error",
            timeout=10,
        )
        self._update_status()
        self._show_detail()
        self.refresh_summary()

    def action_cancel_run(self) -> None:
        if self._cancel is None:
            self.notify("no run is going on")
            return
        self._cancel.set()
        self.query_one("#triage-run-status", Static).update(" cancelling: waiting for the cases in flight…")

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "cancel_run":
            return self.running
        if action == "back":
            return len(self.app.screen_stack) > 2
        return True

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
