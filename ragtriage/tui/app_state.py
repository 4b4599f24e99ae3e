"""The state of the app and how it is loaded and kept (the first of the app's three layers).

:class:`AppBase` owns what every screen reads, each in one Textual-free object: the
editing :class:`~ragtriage.tui.session.Session`, the open run's
:class:`~ragtriage.tui.run_session.RunSession`, the corpus, the search index and the
:class:`~ragtriage.tui.stale_state.StaleTracker`. It loads them in workers, applies
every edit (:meth:`AppBase.edit`) and tells every screen what changed. Saving is the
next layer (:mod:`ragtriage.tui.app_save`), navigation and runs the last
(:mod:`ragtriage.tui.app`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App

from .base import AppScreen, ControlsShown
from .dialogs.common import recovery_question
from .edits import EVERYTHING, Change, Edit
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
    Rescored,
    RunChanged,
    RunRead,
    StaleChecked,
    SystemAnswered,
)
from .run_session import RunEnded, RunEvent, RunLoadFailed, RunNotice, RunSession
from .session import Recovery, Session, find_recoveries
from .shown import shown, shown_line
from .stale_state import StaleJob, StaleTracker

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import RenderableType
    from textual.filter import LineFilter
    from textual.notifications import SeverityLevel
    from textual.timer import Timer

    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.errors import InputError
    from ..core.schema import Case
    from ..core.search import LexicalIndex
    from .run_session import LoadedRun, Prefetch, RescoreJob

PREVIEW_ABOVE_BYTES = 1 << 20  # above ~5k cases, paint the first rows before the whole file is read


class NotLoaded(RuntimeError):
    """The test set is still loading: check ``app.loaded`` before reaching for the session."""


class AppBase(App[int]):
    """The app's state: loaded in workers, changed only through :meth:`edit`."""

    def __init__(
        self,
        testset_path: str | Path,
        run_path: str | Path | None = None,
        corpus_path: str | Path | None = None,
        *,
        recovery: bool = True,
        use_cache: bool = True,
        mode: str = "edit",
        system: str | None = None,
        prefetch: Prefetch | None = None,
    ) -> None:
        super().__init__()
        self.mode = mode  # "edit" (Cases first) or "triage" (``ragtriage triage``: the run's failures first)
        self.testset_path = Path(testset_path)
        self.corpus_override = Path(corpus_path) if corpus_path else None
        self.system_spec = system  # ``edit --system SPEC``: the picker also shows what it retrieves
        self.recovery_enabled = recovery
        self.use_cache = use_cache
        self._session: Session | None = None
        self.run_session = RunSession(self.testset_path, emit=self._run_event)
        self._run_file = Path(run_path) if run_path else None  # asked for; run.path once read
        self._prefetch = prefetch
        self.corpus: Corpus | None = None
        self.corpus_error: str | None = None
        self.index: LexicalIndex | None = None
        self.index_error: str | None = None
        self.stale = StaleTracker()
        self.load_error: InputError | None = None  # what stopped the app (edit_cmd prints it)
        self.preview: list[Case] | None = None  # the first cases of a big file, shown while it loads
        self.title = f"ragtriage · {shown_line(self.testset_path.name)}"
        self._controls_shown = ControlsShown()
        self._after_save: Callable[[], None] | None = None
        self._save_again = False
        self._drain_timer: Timer | None = None  # takes a run's finished records while it runs
        self._grader: str | None = None  # the grader's name when the settings cannot be written
        self._system_answers: dict[str, SystemAnswered] = {}  # --system's ranking per case
        self._system_asked: set[tuple[str, str]] = set()
        self.closing = False  # exit() was called: queued keys change nothing any more

    # -- what reaches the terminal: text, never markup or escape sequences --------------
    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast names data (case ids, file names, errors): always shown as text,
        its control characters visible (``markup`` is ignored: no toast of the app uses it)."""
        super().notify(shown(message), title=shown(title), severity=severity, timeout=timeout, markup=False)

    def get_line_filters(self) -> Sequence[LineFilter]:
        return [self._controls_shown, *super().get_line_filters()]

    # -- SIGTERM, SIGHUP: nothing typed is lost, the terminal is given back -------------
    TERMINAL_SIGNALS = ("SIGTERM", "SIGHUP")

    def catch_terminal_signals(self) -> None:
        """On SIGTERM or a closed terminal (SIGHUP), :meth:`on_terminal_signal` runs on the
        app's loop instead of the process dying with the terminal in the app's modes."""
        import asyncio
        import signal

        loop = asyncio.get_running_loop()
        for name in self.TERMINAL_SIGNALS:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                loop.add_signal_handler(sig, self.on_terminal_signal, int(sig))
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, not POSIX
                return

    def release_terminal_signals(self) -> None:
        import asyncio
        import signal

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for name in self.TERMINAL_SIGNALS:
            sig = getattr(signal, name, None)
            if sig is not None:
                try:
                    loop.remove_signal_handler(sig)
                except (NotImplementedError, RuntimeError, ValueError):
                    return

    def on_terminal_signal(self, signum: int) -> None:
        """Apply what the open forms hold (a valid field is an edit: it reaches the recovery
        file at once), then leave through the app's own exit, which stops the driver: the
        alternate screen and mouse reporting are switched off. Exit code 128 + signal."""
        if self.loaded and not self.closing:
            self._commit_screens()  # a form with an error logs what it holds instead
        self.closing = True
        self.exit(128 + signum, return_code=128 + signum)

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
    def run_path(self) -> Path | None:
        """The run shown (read, or started from the app), or the one asked for on the command line."""
        return self.run_session.path or self._run_file

    @property
    def corpus_path(self) -> Path | None:
        if self.corpus_override is not None:
            return self.corpus_override
        return self._session.doc.corpus_path if self._session is not None else None

    # -- start-up: every file read in a worker ------------------------------------------
    @work(thread=True, exclusive=True, group="run-load", exit_on_error=False)
    def _read_run(self, path: Path) -> None:
        from ..core.errors import InputError

        try:
            loaded = RunSession.read(path, self._prefetch)
        except InputError as e:
            self.post_message(RunRead(path, None, e))
            return
        self.post_message(RunRead(path, loaded))

    @on(RunRead)
    def _run_read(self, event: RunRead) -> None:
        self._prefetch = None
        if event.loaded is None:
            assert event.error is not None
            if self.mode == "triage":
                self.fail(event.error)
            else:
                self.run_session.failed(event.error)
            return
        self.run_session.opened(Path(str(event.path)), event.loaded)
        if self.mode == "triage" and not self.loaded:
            self.load_document()
        else:
            self._catch_up_run()
            self._warn_other_testset(event.loaded)

    def _warn_other_testset(self, loaded: LoadedRun) -> None:
        if not self.loaded or not len(loaded.state):
            return
        if not any(r["id"] in self.doc for r in loaded.state.records):
            # `edit A.yaml --run B-run.jsonl`: an empty reason column and a triage of cases
            # that do not exist here, with not a word about why
            name = self.run_session.path.name if self.run_session.path else "the run"
            self.notify(
                f"the run {name} has no case of {self.doc.path.name}: was it made on another test set?",
                severity="warning",
                timeout=10,
            )

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
        gc.freeze()  # keep the loaded tree out of every later collection: no pauses on keys
        self.post_message(DocumentLoaded(doc))

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
        doc = event.doc
        self._session = Session(doc, recovery=self.recovery_enabled)
        self.preview = None
        self.announce_document(EVERYTHING)
        if self.run_session.loaded:
            self._catch_up_run()
            if self.run_session.state is not None:
                self._warn_other_testset_state()
        from ..core.testset.ondisk import unsaveable

        if why := unsaveable(doc.path):  # a read-only file system: said on opening, not at the first save
            self.notify(f"{doc.path.name} {why}", severity="warning", timeout=15, markup=False)
        found = find_recoveries(doc.path) if self.recovery_enabled else []
        for recovery in found:
            if not recovery.described():  # edits all undone: it would restore nothing
                recovery.discard()
        self._offer_recoveries([r for r in found if r.described()])
        if self.corpus_path is not None:
            self.load_corpus()

    def _warn_other_testset_state(self) -> None:
        state = self.run_session.state
        if state is not None and len(state) and not any(r["id"] in self.doc for r in state.records):
            name = self.run_session.path.name if self.run_session.path else "the run"
            self.notify(
                f"the run {name} has no case of {self.doc.path.name}: was it made on another test set?",
                severity="warning",
                timeout=10,
            )

    def _offer_recoveries(self, offered: list[Recovery], shown: int = 0) -> None:
        """Ask about each recovery file a window that is gone left (newest first, one
        question each). Each stays locked by this window until answered: restored (its
        edits logged to this window's own file first, then it is removed), discarded, or
        left for next time (escape)."""
        if not offered:
            return
        recovery, rest = offered[0], offered[1:]
        total = shown + len(offered)

        def answered(value: str | None) -> None:
            if value == "restore":
                applied, problems = self.session.replay(recovery)
                recovery.discard()  # its edits are in this window's file now
                msg = f"restored {applied} edit{'s' * (applied != 1)} (not saved yet: ctrl+s)"
                if problems:
                    msg += f"; {len(problems)} could not be applied: " + "; ".join(problems[:3])
                self.notify(msg, severity="warning" if problems else "information")
                self.after_change(EVERYTHING)
            elif value == "discard":
                recovery.discard()
                self.notify("earlier unsaved edits discarded")
            else:  # escape: leave the file for next time
                recovery.release()
            self._offer_recoveries(rest, shown + 1)

        question = recovery_question(
            len(recovery),
            recovery.base_changed,
            recovery.described(),
            source=recovery.source(),
            which=(shown + 1, total),
        )
        self.push_screen(question, answered)

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
        self.stale.everything()
        self.check_stale()
        self.build_index()

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

    # -- edit --system SPEC: what the user's system retrieves, for the picker -------------------
    def system_ranking(self, case_id: str) -> SystemAnswered | None:
        """What ``--system`` retrieved for the case's question as it is now (asked in a worker
        the first time; None until it answers, and when there is no ``--system``)."""
        spec = self.system_spec
        if not spec or spec == "builtin" or not self.loaded or case_id not in self.doc:
            return None  # builtin: the picker's own search is what it retrieves
        question = self.doc.case(case_id).question
        got = self._system_answers.get(case_id)
        if got is not None and got.question == question:
            return got
        if (case_id, question) not in self._system_asked:
            self._system_asked.add((case_id, question))
            self._ask_system(case_id, question, spec)
        return None

    @work(thread=True, group="system", exit_on_error=False)
    def _ask_system(self, case_id: str, question: str, spec: str) -> None:
        from ..core.errors import InputError
        from ..core.evaluate import evaluate

        try:
            run = evaluate(self.doc, spec, max(10, self.doc.settings.k), ids=[case_id], corpus=self.corpus)
            ranking = list(run.cases[0].get("ranking") or []) if run.cases else []
            error = str(run.cases[0].get("error") or "") if run.cases else "no answer"
        except InputError as e:
            ranking, error = [], "; ".join(p.message for p in e.problems[:2])
        except Exception as e:  # the user's system blew up: say so in the picker
            ranking, error = [], f"{type(e).__name__}: {e}"
        self.post_message(SystemAnswered(case_id, question, ranking, error or None))

    @on(SystemAnswered)
    def _system_answered(self, event: SystemAnswered) -> None:
        self._system_answers[event.case_id] = event
        self.announce()

    # -- stale labels: the labels an edit touched, checked in a worker ----------------------
    def check_stale(self, everything: bool = False) -> None:
        """Check the labels waiting to be checked (all of them with ``everything``)."""
        if everything:
            self.stale.everything()
        job = self.stale.next_job(self._session, self.corpus)
        if job is not None:
            self._stale_worker(job)

    @work(thread=True, group="stale", exit_on_error=False)
    def _stale_worker(self, job: StaleJob) -> None:
        self.post_message(StaleChecked(job.run()))

    @on(StaleChecked)
    def _stale_checked(self, event: StaleChecked) -> None:
        if self.stale.done(event.job, self._session):
            self.announce()
        elif event.job.error is not None:
            self.notify(f"stale labels not checked: {event.job.error}", severity="error")
        self.check_stale()  # what was touched while it ran

    # -- announcements ---------------------------------------------------------------------
    def announce(self) -> None:
        """Tell every screen that the corpus, index, stale labels or preview changed."""
        for screen in self.screen_stack:
            screen.post_message(AppStateChanged())

    def announce_document(self, change: Change, *, saved: bool = False) -> None:
        """Tell every screen that the test set changed (``change``: the cases touched)."""
        for screen in self.screen_stack:
            screen.post_message(DocumentChanged(change, saved))

    def _run_event(self, event: RunEvent) -> None:
        """The run session's events: to every screen, and a toast for those that say something."""
        if isinstance(event, (RunNotice, RunEnded)):
            self.notify(
                event.text, severity=event.severity, timeout=4 if event.severity == "information" else 8
            )
        elif isinstance(event, RunLoadFailed):
            problems = event.error.problems[:2]
            self.notify("run not loaded: " + "; ".join(str(p) for p in problems), severity="error")
        for screen in self.screen_stack:  # (a view off the stack catches up when shown again)
            screen.post_message(RunChanged(event))

    def exit(
        self, result: int | None = None, return_code: int = 0, message: RenderableType | None = None
    ) -> None:
        """Quit. Keys typed after ``q`` may still be in the queue: from now on they open no
        screen and edit nothing (a screen built while the app tears down failed)."""
        self.closing = True
        super().exit(result, return_code, message)

    # -- one place where edits happen ------------------------------------------------------
    def edit(self, edit: Edit) -> Change:
        """Apply one edit through the session and announce what it touched.

        Raises ``TestSetError`` (nothing changed) on a bad value."""
        if self.closing:
            return Change(frozenset(), frozenset(), "the app is closing: not applied")
        change = self.session.apply(edit)
        if change.edit is not None:
            self.after_change(change)
        return change

    def after_change(self, change: Change) -> None:
        """The test set changed (an edit, an undo, a reload): the run, the stale labels and
        every screen look at what ``change`` touched."""
        self._catch_up_run(change)
        self.warn_recovery()
        self.stale.touched(change)
        self.announce_document(change)
        # after the frame that shows the edit: the check's worker must not hold the GIL while
        # that frame is drawn (it is the key -> frame time a person waits on)
        self.call_after_refresh(self.check_stale)

    def warn_recovery(self) -> None:
        """Say once when edits stop reaching this window's recovery file (disk full, a
        read-only folder): a crash would then lose them, so the person saves more often."""
        why = self.session.recovery.take_warning() if self.loaded else None
        if why is not None:
            self.notify(
                f"unsaved edits are not being kept for recovery: {why}; save with ctrl+s",
                severity="warning",
                timeout=15,
                markup=False,
            )

    def _catch_up_run(self, change: Change | None = None) -> None:
        if not self.loaded or not self.run_session.loaded:
            return
        session = self.session
        job = (
            self.run_session.changed(change, session)
            if change is not None
            else self.run_session.catch_up(session)
        )
        if job is not None:
            self._rescore_worker(job)

    @work(thread=True, exclusive=True, group="rescore", exit_on_error=False)
    def _rescore_worker(self, job: RescoreJob) -> None:
        self.post_message(Rescored(job.run()))

    @on(Rescored)
    def _rescored(self, event: Rescored) -> None:
        if self.loaded:
            job = self.run_session.rescored(event.job, self.session)
            if job is not None:
                self._rescore_worker(job)

    def _commit_screens(self) -> bool:
        """Ask open forms to apply what was typed; False if one has an error."""
        ok = True
        for screen in self.screen_stack:
            if isinstance(screen, AppScreen) and not screen.commit():
                ok = False
        return ok

    # -- undo / redo: the change of the step taken back ------------------------------------
    def action_undo(self) -> None:
        if not self.loaded:
            return
        self._commit_screens()
        change = self.session.undo()
        self._stepped(change, "undone", "nothing to undo")

    def action_redo(self) -> None:
        if not self.loaded:
            return
        change = self.session.redo()
        self._stepped(change, "redone", "nothing to redo")

    def _stepped(self, change: Change | None, done: str, nothing: str) -> None:
        if change is None:
            self.notify(nothing, timeout=1.5)
            return
        self.notify(f"{done}: {change.what}" if change.what else done, timeout=2)
        self.after_change(change)
