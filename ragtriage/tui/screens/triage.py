"""Triage: a run's failures grouped by reason, one case in full, and the actions
that fix the test set where the test set is wrong.

A view of the app's :class:`~ragtriage.tui.run_session.RunSession`: the records,
their groups, reviewed marks, review notes and grades all live there, and this
screen redraws what each :class:`~ragtriage.tui.messages.RunChanged` event names.
Every relabel is an edit of the test set through the app (one undo step); the
run session recomputes the case from the ranking and answer stored in the run
(no system call) before the edit returns, so the toast says where it moved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import ProgressBar, Static

from ...core.errors import TestSetError
from ..base import AppScreen, detail_bindings
from ..edits import UpdateCase
from ..judge_panel import judge_detail
from ..run_session import MarksChanged, RecordsChanged, RunEnded, RunEvent, RunOpened, RunProgressed
from ..shown import plain, shown_line, shown_text
from ..triage_view import describe, retrieved_choices
from ..widgets.footer import Footer  # whole keys that fit, the rest in ?
from ..widgets.triage_summary import Context, TriageSummary, builtin_answer_sweep
from ..widgets.triage_table import TriageTable

if TYPE_CHECKING:
    from ...core.records import CaseRecord
    from ...core.schema import Case
    from ..triage_state import TriageState

# a dead end with nothing to choose from says where the whole corpus can be searched
PICK_HINT = " · p searches the whole corpus (the chunk picker)"


class TriageScreen(AppScreen[None]):
    """Home of ``ragtriage triage``; reachable from Cases when a run is loaded."""

    HELP_TITLE = "Triage"
    HELP_INTRO = """
The run's cases grouped by diagnosis reason: failures first, in the fixed
order, then passes. ✗ fail / ✓ pass; ☑ reviewed; ✍ review note; ◆ graded.
A relabel ({a} accept, {r} replace, {u} unanswerable, {m} must contain) recomputes
the case at once from the ranking and answer stored in the run — no system
call — and moves it to its new group. Every relabel is one undo step
({ctrl+z}); {ctrl+s} saves the test set (labels recorded), as on every screen.

{o} writes a review note: it is kept beside the test set with the answer it is
about, and shown on every later run and on Cases. {v} marks the case reviewed
(kept with the run). {g} opens the grading queue: the answers the judge's
calibration needs, graded blind (the judge's verdict shows only after your grade).

{i} shows or hides the summary: every rate with its 95 % interval (the numbers
`ragtriage run` prints), the judge against your grades — κ with its interval, whether
a CI bar may use the judge, the judge's rates corrected by your grades — the rates
per k, and every rate per tag and per topic. {I} shows the summary in full (again:
back); there {J} and {K} scroll it.
"""

    DETAIL = "#triage-case"

    DEFAULT_CSS = """
    TriageScreen #triage-status { height: 1; background: $panel; color: $text; padding: 0 1; }
    TriageScreen #triage-main { height: 1fr; }
    TriageScreen #triage-table { width: 2fr; height: 1fr; }
    TriageScreen #triage-case { width: 3fr; height: 1fr; border-left: solid $panel; padding: 0 1; }
    TriageScreen #triage-summary-pane {
        height: auto; max-height: 45%; border-top: solid $panel; scrollbar-size-vertical: 1;
    }
    TriageScreen #triage-summary-pane.-full { height: 1fr; max-height: 100%; }
    TriageScreen #triage-summary { height: auto; padding: 0 1; }
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
        Binding("p", "pick", "Pick", id="triage.pick", tooltip="chunk picker: search the whole corpus"),
        Binding("o", "note", "Note", id="triage.note", tooltip="a review note, kept with the case"),
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
        Binding(
            "I",
            "full_summary",
            "Summary in full",
            show=False,
            id="triage.summary_full",
            tooltip="the summary on the whole screen (J / K scroll it); again: back",
        ),
        Binding("g", "grade", "Grade", id="triage.grade", tooltip="the grading queue: grade answers blind"),
        Binding("escape", "back", "Back", id="triage.back"),
        *detail_bindings("triage"),
    ]

    def compose(self) -> ComposeResult:
        yield Static("loading run…", id="triage-status")
        with Horizontal(id="triage-main"):
            yield TriageTable(id="triage-table", marks=self._marks)
            with VerticalScroll(id="triage-case"):
                yield Static("", id="triage-detail")
        with VerticalScroll(id="triage-summary-pane"):
            yield TriageSummary(id="triage-summary")
        with Horizontal(id="triage-progress-row"):
            yield ProgressBar(id="triage-progress", show_eta=True)
            yield Static("", id="triage-run-status")
        yield Footer(compact=True)

    def __init__(self) -> None:
        super().__init__()
        self._shown: TriageState | None = None  # the records the table shows
        self._seen_version = -1
        self._detail_of: str | None = None  # the case the detail pane shows

    def on_mount(self) -> None:
        self.query_one("#triage-progress-row").display = False
        self.table.focus()
        self.show_state()

    def on_screen_resume(self) -> None:
        self.show_state()
        self.refresh_bindings()

    @property
    def table(self) -> TriageTable:
        return self.query_one(TriageTable)

    @property
    def state(self) -> TriageState | None:
        """The run session's records (None while the run is read)."""
        return self.rt.run_session.state

    # -- keeping the view in step with the run session ------------------------------------
    def run_changed(self, event: RunEvent) -> None:
        if isinstance(event, RunOpened):
            self._shown = None
            self.show_state()
            self.refresh_bindings()
        elif isinstance(event, RecordsChanged):
            if event.note:
                self.notify(event.note)
            self._records_changed(event.case_ids)
        elif isinstance(event, MarksChanged):
            self.table.refresh()
            self._update_status()
            if self.table.current_id in event.case_ids:
                self._show_detail()
            self.refresh_summary()  # a grade moves the judge's κ and corrected rates
        elif isinstance(event, RunProgressed):
            self.query_one("#triage-progress", ProgressBar).update(total=event.total, progress=event.done)
            self._update_status()
        elif isinstance(event, RunEnded):
            self._show_progress(False)
            self.refresh_bindings()
            self._update_status()

    def _records_changed(self, ids: frozenset[str] | None) -> None:
        state = self.state
        if state is None:
            return
        if self._shown is not state:
            self.show_state()
            return
        table = self.table
        table.reload_lines()  # on the case it was on, wherever that moved
        self._seen_version = state.version  # shown: a resume (the chooser closing) need not again
        if table.selected is None:
            table.action_first()
        self._update_status()
        if ids is None or table.current_id in ids:
            self._show_detail()
        self.refresh_summary()

    def document_changed(self, event: Any) -> None:
        self._update_status()
        cid = self.table.current_id if self.state is not None else None
        if event.case_ids is None or (cid is not None and cid in event.case_ids):
            self._show_detail()

    def show_state(self) -> None:
        run = self.rt.run_session
        state = run.state
        table = self.table
        if state is None:
            status = "run not loaded" if run.load_error is not None else "loading run…"
            self.query_one("#triage-status", Static).update(plain(status))
            table.loading = run.load_error is None
            return
        table.loading = False
        if self._shown is not state:
            self._shown = state
            table.set_state(state)
            table.action_first()
            self.detail_home()
            self.refresh_summary()
        elif self._seen_version != state.version:
            table.reload_lines()
            self.refresh_summary()
        self._seen_version = state.version
        self._show_progress(run.running)
        self._update_status()
        self._show_detail()

    def _show_progress(self, on: bool) -> None:
        row = self.query_one("#triage-progress-row")
        run = self.rt.run_session
        if on and run.controller is not None:
            c = run.controller
            self.query_one("#triage-progress", ProgressBar).update(
                total=c.total, progress=len(self.state or ())
            )
            self.query_one("#triage-run-status", Static).update(
                plain(f" {shown_line(c.system)} · k={c.k} · c cancels")
            )
        row.display = on

    # -- display -----------------------------------------------------------------------
    def _marks(self, case_id: str) -> str:
        run = self.rt.run_session
        out = []
        if run.reviewed(case_id):
            out.append("☑")
        if run.note(case_id) is not None:
            out.append("✍")
        if run.grades.table and run.grade_of(case_id) is not None:
            out.append("◆ graded")
        return " ".join(out)

    def _update_status(self) -> None:
        """Run, test set, system and counts; at 80 columns the parts that matter most stay:
        unsaved and running first, the file names last."""
        state, app = self.state, self.rt
        if state is None:
            return
        run = app.run_session
        head: list[str] = []
        if app.loaded and app.session.saving is not None:
            head.append("saving…")
        elif app.loaded and app.session.unsaved:
            head.append("● unsaved")
        if run.controller is not None:
            head.append(f"running {len(state)}/{run.controller.total}")
        n, fails = len(state), state.failures()
        counts = [f"{n} case{'s' * (n != 1)}", f"✗ {fails} fail", f"✓ {n - fails} pass"]
        reviewed = run.reviewed_count()
        if reviewed:
            counts.append(f"☑ {reviewed}")
        where = [f"{run.system} k={run.k}", run.path.name if run.path else "run"]
        where.append(app.doc.path.name if app.loaded else "loading test set…")
        self.query_one("#triage-status", Static).update(
            plain(" · ".join(shown_line(p) for p in head + counts + where))
        )

    def _chunk_text(self) -> Callable[[str], str | None] | None:
        corpus = self.rt.corpus
        if corpus is None:
            return None

        def lookup(cid: str) -> str | None:
            ch = corpus.get(cid)
            return ch.text if ch is not None else None

        return lookup

    def _show_detail(self, case_id: str | None = None) -> None:
        state = self.state
        if state is None:
            return
        cid = case_id or self.table.current_id
        detail = self.query_one("#triage-detail", Static)
        if cid is None or cid not in state:
            detail.update("no case" if not len(state) else "")
            return
        run = self.rt.run_session
        rec = state.record(cid)
        doc = self.rt.doc if self.rt.loaded else None
        case = doc.case(cid) if doc is not None and cid in doc else None
        note = run.note(cid)
        detail.update(
            shown_text(
                describe(
                    rec,
                    run.k,
                    case=case,
                    chunk_text=self._chunk_text(),
                    reviewed=run.reviewed(cid),
                    note=note,
                    note_current=note.about(rec) if note is not None else False,
                    notes_field=case.notes if case is not None else None,
                    system=run.system,
                    quotes_now=self.rt.stale.quotes_of(cid),
                )
                + judge_detail(rec, run.grade_of(cid))
            )
        )

    @on(TriageTable.Highlighted)
    def _highlighted(self, event: TriageTable.Highlighted) -> None:
        self._show_detail(event.case_id)
        if event.case_id != self._detail_of:  # another case: its id and reason first,
            self._detail_of = event.case_id  # not the scroll position of the last one
            self.detail_home()

    # -- summary -------------------------------------------------------------------------
    _summary_due = False  # a change came while the summary was hidden

    def refresh_summary(self) -> None:
        """Recompute the summary and the sweep in a worker; one at a time, the last request wins."""
        state = self.state
        if state is None:
            return
        if not self.summary_pane.display:  # hidden (`i`): computed when it is shown again
            self._summary_due = True
            return
        self._summary_due = False
        app, run = self.rt, self.rt.run_session
        answers = builtin_answer_sweep(app.doc if app.loaded else None, app.corpus, run.system, len(state))
        self.query_one(TriageSummary).request(
            state, run.stored_summary, answers, run.grades, self._summary_context()
        )

    def _summary_context(self) -> Context:
        from ...core.judge import thresholds

        app = self.rt
        if not app.loaded:
            return Context(corpus=app.corpus)
        doc = app.doc
        min_kappa, min_grades = thresholds(doc.settings.gates, doc.settings)
        path = app.corpus_path
        # the cases are read on the worker when the settled pass runs, not here on each change
        return Context(doc.cases_now, app.corpus, None if path is None else str(path), min_kappa, min_grades)

    @property
    def summary_pane(self) -> VerticalScroll:
        return self.query_one("#triage-summary-pane", VerticalScroll)

    def action_toggle_summary(self) -> None:
        pane = self.summary_pane
        if pane.has_class("-full"):
            self.action_full_summary()
        pane.display = not pane.display
        if pane.display and self._summary_due:
            self.refresh_summary()

    def action_full_summary(self) -> None:
        """The summary on the whole screen, or back to its pane under the cases."""
        pane = self.summary_pane
        full = not pane.has_class("-full")
        pane.set_class(full, "-full")
        pane.display = True
        if self._summary_due:
            self.refresh_summary()
        self.query_one("#triage-main").display = not full
        if not full:
            pane.scroll_home(animate=False)
            self.table.focus()
        self.refresh_bindings()

    def action_scroll_detail(self, lines: int) -> None:
        if self.summary_pane.has_class("-full"):
            pane = self.summary_pane  # from the target: keys faster than frames each count
            pane.scroll_to(y=max(0.0, pane.scroll_target_y + lines), animate=False)
        else:
            super().action_scroll_detail(lines)

    # -- actions: helpers ------------------------------------------------------------------
    def _selected(self) -> tuple[str, CaseRecord] | None:
        """(case id, record) of the selected case, or None with a message."""
        state = self.state
        if state is None:
            self.notify("still loading the run")
            return None
        cid = self.table.current_id
        if cid is None:
            self.notify("no case selected")
            return None
        return cid, state.record(cid)

    def _current(self) -> tuple[str, CaseRecord, Case] | None:
        """(case id, record, the test set's case) of the selected case, or None with a message."""
        sel = self._selected()
        if sel is None:
            return None
        if not self.rt.loaded:
            self.notify("still loading the test set")
            return None
        cid, rec = sel
        doc = self.rt.doc
        if cid not in doc:
            self.notify(f"{cid} is not in the test set any more", severity="warning")
            return None
        return cid, rec, doc.case(cid)

    def _relabel(self, cid: str, message: str, **fields: Any) -> bool:
        """Edit the case (one undo step); the run session recomputes it before this returns."""
        run = self.rt.run_session
        before = run.reason(cid)
        try:
            self.rt.edit(UpdateCase(cid, fields))
        except TestSetError as e:
            self.notify("not changed: " + "; ".join(p.message for p in e.problems[:2]), severity="error")
            return False
        after = run.reason(cid)
        self.table.reload_lines(cid)
        self.table.move_to(cid)
        move = f" · {before} → {after}" if before != after else f" · still {after}"
        self.notify(message + move)
        return True

    def _choices(self, rec: CaseRecord, exclude: set[str]) -> list[tuple[str, str]]:
        return retrieved_choices(rec, exclude, self.rt.run_session.k, self._chunk_text())

    # -- actions -------------------------------------------------------------------------
    def action_accept(self) -> None:
        cur = self._current()
        if cur is None:
            return
        cid, rec, case = cur
        choices = self._choices(rec, set(case.expected))
        if not choices:
            why = (
                "every retrieved chunk is already expected" if rec.get("ranking") else "nothing was retrieved"
            )
            self.notify(why + PICK_HINT)
            return
        from ..dialogs.triage import ChunkChoice

        def chosen(chunk: str | None) -> None:
            if chunk is not None:
                expected = [*case.expected, chunk]
                self._relabel(
                    cid, f"{cid}: {chunk} accepted as also correct", expected=expected, unanswerable=None
                )

        title = f"Accept a retrieved chunk as also correct — {cid}"
        hint = "It is added to expected; its label is recorded on save."
        self.rt.push_screen(ChunkChoice(title, choices, hint), chosen)

    def action_replace(self) -> None:
        cur = self._current()
        if cur is None:
            return
        cid, rec, case = cur
        choices = self._choices(rec, set(case.expected))
        if not choices:
            self.notify("no other retrieved chunk to use instead" + PICK_HINT)
            return
        from ..dialogs.triage import ChunkChoice

        old = ", ".join(case.expected) or "nothing"

        def chosen(chunk: str | None) -> None:
            if chunk is not None:
                self._relabel(
                    cid, f"{cid}: expected {old} replaced by {chunk}", expected=[chunk], unanswerable=None
                )

        title = f"Replace the expected chunk ({old}) — {cid}"
        self.rt.push_screen(
            ChunkChoice(title, choices, "The chosen chunk becomes the only expected one."), chosen
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
        from ..dialogs.triage import MustContainDialog

        def done(strings: list[str] | None) -> None:
            if strings is None or list(strings) == list(case.must_contain):
                return
            shown = " · ".join(f"“{s}”" for s in strings) or "nothing"
            self._relabel(cid, f"{cid}: must contain {shown}", must_contain=strings or None)

        answer = rec.get("answer") if isinstance(rec.get("answer"), str) else None
        self.rt.push_screen(MustContainDialog(cid, list(case.must_contain), answer), done)

    def action_edit(self) -> None:
        cur = self._current()
        if cur is not None:
            self.rt.open_editor(cur[0])

    def action_pick(self) -> None:
        cur = self._current()
        if cur is not None:
            self.rt.open_picker(cur[0])

    def action_note(self) -> None:
        cur = self._selected()
        if cur is None:
            return
        cid = cur[0]
        from ..dialogs.triage import NoteDialog

        run = self.rt.run_session
        note = run.note(cid)

        def done(text: str | None) -> None:
            if text is None:
                return

            def write(name: str) -> None:
                run.set_note(cid, text, name)
                self.notify(f"{cid}: review note kept" if text.strip() else f"{cid}: review note removed")

            self.rt.with_grader(write)

        self.rt.push_screen(NoteDialog(cid, note.note if note is not None else ""), done)

    def action_reviewed(self) -> None:
        cur = self._selected()
        if cur is None:
            return
        cid = cur[0]
        run = self.rt.run_session
        on = not run.reviewed(cid)
        run.set_reviewed(cid, on)
        self.notify(f"{cid}: ☑ reviewed" if on else f"{cid}: not reviewed")

    def action_rerun_case(self) -> None:
        cur = self._current()
        if cur is not None:
            self.rt.rerun_case(cur[0])

    def action_run(self) -> None:
        self.rt.open_run()

    def action_cancel_run(self) -> None:
        if not self.rt.cancel_run():
            self.notify("no run is going on")
            return
        self.query_one("#triage-run-status", Static).update(" cancelling: waiting for the cases in flight…")

    #: what acts on the selected case: off while the summary covers the cases
    CASE_ACTIONS = frozenset(
        {
            "accept",
            "replace",
            "unanswerable",
            "must_contain",
            "edit",
            "pick",
            "note",
            "reviewed",
            "rerun_case",
        }
    )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        full = self.is_mounted and self.summary_pane.has_class("-full")
        if action == "cancel_run":
            return self.rt.run_session.running
        if action == "back":
            return full or len(self.rt.screen_stack) > 2
        if full and action in self.CASE_ACTIONS:
            return False  # no key acts on a case the screen does not show
        return True

    def action_back(self) -> None:
        if self.summary_pane.has_class("-full"):  # escape: from the whole summary back to the cases
            self.action_full_summary()
        elif len(self.rt.screen_stack) > 2:
            self.dismiss()

    def action_grade(self) -> None:
        """The grading queue (judge.md): the answers to grade, blind, one after the other."""
        self.rt.open_grading()
