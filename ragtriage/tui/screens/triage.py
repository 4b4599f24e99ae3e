"""Triage: a run's failures grouped by reason, one case in full, and the actions
that fix the test set where the test set is wrong.

The run file is read in a worker; the grouped view needs only the run, so it
shows before the test set has finished loading. Every relabel goes through the
app's session (the test-set document), recomputes the case from the ranking and
answer stored in the run (no system call) and moves it to its new group; ctrl+s
saves the test set, as on every screen.
Reviewed marks, notes and re-run cases are kept in ``RUN.triage.json``.

The view and the keeping-in-step live in :mod:`.triage_base`; the pieces that need
no screen live beside it: which cases to recompute after a
change (:mod:`ragtriage.tui.triage_sync`), a run started from here
(:mod:`ragtriage.tui.triage_run`) and the summary pane
(:mod:`ragtriage.tui.widgets.triage_summary`).

With a judge (run --judge): ⚖ judge disagrees lists the cases to settle; g grades
an answer into <testset>.grades.jsonl (u in the dialog undoes the last grade).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.widgets import ProgressBar, Static

from ...core.diagnosis import PASSING
from ...core.errors import InputError
from ..base import detail_bindings
from ..judge_panel import grade_current
from ..messages import RunFinished, RunProgress
from ..triage_run import WAKE_EVERY, RunController, Shown
from ..triage_state import (
    Sidecar,
    TriageState,
    default_run_path,
    relabel_record,
)
from ..triage_view import retrieved_choices
from .triage_base import TriageBase

if TYPE_CHECKING:
    from textual.timer import Timer

    from ...core.records import CaseRecord
    from .run_dialog import RunRequest

# a dead end with nothing to choose from says where the whole corpus can be searched
PICK_HINT = " · p searches the whole corpus (the chunk picker)"


class TriageScreen(TriageBase):
    """Home of ``ragtriage triage``; reachable from Cases when a run is loaded."""

    _drain_timer: Timer | None = None  # takes a run's finished records while it runs

    HELP_TITLE = "Triage"
    HELP_INTRO = """
The run's cases grouped by diagnosis reason: failures first, in the fixed
order, then passes. ✗ fail / ✓ pass; ☑ reviewed; ✎ has a note.
A relabel (accept, replace, unanswerable, must contain) recomputes the case at
once from the ranking and answer stored in the run — no system call — moves it
to its new group. Every relabel is one undo step (ctrl+z); ctrl+s saves the
test set (labels recorded), as on every screen, and q asks before dropping
unsaved changes. Reviewed marks and notes are kept at once.
"""

    DETAIL = "#triage-case"

    BINDINGS = [
        Binding("a", "accept", "Accept chunk", id="triage.accept"),
        Binding("r", "replace", "Replace expected", id="triage.replace"),
        Binding("u", "unanswerable", "Unanswerable", id="triage.unanswerable"),
        Binding("m", "must_contain", "Must contain", id="triage.must_contain"),
        Binding("e,enter", "edit", "Editor", id="triage.edit"),
        Binding("p", "pick", "Pick", id="triage.pick", tooltip="chunk picker: search the whole corpus"),
        Binding("o", "note", "Note", id="triage.note", tooltip="a reviewer's note, kept with the run"),
        Binding("v", "reviewed", "Reviewed", id="triage.reviewed"),
        Binding(
            "R",
            "rerun_case",
            "Re-run case",
            id="triage.rerun_case",
            tooltip="ask the system again for this case",
        ),
        Binding("ctrl+r", "run", "Run…", id="triage.run"),
        Binding("c", "cancel_run", "Cancel run", id="triage.cancel_run"),
        Binding(
            "i", "toggle_summary", "Summary", id="triage.summary", tooltip="show or hide the run's numbers"
        ),
        Binding("g", "grade", "Grade", id="triage.grade"),
        Binding("escape", "back", "Back", id="triage.back"),
        *detail_bindings("triage"),
    ]

    class Reran(Message):
        def __init__(self, record: CaseRecord) -> None:
            super().__init__()
            self.record = record

    class Failed(Message):
        """A worker failed in a way the user should hear about."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def _choices(self, rec: CaseRecord, exclude: set[str]) -> list[tuple[str, str]]:
        return retrieved_choices(rec, exclude, self.k, self._chunk_text())

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

        self.rt.push_screen(
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

        self.rt.push_screen(
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
        self.rt.push_screen(MustContainDialog(cid, list(case.must_contain), answer), done)

    def action_edit(self) -> None:
        cur = self._current()
        if cur is None:
            return
        self.rt.open_editor(cur[0])

    def action_pick(self) -> None:
        cur = self._current()
        if cur is not None:
            self.rt.open_picker(cur[0])

    def action_note(self) -> None:
        cur = self._current(need_doc=False)
        if cur is None:
            return
        cid, sidecar = cur[0], self.sidecar
        if sidecar is None:
            return
        from .triage_dialogs import NoteDialog

        def done(text: str | None) -> None:
            if text is None:
                return
            sidecar.set_note(cid, text)
            self._save_sidecar()
            self.table.refresh()
            self._show_detail()
            self.notify(f"{cid}: note kept" if text.strip() else f"{cid}: note removed")

        self.rt.push_screen(NoteDialog(cid, sidecar.note(cid)), done)

    def action_reviewed(self) -> None:
        cur = self._current(need_doc=False)
        if cur is None:
            return
        cid, rec, _ = cur
        if self.sidecar is None:
            return
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

        try:
            run = evaluate(self.rt.doc, system, k, ids=[cid], corpus=self.rt.corpus)
        except InputError as e:
            self.post_message(self.Failed("re-run failed: " + "; ".join(p.message for p in e.problems[:2])))
            return
        except Exception as e:  # a user's system blew up: say so, keep the app
            self.post_message(self.Failed(f"re-run failed: {type(e).__name__}: {e}"))
            return
        if run.cases:
            self.post_message(self.Reran(run.cases[0]))

    @on(Failed)
    def _failed(self, event: Failed) -> None:
        self.notify(event.text, severity="error")

    @on(Reran)
    def _reran(self, event: Reran) -> None:
        rec = event.record
        if self.state is None or rec["id"] not in self.state:
            return
        old = self.state.record(rec["id"]).get("reason")
        self.state.replace(rec)
        if self.sidecar is not None:
            self.sidecar.rerun[rec["id"]] = rec
        self._save_sidecar()
        self.table.reload_lines(self.table.current_id)
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

        if not self.rt.loaded:
            self.notify("still loading the test set")
            return
        if self.running:
            self.notify("a run is going on: c cancels it")
            return
        doc = self.rt.doc
        folder = self.run_path.parent if self.run_path else Path(".")
        out = default_run_path(folder, doc.path)
        self.rt.push_screen(
            RunDialog(self.meta.get("system") or "builtin", self.k, out, len(doc)), self.start_run
        )

    def start_run(self, req: RunRequest | None) -> None:
        if req is None:
            return
        app = self.rt
        doc = app.doc
        before = Shown(self.state, self.meta, self.run_path, self.sidecar, self._summary)
        run = self._run = RunController(
            doc,
            req.system,
            req.k,
            req.out,
            corpus=app.corpus,
            generation=app.session.generation,
            before=before,
        )
        old_side = self.sidecar
        self.state = TriageState([], req.k)
        self.k = req.k
        self.meta = {"system": req.system, "k": req.k, "testset": str(doc.path)}
        self.run_path = req.out
        self.sidecar = old_side.carried_to(req.out) if old_side else Sidecar.load(req.out)
        self._summary = None
        self.table.set_state(self.state)
        self.query_one("#triage-progress", ProgressBar).update(total=run.total, progress=0)
        self.query_one("#triage-progress-row").display = True
        self.query_one("#triage-run-status", Static).update(f" {req.system} · k={req.k} · c cancels")
        self._update_status()
        self._show_detail()
        self.refresh_bindings()
        self._run_worker(run)
        # the run wakes the screen at most every WAKE_EVERY s, so the records that finish
        # just after a wake-up would wait for the next record (or the end, behind a slow
        # case); this timer takes them in any case
        self._drain_timer = self.set_interval(WAKE_EVERY, self._drain)

    @work(thread=True, exclusive=True, group="triage-run", exit_on_error=False)
    def _run_worker(self, run: RunController) -> None:
        """Runs off the UI thread; finished records wait in the controller's queue and a
        (replaceable) RunProgress message tells the screen to take them."""
        outcome = run.run(lambda: self.post_message(RunProgress()))
        self.post_message(RunFinished(outcome.summary, outcome.interrupted, outcome.error, run))

    @on(RunProgress)
    def _on_progress(self, event: RunProgress) -> None:
        self._drain()

    def _drain(self) -> None:
        """Move the records that finished since the last call into the table."""
        run, state = self._run, self.state
        if run is None or state is None:
            return
        batch = run.drain()
        if not batch:
            return
        s = self.rt.session
        edited = s.generation != run.generation
        keep = self.table.current_id
        for rec in batch:
            if edited and rec["id"] in s.doc:
                rec = relabel_record(rec, s.doc.case(rec["id"]), state.k, s.doc.settings)
            state.add(rec)
        self.table.reload_lines(keep)
        if keep is None:
            self.table.action_first()
        self.query_one("#triage-progress", ProgressBar).update(progress=len(state))
        self._update_status()

    @on(RunFinished)
    def _run_finished(self, event: RunFinished) -> None:
        run = self._run
        if run is None or event.run is not run:
            return
        self._drain()
        self._run = None
        if self._drain_timer is not None:
            self._drain_timer.stop()
            self._drain_timer = None
        self.query_one("#triage-progress-row").display = False
        self.refresh_bindings()
        state = self.state
        if state is None:
            return
        error = event.error
        if error and not len(state) and run.before is not None and run.before.state is not None:
            self._restore_before_run(run, error)
            return
        self.rt.run_path = run.out
        self.meta = dict(self.meta, testset_hash=self.rt.doc.content_hash if self.rt.loaded else None)
        self._summary = event.summary
        if len(state) or run.out.exists():
            self._save_sidecar()
        n = len(state)
        if error:
            self.notify(
                f"run stopped: {error} · kept {n} finished case{'s' * (n != 1)} in {run.out}",
                severity="error",
                timeout=8,
            )
        elif event.interrupted:
            self.notify(
                f"run cancelled: kept {n} finished case{'s' * (n != 1)} in {run.out} "
                "(ragtriage run --resume continues it)",
                severity="warning",
                timeout=8,
            )
        else:
            fails = state.failures()
            self.notify(f"run finished: {n} cases · ✗ {fails} fail · ✓ {n - fails} pass · {run.out}")
        self._publish_reasons()
        self._update_status()
        self._show_detail()
        self.refresh_summary()

    def _restore_before_run(self, run: RunController, error: str) -> None:
        """A run that failed before any case (a bad system spec, a server that is down) left
        an empty table and a run file with no case: show the earlier run again instead."""
        before = run.before
        if before is None or before.state is None:
            return
        self.state, self.meta, self.run_path = before.state, before.meta, before.run_path
        self.sidecar, self._summary, self.k = before.sidecar, before.summary, before.state.k
        run.forget_output()
        self.table.set_state(before.state)
        self.table.action_first()
        shown = self.run_path.name if self.run_path else "the earlier run"
        self.notify(
            f"run failed before any case: {error} · still showing {shown}", severity="error", timeout=10
        )
        self._update_status()
        self._show_detail()
        self.refresh_summary()

    def action_cancel_run(self) -> None:
        if self._run is None:
            self.notify("no run is going on")
            return
        self._run.stop()
        self.query_one("#triage-run-status", Static).update(" cancelling: waiting for the cases in flight…")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return self.running
        if action == "back":
            return len(self.rt.screen_stack) > 2
        return True

    def action_back(self) -> None:
        if len(self.rt.screen_stack) > 2:
            self.dismiss()

    def action_grade(self) -> None:
        """Grade the highlighted answer (judge.md): supported, then correct."""
        grade_current(self)
