"""The Triage screen's foundation: a run's cases grouped by reason, one case in full,
kept up to date with the test set. :class:`~ragtriage.tui.screens.triage.TriageScreen`
adds the actions (relabel, note, re-run, a new run) on top.

The run file is read in a worker; the grouped view needs only the run, so it
shows before the test set has finished loading. Every relabel goes through the
app's session (the test-set document), recomputes the case from the ranking and
answer stored in the run (no system call) and moves it to its new group; ctrl+s
saves the test set, as on every screen.
Reviewed marks, notes and re-run cases are kept in ``RUN.triage.json``.

The pieces that need no screen live beside it: which cases to recompute after a
change (:mod:`ragtriage.tui.triage_sync`), a run started from here
(:mod:`ragtriage.tui.triage_run`) and the summary pane
(:mod:`ragtriage.tui.widgets.triage_summary`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import ProgressBar, Static

from ...core.errors import InputError, TestSetError
from ..base import AppScreen
from ..judge_panel import judge_detail
from ..messages import DocumentChanged
from ..triage_run import RunController
from ..triage_state import (
    Sidecar,
    TriageState,
    load_triage,
    take_prefetched,
)
from ..triage_sync import RunSync, rescore, rescore_all
from ..triage_view import describe
from ..widgets.footer import Footer  # whole keys that fit, the rest in ?
from ..widgets.triage_summary import TriageSummary, builtin_answer_sweep
from ..widgets.triage_table import TriageTable

if TYPE_CHECKING:
    from ...core.records import CaseRecord, RunMeta
    from ...core.schema import Case
    from .run_dialog import RunRequest

RESCORE_INLINE = 5000  # cases: above this a full recompute runs in a worker


class TriageBase(AppScreen[None]):
    """Loads a run, shows it grouped by reason and keeps its records in step with the test set."""

    DEFAULT_CSS = """
    TriageBase #triage-status { height: 1; background: $panel; color: $text; padding: 0 1; }
    TriageBase #triage-main { height: 1fr; }
    TriageBase #triage-table { width: 2fr; height: 1fr; }
    TriageBase #triage-case { width: 3fr; height: 1fr; border-left: solid $panel; padding: 0 1; }
    TriageBase #triage-summary { height: auto; max-height: 14; padding: 0 1; border-top: solid $panel; }
    TriageBase #triage-progress-row { height: 1; padding: 0 1; }
    TriageBase #triage-progress { width: auto; }
    TriageBase #triage-run-status { width: 1fr; }
    """

    class Loaded(Message):
        """The run file was read (posted by the load worker)."""

        def __init__(self, meta: RunMeta, summary: dict | None, state: TriageState, sidecar: Sidecar) -> None:
            super().__init__()
            self.meta = meta
            self.summary = summary
            self.state = state
            self.sidecar = sidecar

    class LoadFailed(Message):
        def __init__(self, error: InputError) -> None:
            super().__init__()
            self.error = error

    class Rescored(Message):
        """A full recompute in a worker finished: ``new`` are the records that changed."""

        def __init__(self, state: TriageState, new: list[CaseRecord]) -> None:
            super().__init__()
            self.state = state
            self.new = new

    def __init__(self, run_path: str | Path | None = None, *, start: RunRequest | None = None) -> None:
        super().__init__()
        self._start = start  # a run to start at once instead of reading one
        self.run_path: Path | None = Path(run_path) if run_path else None
        self.state: TriageState | None = None
        self.sidecar: Sidecar | None = None
        self.meta: dict = {}
        self.k = 3
        self.sync = RunSync()
        self._run: RunController | None = None
        self._summary: dict | None = None  # the run file's summary, while no case changed
        self.load_error: InputError | None = None

    # -- layout ------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("loading run…", id="triage-status")
        with Horizontal(id="triage-main"):
            yield TriageTable(id="triage-table", marks=self._marks)
            with VerticalScroll(id="triage-case"):
                yield Static("", id="triage-detail")
        yield TriageSummary(id="triage-summary")
        with Horizontal(id="triage-progress-row"):
            yield ProgressBar(id="triage-progress", show_eta=True)
            yield Static("", id="triage-run-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#triage-progress-row").display = False
        table = self.table
        table.loading = True
        table.focus()
        if self._start is not None:
            table.loading = False
            self.start_run(self._start)
            return
        if self.run_path is None:
            self.run_path = self.rt.run_path
        self.load_run()

    @property
    def table(self) -> TriageTable:
        return self.query_one(TriageTable)

    @property
    def running(self) -> bool:
        return self._run is not None

    # -- loading -----------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="triage-load", exit_on_error=False)
    def load_run(self) -> None:
        path = self.run_path
        if path is None:
            return
        try:
            meta, summary, state, side = take_prefetched(path) or load_triage(path)
        except InputError as e:
            self.post_message(self.LoadFailed(e))
            return
        self.post_message(self.Loaded(meta, summary, state, side))

    @on(LoadFailed)
    def _load_failed(self, event: LoadFailed) -> None:
        self.load_error = event.error
        if self.rt.mode == "triage":
            self.rt.fail(event.error)
        else:
            problems = event.error.problems[:2]
            self.notify("run not loaded: " + "; ".join(str(p) for p in problems), severity="error")
            self.dismiss()

    @on(Loaded)
    def _run_loaded(self, event: Loaded) -> None:
        state, side = event.state, event.sidecar
        self.meta = dict(event.meta)  # the run's head, added to as runs are made here
        self.k = state.k
        self.state = state
        self.sidecar = side
        self._summary = event.summary if event.summary is not None and not side.rerun else None
        table = self.table
        table.loading = False
        table.set_state(state)
        table.action_first()
        self._publish_reasons()
        self.show_state()
        self.refresh_summary()
        if self.rt.mode == "triage" and not self.rt.loaded:
            self.rt.load_document()  # after the run is on screen: the two loads do not share the CPU

    # -- keeping up with the test set ----------------------------------------------------
    def document_changed(self, event: DocumentChanged) -> None:
        self.show_state()
        if event.saved and self.sidecar is not None and self.rt.loaded:
            # the test set as saved with these rescored cases: the next session starts from it
            self.sidecar.testset_hash = self.rt.doc.content_hash
            self._save_sidecar()

    def on_screen_resume(self) -> None:
        self.show_state()

    def start_run(self, req: RunRequest | None) -> None:
        """Run the test set and show the cases as they finish (TriageScreen does it)."""

    def show_state(self) -> None:
        if self.state is None or not self.is_mounted:
            return
        if self.rt.loaded:
            self._catch_up()
        self._update_status()
        self._show_detail()

    def _catch_up(self) -> None:
        """Recompute the cases whose labels changed since the records were last brought up to date."""
        state, session, side = self.state, self.rt.session, self.sidecar
        if state is None or side is None:
            return
        first = not self.sync.started
        ids = self.sync.first(session, self.meta, side) if first else self.sync.changed(session)
        if ids is not None and not ids:
            if first and self.meta.get("system") == "builtin":
                self.refresh_summary()  # the answer sweep needs the test set
            return
        if ids is None and len(state) > RESCORE_INLINE:  # off the UI thread
            if first:
                self.notify(
                    "the test set changed since this run: recomputing every case from the stored rankings…"
                )
            self._rescore_all(state)
            return
        changed = self._rescore(ids)
        if first and not changed and self.meta.get("system") == "builtin":
            self.refresh_summary()
        if first and ids is None and changed:
            self.notify(
                f"the test set changed since this run: {changed} case{'s' * (changed != 1)} "
                "recomputed from the stored rankings"
            )

    @work(thread=True, exclusive=True, group="triage-rescore", exit_on_error=False)
    def _rescore_all(self, state: TriageState) -> None:
        self.post_message(self.Rescored(state, rescore_all(list(state.records), self.rt.doc, state.k)))

    @on(Rescored)
    def _rescored_all(self, event: Rescored) -> None:
        state, new = event.state, event.new
        if state is not self.state:
            return
        keep = self.table.current_id
        for rec in new:
            state.replace(rec)
            if self.sidecar is not None:
                self.sidecar.rescored.add(rec["id"])
        self.table.reload_lines(keep)
        self._publish_reasons()
        self._update_status()
        self._show_detail()
        self.refresh_summary()
        if new:
            self.notify(f"{len(new)} case{'s' * (len(new) != 1)} recomputed from the stored rankings")
        self.show_state()  # edits made meanwhile

    def _rescore(self, ids: list[str] | None) -> int:
        """Recompute the given cases (None: all) from their stored ranking; returns how many changed."""
        if self.state is None or not self.rt.loaded:
            return 0
        keep = self.table.current_id
        n = rescore(self.state, ids, self.rt.doc, self.sidecar)
        if n:
            self.table.reload_lines(keep)
            self._publish_reasons()
            self.refresh_summary()
        return n

    def _publish_reasons(self) -> None:
        """Let every screen (the Cases screen's reason column) show the current reasons."""
        if self.state is not None:
            self.rt.set_reasons({r["id"]: r["reason"] for r in self.state.records if r.get("reason")})

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
        app = self.rt
        parts = [self.run_path.name if self.run_path else "run"]
        parts.append(app.doc.path.name if app.loaded else "loading test set…")
        parts.append(f"{self.meta.get('system', '?')} · k={self.k}")
        n = len(state)
        fails = state.failures()
        parts.append(f"{n} case{'s' * (n != 1)} · ✗ {fails} fail · ✓ {n - fails} pass")
        side = self.sidecar
        reviewed = sum(1 for v in side.cases.values() if v.get("reviewed")) if side else 0
        if reviewed:
            parts.append(f"☑ {reviewed} reviewed")
        if self._run is not None:
            parts.append(f"running {len(state)}/{self._run.total}")
        if app.loaded and app.session.dirty:
            parts.append("● unsaved (ctrl+s saves)")
        self.query_one("#triage-status", Static).update(" · ".join(parts))

    def _chunk_text(self) -> Callable[[str], str | None] | None:
        corpus = self.rt.corpus
        if corpus is None:
            return None

        def lookup(cid: str) -> str | None:
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
        doc = self.rt.doc if self.rt.loaded else None
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

    # -- summary -------------------------------------------------------------------------
    def refresh_summary(self) -> None:
        """Recompute the summary and the sweep in a worker; one at a time, the last request wins."""
        if self.state is None:
            return
        app = self.rt
        answers = builtin_answer_sweep(
            app.doc if app.loaded else None, app.corpus, self.meta.get("system"), len(self.state)
        )
        self.query_one(TriageSummary).request(self.state, self._summary, answers)

    def action_toggle_summary(self) -> None:
        w = self.query_one(TriageSummary)
        w.display = not w.display

    # -- actions: helpers ------------------------------------------------------------------
    def _current(self, need_doc: bool = True) -> tuple[str, CaseRecord, Any] | None:
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
        if not self.rt.loaded:
            self.notify("still loading the test set")
            return None
        doc = self.rt.doc
        if cid not in doc:
            self.notify(f"{cid} is not in the test set any more", severity="warning")
            return None
        case: Case = doc.case(cid)
        return cid, rec, case

    def _relabel(self, cid: str, message: str, **fields: Any) -> bool:
        """Edit the case through the session and recompute it (ctrl+s saves, as on every screen)."""
        if self.state is None:
            return False
        before = self.state.record(cid).get("reason")
        try:
            self.rt.edit("update_case", cid, **fields)
        except TestSetError as e:
            self.notify("not changed: " + "; ".join(p.message for p in e.problems[:2]), severity="error")
            return False
        self._catch_up()  # recomputed and regrouped now, not when the announcement arrives
        after = self.state.record(cid).get("reason")
        self.table.move_to(cid)
        move = f" · {before} → {after}" if before != after else f" · still {after}"
        self.notify(message + move)
        return True

    def _save_sidecar(self) -> None:
        if self.sidecar is None:
            return
        try:
            self.sidecar.save()
        except OSError as e:
            self.notify(f"reviewed marks and notes not saved: {e}", severity="error")
