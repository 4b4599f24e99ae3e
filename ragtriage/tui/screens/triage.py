"""Triage: a run's failures grouped by reason, one case in full, and the actions
that fix the test set where the test set is wrong.

The run file is read in a worker; the grouped view needs only the run, so it
shows before the test set has finished loading. Every relabel goes through the
app's session (the test-set document), recomputes the case from the ranking and
answer stored in the run (no system call), moves it to its new group and saves.
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
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import ProgressBar, Static

from ...core.diagnosis import PASSING
from ...core.errors import InputError, TestSetError
from ..base import AppScreen
from ..messages import DocumentChanged, RunFinished, RunProgress
from ..triage_run import RunController, Shown
from ..triage_state import (
    Sidecar,
    TriageState,
    default_run_path,
    load_triage,
    relabel_record,
    take_prefetched,
)
from ..triage_sync import RunSync, rescore, rescore_all
from ..triage_view import describe
from ..widgets.footer import Footer  # whole keys that fit, the rest in ?
from ..widgets.triage_summary import TriageSummary, builtin_answer_sweep
from ..widgets.triage_table import TriageTable

if TYPE_CHECKING:
    from ...core.schema import Case
    from .run_dialog import RunRequest

SAVE_AT_ONCE = 5000  # cases: above this a relabel is saved after SAVE_DELAY seconds without another
SAVE_DELAY = 1.5
RESCORE_INLINE = 5000  # cases: above this a full recompute runs in a worker

# a dead end with nothing to choose from says where the whole corpus can be searched
PICK_HINT = " · e opens the editor, where ctrl+o searches the whole corpus"


class TriageScreen(AppScreen[None]):
    """Home of ``ragtriage triage``; reachable from Cases when a run is loaded."""

    HELP_TITLE = "Triage"
    HELP_INTRO = """
The run's cases grouped by diagnosis reason: failures first, in the fixed
order, then passes. ✗ fail / ✓ pass; ☑ reviewed; ✎ has a note.
A relabel (accept, replace, unanswerable, must contain) recomputes the case at
once from the ranking and answer stored in the run — no system call — moves it
to its new group and saves the test set (labels recorded).
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
        Binding("escape", "back", "Back", id="triage.back"),
    ]

    class Loaded(Message):
        """The run file was read (posted by the load worker)."""

        def __init__(self, meta: dict, summary: dict | None, state: TriageState, sidecar: Sidecar) -> None:
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

        def __init__(self, state: TriageState, new: list[dict]) -> None:
            super().__init__()
            self.state = state
            self.new = new

    class Reran(Message):
        def __init__(self, record: dict) -> None:
            super().__init__()
            self.record = record

    class Failed(Message):
        """A worker failed in a way the user should hear about."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, run_path: str | Path | None = None) -> None:
        super().__init__()
        self.run_path: Path | None = Path(run_path) if run_path else None
        self.state: TriageState | None = None
        self.sidecar: Sidecar | None = None
        self.meta: dict = {}
        self.k = 3
        self.sync = RunSync()
        self._run: RunController | None = None
        self._save_timer: Timer | None = None
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
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#triage-progress-row").display = False
        table = self.table
        table.loading = True
        table.focus()
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
        self.meta = event.meta
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

    def on_screen_resume(self) -> None:
        self.show_state()

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
            parts.append("● saving…" if self._save_timer is not None else "● unsaved")
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
    def _current(self, need_doc: bool = True) -> tuple[str, dict, Any] | None:
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
        """Edit the case through the session, recompute it, save the test set."""
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
        self._schedule_save()
        return True

    def _schedule_save(self) -> None:
        """Save at once on a small set; on a big one (a save there costs a second or more)
        after a short pause, so a burst of relabels is one save and keys never wait on it."""
        if not self.rt.loaded or len(self.rt.doc) <= SAVE_AT_ONCE:
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
        self.rt.action_save()
        if self.rt.loaded and self.sidecar is not None:
            s = self.rt.session
            if not s.dirty:
                self.sidecar.testset_hash = s.doc.content_hash
                self.sync.mark(s)
        self._save_sidecar()
        self._update_status()

    def _save_sidecar(self) -> None:
        if self.sidecar is None:
            return
        try:
            self.sidecar.save()
        except OSError as e:
            self.notify(f"reviewed marks and notes not saved: {e}", severity="error")

    def _choices(self, rec: dict, exclude: set[str]) -> list[tuple[str, str]]:
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
