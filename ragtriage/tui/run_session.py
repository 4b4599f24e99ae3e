"""The open run of the app: one owner for everything a run brings (no Textual).

The app holds one :class:`RunSession` beside the editing
:class:`~ragtriage.tui.session.Session`. It owns

* the run's **records** (a :class:`~ragtriage.tui.triage_state.TriageState`:
  in run order, grouped by reason), read once — Triage and the Cases screen's
  reason column are two views of the same records;
* their **rescoring** against the test set as it is now: the app passes it every
  :class:`~ragtriage.tui.edits.Change`, and only the cases a change touched are
  recomputed from their stored ranking (a reload, or a test set changed outside
  the app, recomputes all of them — in a worker above :data:`RESCORE_INLINE` cases);
* the **sidecar** ``RUN.triage.json`` (reviewed marks, re-run records), the test
  set's **grades** (:class:`~ragtriage.tui.grading.GradeBook`) and **review notes**
  (:mod:`ragtriage.core.notes`, which follow the case from run to run);
* the **run controller** of a run started from the app, whose records stream in.

It tells the app what changed through ``emit(event)``, with the frozen
dataclasses below (:data:`RunEvent`); the app posts each one to every screen as
a :class:`~ragtriage.tui.messages.RunChanged` message, and the screens redraw
what the event names. Nothing here waits on a system: reading a run, a full
rescore and a run are blocking calls the app makes from its workers
(:meth:`RunSession.read`, :meth:`RescoreJob.run`, ``controller.run``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..core.errors import InputError
from ..core.notes import Note, append_note, make_note, notes_path, read_notes
from .grading import GradeBook
from .triage_run import RunController, RunRequest, Shown
from .triage_state import Sidecar, TriageState, load_triage, relabel_record
from .triage_sync import first_sync, rescore, rescore_all

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.judge.grades import Grade
    from ..core.records import CaseRecord, RunMeta
    from .edits import Change
    from .session import Session

RESCORE_INLINE = 5000  # cases: a full recompute above this runs in a worker
Severity = Literal["information", "warning", "error"]  # of a toast


# ---------------------------------------------------------------------------- events


@dataclass(frozen=True)
class RunOpened:
    """A run file was read (or a run started from the app): every view shows it anew."""

    path: Path | None


@dataclass(frozen=True)
class RunLoadFailed:
    error: InputError


@dataclass(frozen=True)
class RecordsChanged:
    """Records were recomputed, re-run or streamed in (``case_ids`` None: any may have)."""

    case_ids: frozenset[str] | None
    note: str = ""  # for a toast ("3 cases recomputed from the stored rankings")


@dataclass(frozen=True)
class MarksChanged:
    """A reviewed mark, a note or a grade changed on these cases."""

    case_ids: frozenset[str]


@dataclass(frozen=True)
class RunProgressed:
    done: int
    total: int


@dataclass(frozen=True)
class RunEnded:
    text: str
    severity: Severity = "information"


@dataclass(frozen=True)
class RunNotice:
    text: str
    severity: Severity = "information"


RunEvent = RunOpened | RunLoadFailed | RecordsChanged | MarksChanged | RunProgressed | RunEnded | RunNotice


def _ignore(_event: RunEvent) -> None:
    return None


# ---------------------------------------------------------------------------- reading


@dataclass
class LoadedRun:
    meta: RunMeta
    summary: dict | None
    state: TriageState
    sidecar: Sidecar


class Prefetch:
    """A run file read in a thread before the terminal app starts (``ragtriage triage``
    starts one, and the app's load worker collects it instead of reading the file again)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).resolve()
        self._box: dict[str, Any] = {}
        self._thread = threading.Thread(target=self._work, name="ragtriage-prefetch-run", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            self._box["value"] = RunSession.read(self.path)
        except BaseException as e:  # handed to the app's load worker, which reports it
            self._box["error"] = e

    def take(self, path: Path) -> LoadedRun | None:
        """The run read ahead (waiting for it), if it is ``path``; raises what reading raised."""
        if Path(path).resolve() != self.path:
            return None
        self._thread.join()
        if "error" in self._box:
            raise self._box["error"]
        value: LoadedRun = self._box["value"]
        return value


@dataclass
class RescoreJob:
    """Recompute every record against ``doc`` (blocking: a worker calls :meth:`run`)."""

    state: TriageState
    doc: TestSetDocument
    first: bool
    new: list[CaseRecord] = field(default_factory=list)

    def run(self) -> RescoreJob:
        self.new = rescore_all(list(self.state.records), self.doc, self.state.k)
        return self


# ---------------------------------------------------------------------------- the session


class RunSession:
    """The app's open run (or none yet): see the module docstring."""

    def __init__(self, testset_path: str | Path, emit: Callable[[RunEvent], None] = _ignore) -> None:
        self.testset_path = Path(testset_path)
        self.emit = emit
        self.path: Path | None = None
        self.meta: dict[str, Any] = {}
        self.state: TriageState | None = None
        self.sidecar: Sidecar | None = None
        self.stored_summary: dict | None = None  # the run file's summary, while no case changed
        self.load_error: InputError | None = None
        self.controller: RunController | None = None
        self._grades: GradeBook | None = None
        self._notes: dict[str, Note] | None = None
        # keeping up with the test set
        self._synced: Session | None = None  # the editing session the records are up to date with
        self._pending: set[str] | None = set()  # cases changed since (None: any)
        self._job: RescoreJob | None = None  # a full recompute under way in a worker

    # -- what is open ------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        return self.state is not None

    @property
    def running(self) -> bool:
        return self.controller is not None

    @property
    def k(self) -> int:
        return self.state.k if self.state is not None else 3

    @property
    def system(self) -> str:
        return str(self.meta.get("system") or "builtin")

    def record(self, case_id: str) -> CaseRecord | None:
        state = self.state
        return state.record(case_id) if state is not None and case_id in state else None

    def reason(self, case_id: str) -> str | None:
        rec = self.record(case_id)
        return rec.get("reason") if rec is not None else None

    def has_reasons(self) -> bool:
        return self.state is not None and len(self.state) > 0

    # -- reading a run ------------------------------------------------------------------
    @staticmethod
    def read(path: str | Path, prefetch: Prefetch | None = None) -> LoadedRun:
        """Read a run file for triage (blocking; raises ``InputError`` on a bad run file)."""
        ahead = prefetch.take(Path(path)) if prefetch is not None else None
        if ahead is not None:
            return ahead
        meta, summary, state, side = load_triage(path)
        return LoadedRun(meta, summary, state, side)

    def opened(self, path: Path, loaded: LoadedRun) -> None:
        """The run file ``path`` was read (on the interface thread)."""
        self.path = path
        self.meta = dict(loaded.meta)
        self.state = loaded.state
        self.sidecar = loaded.sidecar
        self.stored_summary = loaded.summary if not loaded.sidecar.rerun else None
        self.load_error = None
        self._synced, self._pending, self._job = None, set(), None
        self.emit(RunOpened(path))

    def failed(self, error: InputError) -> None:
        self.load_error = error
        self.emit(RunLoadFailed(error))

    # -- keeping up with the test set ---------------------------------------------------
    def changed(self, change: Change, session: Session) -> RescoreJob | None:
        """The test set changed (an edit, undo, redo, reload): recompute the cases it touched.
        Returns a job for a worker when every case must be recomputed and there are many."""
        if change.cases is None or self._pending is None:
            self._pending = None
        else:
            self._pending |= change.cases
        return self.catch_up(session)

    def catch_up(self, session: Session) -> RescoreJob | None:
        """Bring the records up to date with ``session`` (the cases changed since the last
        time; all of them on first sight of a session that differs from the run's test set)."""
        state = self.state
        if state is None or self._job is not None:
            return None  # not read yet, or a full recompute is under way (it catches up after)
        first = self._synced is not session
        if first:
            ids = first_sync(session.doc, self.meta, self.sidecar)
            if self._pending is None:
                ids = None
            self._synced, self._pending = session, set()
        else:
            ids, self._pending = (None if self._pending is None else sorted(self._pending)), set()
            if ids is not None and not ids:
                return None
        if ids is None and len(state) > RESCORE_INLINE:
            self._job = RescoreJob(state, session.doc, first)
            if first:
                self.emit(
                    RunNotice(
                        "the test set changed since this run: recomputing every case from the stored rankings…"
                    )
                )
            return self._job
        n, touched = rescore(state, ids, session.doc, self.sidecar)
        if n or first:
            note = ""
            if first and ids is None and n:
                note = f"the test set changed since this run: {n} case{'s' * (n != 1)} recomputed from the stored rankings"
            self.emit(RecordsChanged(None if ids is None else frozenset(touched), note))
        return None

    def rescored(self, job: RescoreJob, session: Session) -> RescoreJob | None:
        """A full recompute finished in a worker: put its records in place, then catch up
        with the edits made meanwhile."""
        if job is not self._job:
            return None
        self._job = None
        if job.state is not self.state:
            return self.catch_up(session)
        for rec in job.new:
            job.state.replace(rec)
            if self.sidecar is not None:
                self.sidecar.rescored.add(rec["id"])
        n = len(job.new)
        note = f"{n} case{'s' * (n != 1)} recomputed from the stored rankings" if n else ""
        self.emit(RecordsChanged(None, note))
        return self.catch_up(session)

    def saved(self, doc: TestSetDocument) -> None:
        """The test set was saved with these records: the next session starts from it."""
        if self.sidecar is None or self.path is None:
            return
        self.sidecar.testset_hash = doc.content_hash
        self._save_sidecar()

    # -- marks: reviewed, notes, grades ---------------------------------------------------
    def reviewed(self, case_id: str) -> dict | None:
        return self.sidecar.reviewed(case_id) if self.sidecar is not None else None

    def reviewed_count(self) -> int:
        side = self.sidecar
        return sum(1 for v in side.cases.values() if v.get("reviewed")) if side is not None else 0

    def set_reviewed(self, case_id: str, on: bool) -> None:
        if self.sidecar is None:
            return
        self.sidecar.set_reviewed(case_id, self.reason(case_id), on)
        self._save_sidecar()
        self.emit(MarksChanged(frozenset({case_id})))

    @property
    def notes(self) -> dict[str, Note]:
        """case id -> its latest review note (read from ``<stem>.notes.jsonl`` once)."""
        if self._notes is None:
            self._notes, warnings = read_notes(notes_path(self.testset_path))
            for w in warnings[:1]:
                self.emit(RunNotice(f"{w}", "warning"))
        return self._notes

    def note(self, case_id: str) -> Note | None:
        note = self.notes.get(case_id)
        if note is None and self.sidecar is not None and self.sidecar.note(case_id):
            # written by an older ragtriage into RUN.triage.json: shown until rewritten
            return Note(
                case_id, self.sidecar.note(case_id), None, self.path.name if self.path else None, "", ""
            )
        return note

    def set_note(self, case_id: str, text: str, by: str) -> None:
        """Keep a review note on ``case_id`` about the answer shown now (empty text removes it)."""
        note = make_note(case_id, text, self.record(case_id), self.path.name if self.path else None, by)
        try:
            append_note(notes_path(self.testset_path), note)
        except InputError as e:
            self.emit(RunNotice(f"note not kept: {e.problems[0].message}", "error"))
            return
        if note.note:
            self.notes[case_id] = note
        else:
            self.notes.pop(case_id, None)
        if self.sidecar is not None and self.sidecar.note(case_id):
            self.sidecar.set_note(case_id, "")  # moved to the notes file
            self._save_sidecar()
        self.emit(MarksChanged(frozenset({case_id})))

    @property
    def grades(self) -> GradeBook:
        if self._grades is None:
            self._grades = GradeBook(self.testset_path)
        return self._grades

    def grade_of(self, case_id: str) -> Grade | None:
        rec = self.record(case_id)
        return self.grades.grade_of(rec) if rec is not None else None

    def give_grade(self, case_id: str, supported: bool, correct: bool | None, by: str) -> Grade | None:
        rec = self.record(case_id)
        if rec is None:
            return None
        try:
            g = self.grades.give(rec, supported, correct, by)
        except InputError as e:
            self.emit(RunNotice(str(e.problems[0]), "error"))
            return None
        self.emit(MarksChanged(frozenset({case_id})))
        return g

    def undo_grade(self) -> tuple[str | None, str]:
        """Take back this session's last grade: (its case, what happened in words)."""
        try:
            case, text = self.grades.undo()
        except InputError as e:
            return None, str(e.problems[0])
        if case is not None:
            self.emit(MarksChanged(frozenset({case})))
        return case, text

    def _save_sidecar(self) -> None:
        if self.sidecar is None:
            return
        try:
            self.sidecar.save()
        except OSError as e:
            self.emit(RunNotice(f"reviewed marks not saved: {e}", "error"))

    # -- a run from the app ------------------------------------------------------------------
    def start(
        self, req: RunRequest, doc: TestSetDocument, corpus: Corpus | None, generation: int
    ) -> RunController:
        """Start a run of ``doc`` (the app's worker calls ``controller.run``); the records
        stream in with :meth:`take_finished`."""
        before = Shown(self.state, self.meta, self.path, self.sidecar, self.stored_summary)
        run = self.controller = RunController(
            doc, req.system, req.k, req.out, corpus=corpus, generation=generation, before=before
        )
        old = self.sidecar
        self.state = TriageState([], req.k)
        self.meta = {"system": req.system, "k": req.k, "testset": str(doc.path)}
        self.path = req.out
        self.sidecar = old.carried_to(req.out) if old is not None else Sidecar.load(req.out)
        self.stored_summary = None
        self._job = None
        self.emit(RunOpened(req.out))
        return run

    def take_finished(self, session: Session) -> None:
        """Move the records finished since the last call into the records."""
        run, state = self.controller, self.state
        if run is None or state is None:
            return
        batch = run.drain()
        if not batch:
            return
        doc = session.doc
        edited = session.generation != run.generation
        for rec in batch:
            if edited and rec["id"] in doc:
                rec = relabel_record(rec, doc.case(rec["id"]), state.k, doc.settings)
            state.add(rec)
        self._synced = session
        self.emit(RecordsChanged(frozenset(r["id"] for r in batch)))
        self.emit(RunProgressed(len(state), run.total))

    def finished(
        self, run: RunController, summary: dict | None, interrupted: bool, error: str | None, session: Session
    ) -> None:
        """The run's worker ended (on the interface thread)."""
        if run is not self.controller:
            return
        self.take_finished(session)
        self.controller = None
        state = self.state
        if state is None:
            return
        before = run.before
        if error and not len(state) and before is not None and before.state is not None:
            # failed before any case (a bad spec, a server that is down): show the earlier run
            self.state, self.meta, self.path = before.state, before.meta, before.run_path
            self.sidecar, self.stored_summary = before.sidecar, before.summary
            run.forget_output()
            shown = self.path.name if self.path else "the earlier run"
            self.emit(RunOpened(self.path))
            self.emit(RunEnded(f"run failed before any case: {error} · still showing {shown}", "error"))
            return
        self.meta = dict(self.meta, testset_hash=session.doc.content_hash)
        self.stored_summary = summary
        if len(state) or run.out.exists():
            self._save_sidecar()
        self.emit(RecordsChanged(None))
        self.emit(RunEnded(*self._outcome(run, interrupted, error)))

    def _outcome(self, run: RunController, interrupted: bool, error: str | None) -> tuple[str, Severity]:
        from ..core.runpaths import resume_command

        state = self.state
        n = len(state) if state is not None else 0
        kept = f"kept {n} finished case{'s' * (n != 1)} in {run.out}"
        if error:
            return f"run stopped: {error} · {kept}", "error"
        if interrupted:
            again = resume_command(run.doc.path, run.out, run.system, run.k)
            return f"run cancelled: {kept} · to continue it: {again}", "warning"
        fails = state.failures() if state is not None else 0
        return f"run finished: {n} cases · ✗ {fails} fail · ✓ {n - fails} pass · {run.out}", "information"

    def rerun_done(self, record: CaseRecord) -> None:
        """A case asked again (``R``): its new record replaces the old one, and is kept."""
        state = self.state
        if state is None or record["id"] not in state:
            return
        old = state.record(record["id"]).get("reason")
        state.replace(record)
        if self.sidecar is not None:
            self.sidecar.rerun[record["id"]] = record
        self._save_sidecar()
        self.stored_summary = None
        new = record.get("reason")
        from ..core.diagnosis import PASSING

        glyph = "✓" if new in PASSING else "✗"
        was = f" (was {old})" if old != new else ""
        self.emit(RecordsChanged(frozenset({record["id"]}), f"{record['id']} re-run: {glyph} {new}{was}"))
