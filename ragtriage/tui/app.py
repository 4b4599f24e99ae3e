"""The ragtriage app: one App, screens in their own modules.

The app owns the shared state every screen reads — the editing
:class:`~ragtriage.tui.session.Session`, the corpus, the lexical index, the run's
reasons and the stale labels — and loads each of them in a worker so that keys
never wait on a file. Workers report back with messages
(:mod:`ragtriage.tui.messages`). Screens show state and call
:meth:`RagtriageApp.edit` (one place where the document changes, the recovery
file is written and every screen is told, by a :class:`DocumentChanged`
message); they move between each other through the app's ``open_*`` methods, so
no screen imports another.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import ModalScreen, Screen

from .base import AppScreen
from .messages import (
    AppStateChanged,
    CorpusFailed,
    CorpusLoaded,
    DocumentChanged,
    DocumentLoaded,
    IndexBuilt,
    IndexFailed,
    LoadFailed,
    Notice,
    PreviewRead,
    ReasonsRescored,
    Reloaded,
    StaleCheckAgain,
    StaleChecked,
)
from .screens.cases import CasesScreen
from .screens.dialogs import Choice, HelpScreen, conflict_question, quit_question, recovery_question
from .session import Recovery, Session, find_recovery
from .triage_sync import RunReasons, TooBig

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.errors import InputError
    from ..core.schema import Case
    from ..core.staleness import StaleEntry
    from .picker_index import PickerIndex
    from .screens.run_dialog import RunRequest

TRIAGE = "triage"  # the name the Triage screen is installed under
PREVIEW_ABOVE_BYTES = 1 << 20  # above ~5k cases, paint the first rows before the whole file is read


class NotLoaded(RuntimeError):
    """The test set is still loading: check ``app.loaded`` before reaching for the session."""


class RagtriageApp(App[int]):
    """``ragtriage edit``: author and relabel the cases of one test set."""

    CSS_PATH = "app.tcss"
    TITLE = "ragtriage"
    ENABLE_COMMAND_PALETTE = True
    # -narrow: panes stacked (list above, detail below); -huge: the detail pane and the
    # question column grow with the width
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide"), (160, "-huge")]

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True, id="app.save"),
        Binding("ctrl+z", "undo", "Undo", priority=True, show=False, id="app.undo"),
        Binding("ctrl+y", "redo", "Redo", priority=True, show=False, id="app.redo"),
        Binding("q", "request_quit", "Quit", id="app.quit"),
        Binding("ctrl+q", "request_quit", "Quit", show=False, priority=True, id="app.quit_anywhere"),
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding("f1", "help", "Help", show=False, id="app.help_f1"),
    ]

    def __init__(
        self,
        testset_path: str | Path,
        run_path: str | Path | None = None,
        corpus_path: str | Path | None = None,
        *,
        recovery: bool = True,
        use_cache: bool = True,
        mode: str = "edit",
    ) -> None:
        super().__init__()
        self.mode = mode  # "edit" (Cases first) or "triage" (``ragtriage triage``: the run's failures first)
        self.testset_path = Path(testset_path)
        self.run_path = Path(run_path) if run_path else None
        self.corpus_override = Path(corpus_path) if corpus_path else None
        self.recovery_enabled = recovery
        self.use_cache = use_cache
        self._session: Session | None = None
        self.corpus: Corpus | None = None
        self.corpus_error: str | None = None
        self.index: PickerIndex | None = None
        self.index_error: str | None = None
        self.reasons: dict[str, str] = {}
        self.stale_report: list[StaleEntry] | None = None
        self._stale_wanted = False  # a stale check was asked for since the last one started
        self._stale_running = False
        self.stale_fixed_against: Path | None = (
            None  # stale labels accepted against it: corpus: follows on save
        )
        self.load_error: InputError | None = None  # what stopped the app (edit_cmd prints it)
        self.preview: list[Case] | None = None  # the first cases of a big file, shown while it loads
        self.title = f"ragtriage · {self.testset_path.name}"
        self._triage_run: Path | None = None  # the run of the installed Triage screen
        self._run_reasons: RunReasons | None = None  # the reasons of Cases, kept rescored

    # -- state -----------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        """The test set is loaded (``session`` and ``doc`` are available)."""
        return self._session is not None

    @property
    def session(self) -> Session:
        """The editing session; raises :class:`NotLoaded` while the test set loads."""
        if self._session is None:
            raise NotLoaded(f"{self.testset_path.name} is still loading")
        return self._session

    @property
    def doc(self) -> TestSetDocument:
        """The test-set document; raises :class:`NotLoaded` while it loads."""
        return self.session.doc

    @property
    def corpus_path(self) -> Path | None:
        if self.corpus_override is not None:
            return self.corpus_override
        return self._session.doc.corpus_path if self._session is not None else None

    @property
    def stale_ids(self) -> set[str]:
        return {e.case for e in self.stale_report or ()}

    # -- start-up ----------------------------------------------------------------------
    def on_mount(self) -> None:
        self.push_screen(CasesScreen())
        if self.mode == "triage":
            # Cases under it, so that escape leads there; the triage screen calls
            # load_document once the run is shown
            self.open_triage()
        else:
            self.load_document()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_document(self) -> None:
        from ..core.document import TestSetDocument
        from ..core.errors import InputError, Problem, TestSetError

        try:
            big = self.testset_path.stat().st_size > PREVIEW_ABOVE_BYTES
        except OSError:
            big = False
        if big:
            from .data import preview_cases

            preview = preview_cases(self.testset_path)
            if preview:
                self.post_message(PreviewRead(preview))
        was = gc.isenabled()
        gc.disable()  # a bulk load of small objects: the cyclic GC would dominate
        try:
            doc = TestSetDocument.load(self.testset_path, use_cache=self.use_cache)
        except InputError as e:
            self.post_message(LoadFailed(e))
            return
        except OSError as e:
            problem = Problem(str(self.testset_path), None, e.strerror or str(e))
            self.post_message(LoadFailed(TestSetError(problem)))
            return
        finally:
            if was:
                gc.enable()
        reasons: dict[str, str] = {}
        if self.run_path is not None and self.mode != "triage":  # triage reads the whole run itself
            from .data import read_reasons

            try:
                reasons = read_reasons(self.run_path)
            except InputError as e:
                self.post_message(LoadFailed(e))
                return
        gc.freeze()  # keep the loaded tree out of every later collection: no pauses on keys
        self.post_message(DocumentLoaded(doc, reasons))

    @on(PreviewRead)
    def _previewed(self, event: PreviewRead) -> None:
        if self._session is None:
            self.preview = event.cases
            self.announce()

    @on(LoadFailed)
    def _load_failed(self, event: LoadFailed) -> None:
        self.fail(event.error)

    def fail(self, error: InputError) -> None:
        """Stop the app on input that cannot be used; ``edit``/``triage`` print ``error``, exit 2."""
        self.load_error = error
        self.exit(2, return_code=2)

    @on(DocumentLoaded)
    def _document_loaded(self, event: DocumentLoaded) -> None:
        doc, reasons = event.doc, event.reasons
        self._session = Session(doc, recovery=self.recovery_enabled)
        self.preview = None
        if reasons:  # (triage publishes its own, rescored, and may have done so already)
            self.reasons = reasons
        self.announce_document()
        if reasons and not any(cid in doc for cid in reasons) and self.run_path is not None:
            # `edit A.yaml --run B-run.jsonl`: an empty reason column and a triage of cases
            # that do not exist here, with not a word about why
            self.notify(
                f"the run {self.run_path.name} has no case of {doc.path.name}: "
                "was it made on another test set?",
                severity="warning",
                timeout=10,
            )
        from ..core.testset.ondisk import unsaveable

        if why := unsaveable(doc.path):  # a read-only file system: said on opening, not at the first save
            self.notify(f"{doc.path.name} {why}", severity="warning", timeout=15, markup=False)
        recovery = find_recovery(doc.path) if self.recovery_enabled else None
        if recovery is not None and len(recovery):
            self._offer_recovery(recovery)
        if self.run_path is not None and self.mode != "triage":  # (triage rescores its own)
            self._track_reasons(self.run_path)
        if self.corpus_path is not None:
            self.load_corpus()

    def _offer_recovery(self, recovery: Recovery) -> None:

        def answered(value: str | None) -> None:
            if value == "restore":
                applied, problems = self.session.replay(recovery)
                msg = f"restored {applied} edit{'s' * (applied != 1)} (not saved yet: ctrl+s)"
                if problems:
                    msg += f"; {len(problems)} could not be applied: " + "; ".join(problems[:3])
                self.notify(msg, severity="warning" if problems else "information")
                self.announce_document()
            elif value == "discard":
                self.session.discard_recovery()
                self.notify("earlier unsaved edits discarded")
            # None (escape): leave the file for next time

        self.push_screen(recovery_question(len(recovery), recovery.base_changed), answered)

    @work(thread=True, exclusive=True, group="corpus", exit_on_error=False)
    def load_corpus(self) -> None:
        from ..core.corpus import load_corpus
        from ..core.errors import InputError

        path = self.corpus_path
        if path is None:
            return
        try:
            corpus = load_corpus(path)
        except InputError as e:
            self.post_message(CorpusFailed("; ".join(str(p) for p in e.problems[:3])))
            return
        self.post_message(CorpusLoaded(corpus))

    @on(CorpusFailed)
    def _corpus_failed(self, event: CorpusFailed) -> None:
        self.corpus_error = event.message
        self.notify(f"corpus not loaded: {event.message}", severity="error", timeout=8)
        self.announce()

    @on(CorpusLoaded)
    def _corpus_loaded(self, event: CorpusLoaded) -> None:
        self.corpus = event.corpus
        gc.freeze()  # a million chunks must not be walked by every later collection
        self.announce()
        self.check_stale()
        self.build_index()

    def check_stale(self) -> None:
        """Ask for a stale-label check. A burst of edits gives one check at a time, plus
        one more after the last edit (thread workers cannot be stopped midway)."""
        self._stale_wanted = True
        if not self._stale_running:
            self._stale_running = True
            self._stale_worker()

    @work(thread=True, group="stale", exit_on_error=False)
    def _stale_worker(self) -> None:
        from .data import find_stale

        try:
            while self._stale_wanted:
                self._stale_wanted = False
                session, corpus = self._session, self.corpus
                if session is None or corpus is None:
                    return
                generation = session.generation
                report = find_stale(session.doc, corpus)
                self.post_message(StaleChecked(report, session, generation))
        finally:
            self._stale_running = False
            if self._stale_wanted:  # asked for between the last check and here
                self.post_message(StaleCheckAgain())

    @on(StaleCheckAgain)
    def _stale_again(self, event: StaleCheckAgain) -> None:
        self.check_stale()

    @on(StaleChecked)
    def _stale_checked(self, event: StaleChecked) -> None:
        if event.session is not self._session or event.generation != event.session.generation:
            return  # edited meanwhile: a newer check is on its way
        self.stale_report = event.report
        self.announce()

    def set_stale_report(self, report: list[StaleEntry]) -> None:
        """Replace the stale labels shown (a resolved one is dropped at once; the next check follows)."""
        self.stale_report = report
        self.announce()

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def build_index(self) -> None:
        from .data import build_index

        corpus = self.corpus
        if corpus is None:
            return
        language = self._session.doc.settings.language if self._session is not None else None
        try:
            index = build_index(corpus, language)
        except Exception as e:  # the picker says so; the rest of the app keeps working
            self.post_message(IndexFailed(str(e)))
            return
        self.post_message(IndexBuilt(index))

    @on(IndexFailed)
    def _index_failed(self, event: IndexFailed) -> None:
        self.index_error = event.message
        self.announce()

    @on(IndexBuilt)
    def _index_built(self, event: IndexBuilt) -> None:
        self.index = event.index
        gc.freeze()
        self.announce()

    @on(Notice)
    def _notice(self, event: Notice) -> None:
        self.notify(event.text, severity=event.severity)  # type: ignore[arg-type]  # a SeverityLevel str

    # -- announcements ---------------------------------------------------------------------
    def announce(self) -> None:
        """Tell every screen that the corpus, index, stale labels or reasons changed."""
        for screen in self.screen_stack:
            screen.post_message(AppStateChanged())

    def announce_document(
        self, case_ids: Iterable[str] | None = None, focus: str | None = None, *, saved: bool = False
    ) -> None:
        """Tell every screen that the test set changed (``case_ids``: the cases touched)."""
        ids = frozenset(case_ids) if case_ids is not None else None
        for screen in self.screen_stack:
            screen.post_message(DocumentChanged(ids, focus, saved))

    def set_reasons(self, reasons: dict[str, str]) -> None:
        """The run's reasons changed (triage rescored or re-ran cases): every screen shows them."""
        self.reasons = reasons
        self.announce()
        tracker = self._run_reasons
        if tracker is not None and self.run_path is not None and tracker.run_path != self.run_path:
            self._track_reasons(self.run_path)  # a new run from the app: follow that one
        elif self._kept_triage() is not None:
            # Triage's records are the newest (a case re-run there too): the next edit made
            # without Triage on the stack follows on from them
            self._run_reasons = None

    def _track_reasons(self, run_path: Path) -> None:
        """Rescore the run's stored reasons against the test set (a worker), then keep them
        rescored after every edit: Cases says what Triage says."""
        tracker = self._run_reasons = RunReasons(run_path)
        tracker.mark(self.session)
        self._rescore_reasons(tracker, self.session)

    @work(thread=True, exclusive=True, group="reasons", exit_on_error=False)
    def _rescore_reasons(self, tracker: RunReasons, session: Session) -> None:
        from ..core.errors import InputError

        try:
            reasons = tracker.load(session)
        except InputError:
            return  # the stored reasons stay; Triage says what is wrong with the run
        self.post_message(ReasonsRescored(tracker, reasons))

    @on(ReasonsRescored)
    def _reasons_rescored(self, event: ReasonsRescored) -> None:
        if event.tracker is not self._run_reasons:
            return
        self.reasons = event.reasons
        self._update_reasons()  # edits made while it ran
        self.announce()

    def _update_reasons(self) -> None:
        tracker = self._run_reasons
        if tracker is None or tracker.run_path != self.run_path:
            tracker = self._adopt_triage_reasons()
        if tracker is None or tracker.state is None or tracker.run_path != self.run_path:
            return
        try:
            reasons = tracker.update(self.session)
        except TooBig:
            tracker.mark(self.session)
            self._rescore_reasons(tracker, self.session)
            return
        if reasons is not None:
            self.reasons = reasons
            self.announce()

    def _adopt_triage_reasons(self) -> RunReasons | None:
        """``ragtriage triage RUN``: no tracker was started (the Triage screen reads and rescores
        the run itself), so an edit made on Cases while Triage is not on the stack would leave
        the reason column as it was. Follow on from the Triage screen's records, as up to date
        as its last sync with the session: the edits since then are rescored here."""
        from .triage_state import TriageState

        screen = self._kept_triage()
        state = getattr(screen, "state", None)
        sync = getattr(screen, "sync", None)
        if self.run_path is None or state is None or sync is None or not sync.started:
            return None
        if getattr(screen, "running", False):
            return None  # a run in progress: its screen publishes the reasons when done
        tracker = RunReasons(self.run_path)
        tracker.state = TriageState(list(state.records), state.k)  # records are replaced, not changed
        tracker.sync.synced = sync.synced
        self._run_reasons = tracker
        return tracker

    # -- one place where edits happen ------------------------------------------------------
    def edit(self, op: str, *args: Any, **kwargs: Any) -> Any:
        """Apply one document operation through the session and announce it.

        Raises ``TestSetError`` (nothing changed) on a bad value."""
        result = self.session.apply(op, *args, **kwargs)
        touched: set[str] | None = None
        if op in ("update_case", "remove_case", "add_case", "move_case"):
            touched = {a for a in args[:1] if isinstance(a, str)}
            if isinstance(kwargs.get("id"), str):
                touched.add(kwargs["id"])
        self.after_edit(touched or None)
        return result

    def after_edit(self, case_ids: Iterable[str] | None = None, focus: str | None = None) -> None:
        self._update_reasons()
        self.announce_document(case_ids, focus)
        if self.corpus is not None:
            self.check_stale()

    def _commit_screens(self) -> bool:
        """Ask open forms to apply what was typed; False if one has an error."""
        ok = True
        for screen in self.screen_stack:
            if isinstance(screen, AppScreen) and not screen.commit():
                ok = False
        return ok

    # -- navigation: screens never import each other ---------------------------------------
    def open_editor(self, case_id: str | None) -> None:
        """The case editor on ``case_id`` (None: a new case)."""
        from .screens.editor import EditorScreen

        if self.loaded:
            self.push_screen(EditorScreen(case_id))

    def open_picker(self, case_id: str) -> None:
        from .screens.picker import PickerScreen

        self.push_screen(PickerScreen(case_id))

    def open_stale(self) -> None:
        from .screens.stale import StaleScreen

        if not self.loaded:
            return
        if self.corpus_path is None:
            self.notify("no corpus: the test set names none and --corpus was not given", severity="warning")
            return
        self.push_screen(StaleScreen())

    def open_triage(self, start: RunRequest | None = None) -> None:
        """The Triage screen of the loaded run; with ``start``, of a new run started at once.

        One Triage screen is kept (installed) per run, so going back to Cases and
        returning does not read the run again."""
        from .screens.triage import TriageScreen

        if start is not None:
            screen = TriageScreen(None, start=start)
        elif self.run_path is None:
            self.notify("no run yet: ctrl+r runs the test set", severity="warning")
            return
        elif self._kept_triage() is not None:
            self.push_screen(TRIAGE)
            return
        else:
            screen = TriageScreen(self.run_path)
        if self.is_screen_installed(TRIAGE):
            self.uninstall_screen(TRIAGE)
        self.install_screen(screen, TRIAGE)
        self._triage_run = start.out if start is not None else self.run_path
        self.push_screen(TRIAGE)

    def _kept_triage(self) -> AppScreen | None:
        """The installed Triage screen, if it shows the loaded run and loaded it."""
        from .screens.triage import TriageScreen

        if not self.is_screen_installed(TRIAGE) or self._triage_run != self.run_path:
            return None
        screen = self.get_screen(TRIAGE)
        if not isinstance(screen, TriageScreen) or screen.load_error is not None:
            return None
        return screen

    def open_run(self) -> None:
        """Ask for a system, k and a run file; run the test set on the Triage screen."""
        from .screens.run_dialog import RunDialog
        from .triage_state import default_run_path

        if not self.loaded:
            self.notify("still loading the test set")
            return
        doc = self.doc
        folder = self.run_path.parent if self.run_path is not None else doc.path.parent
        system = "builtin"
        if self.run_path is not None:
            from ..core.runfile import read_meta

            try:
                system = read_meta(self.run_path).get("system") or system
            except Exception:  # the dialog's default only; the run itself reports problems
                pass

        def chosen(req: RunRequest | None) -> None:
            if req is not None:
                self.open_triage(start=req)

        self.push_screen(
            RunDialog(system, doc.settings.k, default_run_path(folder, doc.path), len(doc)), chosen
        )

    def open_export(self) -> None:
        """Ask for a format (or a CI report) and a path; write it in a worker, then say where."""
        from .screens.export_dialog import ExportDialog, ExportRequest

        if not self.loaded:
            self.notify("still loading the test set")
            return
        doc = self.doc

        def chosen(req: ExportRequest | None) -> None:
            if req is not None:
                self.notify(f"exporting to {req.path}…", timeout=2)
                self._export(req.kind, req.path)

        self.push_screen(
            ExportDialog(doc.path, [doc.path, self.corpus_path], self.run_path, len(doc)), chosen
        )

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _export(self, kind: str, path: Path) -> None:
        from ..core.errors import InputError
        from .export import export

        try:
            done = export(self.doc, kind, path, run_path=self.run_path, corpus=self.corpus)
        except InputError as e:
            self.post_message(
                Notice("not exported: " + "; ".join(str(p) for p in e.problems[:3]), severity="error")
            )
            return
        except Exception as e:  # a renderer that fails must not take the app down: say so
            self.post_message(Notice(f"not exported: {type(e).__name__}: {e}", severity="error"))
            return
        text = done.message
        if self.session.dirty:
            text += " (with the unsaved changes)"
        if done.notes:
            text += " · note: " + "; ".join(done.notes[:2])
        self.post_message(Notice(text, severity=done.severity))

    def cases_cursor(self) -> str | None:
        """The case under the Cases screen's cursor, if that screen is open."""
        for screen in self.screen_stack:
            if isinstance(screen, CasesScreen):
                return screen.table.current_id
        return None

    # -- actions -----------------------------------------------------------------------
    def action_save(self) -> None:
        apply = getattr(self.screen, "action_apply", None)
        if isinstance(self.screen, ModalScreen) and callable(apply):
            apply()  # ctrl+s in a dialog's form applies it; the next ctrl+s saves the file
            return
        if not self.loaded:
            self.notify("still loading")
            return
        if not self._commit_screens():
            self.notify("fix the fields marked in red first; nothing saved", severity="error")
            return
        self.save(force=False)

    def save(self, force: bool = False) -> bool:
        """Save the test set (labels recorded); True when it was written."""
        from ..core.errors import ConflictError, InputError

        session = self.session
        moved_to = None
        try:
            if self.stale_fixed_against is not None:  # as `stale --fix`: corpus: names the new chunks
                from .data import point_corpus

                with session.doc.batch():  # corpus: and the labels recorded: one undo step
                    moved_to = point_corpus(session.doc, self.stale_fixed_against)
                    recorded = session.save(self.corpus, force=force)
            else:
                recorded = session.save(self.corpus, force=force)
        except ConflictError:
            self._offer_conflict()
            return False
        except InputError as e:
            self.notify(
                "not saved: " + "; ".join(p.message for p in e.problems[:3]), severity="error", timeout=8
            )
            return False
        except OSError as e:
            self.notify(f"not saved: {e}", severity="error", timeout=8)
            return False
        msg = f"saved {session.doc.path.name}"
        if recorded:
            msg += f" · recorded {len(recorded)} label{'s' * (len(recorded) != 1)}"
        if moved_to:
            msg += f" · corpus: now {moved_to} (the chunks the fixed labels point at)"
        self.stale_fixed_against = None
        self.notify(msg)
        self.announce_document(saved=True)
        return True

    def _offer_conflict(self) -> None:
        def answered(value: str | None) -> None:
            if value == "reload":
                self.reload_keeping_edits()
            elif value == "overwrite":
                self.save(force=True)

        self.push_screen(conflict_question(self.testset_path.name), answered)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def reload_keeping_edits(self) -> None:
        from ..core.document import TestSetDocument
        from ..core.errors import InputError

        old = self._session
        try:
            doc = TestSetDocument.load(self.testset_path, use_cache=False)
        except InputError as e:
            self.post_message(
                Notice("reload failed: " + "; ".join(str(p) for p in e.problems[:2]), severity="error")
            )
            return
        self.post_message(Reloaded(doc, list(old.ops) if old else []))

    @on(Reloaded)
    def _reloaded(self, event: Reloaded) -> None:
        session = self._session = Session(event.doc, recovery=self.recovery_enabled)
        applied, problems = session.replay(Recovery(session.recovery_file, event.ops, None, None))
        msg = f"reloaded from disk; re-applied {applied} edit{'s' * (applied != 1)}"
        if problems:
            msg += f"; {len(problems)} could not be applied"
        self.notify(msg, severity="warning" if problems else "information")
        self.after_edit()

    def action_undo(self) -> None:
        if not self.loaded:
            return
        self._commit_screens()
        before = self._case_objects()
        what = self.session.undo()
        if what is not None:
            self.notify(f"undone: {what}" if what else "undone", timeout=2)
            self.after_edit(focus=self._touched(before))
        else:
            self.notify("nothing to undo", timeout=1.5)

    def action_redo(self) -> None:
        if not self.loaded:
            return
        before = self._case_objects()
        what = self.session.redo()
        if what is not None:
            self.notify(f"redone: {what}" if what else "redone", timeout=2)
            self.after_edit(focus=self._touched(before))
        else:
            self.notify("nothing to redo", timeout=1.5)

    def _case_objects(self) -> set[int]:
        return {id(c) for c in self.doc.cases}

    def _touched(self, before: set[int]) -> str | None:
        """The case an undo/redo brought back or changed (the Cases cursor goes there: a deleted
        case restored by ctrl+z was left off-screen, the cursor on its neighbour)."""
        return next((c.id for c in self.doc.cases if id(c) not in before), None)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen))

    def action_request_quit(self) -> None:
        if isinstance(self.screen, Choice):
            return  # a question is open: answer it first
        if not self.loaded or not self._dirty():
            self.exit(0)
            return

        def answered(value: str | None) -> None:
            if value == "save":
                if self.save(force=False):
                    self.exit(0)
            elif value == "discard":
                self.session.discard_recovery()
                self.exit(0)

        self.push_screen(quit_question(), answered)

    async def action_quit(self) -> None:
        """Textual's own Quit (the command palette's) asks about unsaved changes too."""
        self.action_request_quit()

    def _dirty(self) -> bool:
        self._commit_screens()
        return self.session.dirty

    # -- command palette: every action of the current screen, by name ------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        seen: set[str] = set()
        for _key, active in screen.active_bindings.items():
            b = active.binding
            if not b.description or b.system or b.id is None or b.description in seen:
                continue
            seen.add(b.description)
            node = active.node
            yield SystemCommand(
                b.description,
                f"key: {self.get_key_display(b)}" + (f" · {b.tooltip}" if b.tooltip else ""),
                lambda node=node, action=b.action: self.call_later(self.run_action, action, node),
            )
        yield from super().get_system_commands(screen)


def make_app(
    testset_path: str | Path,
    run_path: str | Path | None = None,
    corpus_path: str | Path | None = None,
    **options: Any,
) -> RagtriageApp:
    """The app on one test set; shared by ``ragtriage edit`` and the tests."""
    return RagtriageApp(testset_path, run_path, corpus_path, **options)
