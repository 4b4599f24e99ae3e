"""The ragtriage app: one App, screens in their own modules.

The app owns the shared state every screen reads — the editing
:class:`~ragtriage.tui.session.Session`, the corpus, the lexical index, the run's
reasons and the stale labels — and loads each of them in a worker so that keys
never wait on a file. Screens show state and call :meth:`RagtriageApp.edit`
(one place where the document changes, the recovery file is written and every
screen is told to refresh).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from pathlib import Path

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from .screens.cases import CasesScreen
from .screens.dialogs import Choice, HelpScreen
from .session import Session, find_recovery

PREVIEW_ABOVE_BYTES = 1 << 20  # above ~5k cases, paint the first rows before the whole file is read


class RagtriageApp(App[int]):
    """``ragtriage edit``: author and relabel the cases of one test set."""

    CSS_PATH = "app.tcss"
    TITLE = "ragtriage"
    ENABLE_COMMAND_PALETTE = True
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

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
        testset_path,
        run_path=None,
        corpus_path=None,
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
        self.session: Session | None = None
        self.corpus = None  # ragtriage.core.corpus.Corpus once loaded
        self.corpus_error: str | None = None
        self.index = None  # LexicalIndex once built
        self.index_error: str | None = None
        self.reasons: dict[str, str] = {}
        self.stale_report = None  # list[StaleEntry] once checked
        self._stale_wanted = False  # a stale check was asked for since the last one started
        self._stale_running = False
        self.load_error = None  # InputError that stopped the app (edit_cmd prints it)
        self.preview: list | None = None  # the first cases of a big file, shown while it loads
        self.loaded = False
        self.title = f"ragtriage · {self.testset_path.name}"

    # -- state -----------------------------------------------------------------------
    @property
    def doc(self):
        return self.session.doc if self.session else None

    @property
    def corpus_path(self) -> Path | None:
        if self.corpus_override is not None:
            return self.corpus_override
        return self.doc.corpus_path if self.doc is not None else None

    @property
    def stale_ids(self) -> set[str]:
        return {e.case for e in self.stale_report or ()}

    # -- start-up ----------------------------------------------------------------------
    def on_mount(self) -> None:
        if self.mode == "triage":
            from .screens.triage import TriageScreen

            self.push_screen(TriageScreen(self.run_path))  # it calls load_document once the run is shown
        else:
            self.push_screen(CasesScreen())
            self.load_document()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_document(self) -> None:
        from ..core.document import TestSetDocument
        from ..core.errors import InputError

        try:
            big = self.testset_path.stat().st_size > PREVIEW_ABOVE_BYTES
        except OSError:
            big = False
        if big:
            from .data import preview_cases

            preview = preview_cases(self.testset_path)
            if preview:
                self.call_from_thread(self._previewed, preview)
        was = gc.isenabled()
        gc.disable()  # a bulk load of small objects: the cyclic GC would dominate
        try:
            doc = TestSetDocument.load(self.testset_path, use_cache=self.use_cache)
        except InputError as e:
            self.call_from_thread(self._fail, e)
            return
        except OSError as e:
            from ..core.errors import Problem, TestSetError

            self.call_from_thread(
                self._fail, TestSetError(Problem(str(self.testset_path), None, e.strerror or str(e)))
            )
            return
        finally:
            if was:
                gc.enable()
        reasons = {}
        if self.run_path is not None and self.mode != "triage":  # triage reads the whole run itself
            from .data import read_reasons

            try:
                reasons = read_reasons(self.run_path)
            except InputError as e:
                self.call_from_thread(self._fail, e)
                return
        gc.freeze()  # keep the loaded tree out of every later collection: no pauses on keys
        self.call_from_thread(self._document_loaded, doc, reasons)

    def _previewed(self, cases: list) -> None:
        if self.session is None:
            self.preview = cases
            self.refresh_screens()

    def _fail(self, error) -> None:
        self.load_error = error
        self.exit(2, return_code=2)

    def _document_loaded(self, doc, reasons: dict[str, str]) -> None:
        self.session = Session(doc, recovery=self.recovery_enabled)
        self.preview = None
        self.reasons = reasons
        self.loaded = True
        self.refresh_screens()
        if reasons and not any(cid in doc for cid in reasons):
            # `edit A.yaml --run B-run.jsonl`: an empty reason column and a triage of cases
            # that do not exist here, with not a word about why
            self.notify(
                f"the run {self.run_path.name} has no case of {doc.path.name}: "
                "was it made on another test set?",
                severity="warning",
                timeout=10,
            )
        recovery = find_recovery(doc.path) if self.recovery_enabled else None
        if recovery is not None and len(recovery):
            self._offer_recovery(recovery)
        if self.corpus_path is not None:
            self.load_corpus()

    def _offer_recovery(self, recovery) -> None:
        n = len(recovery)
        note = (
            "\nThe test set changed on disk since then; the edits are re-applied on top of it."
            if recovery.base_changed
            else ""
        )
        question = f"Unsaved edits from an earlier session were found ({n} edit{'s' * (n != 1)}).{note}"

        def answered(value: str | None) -> None:
            if value == "restore":
                applied, problems = self.session.replay(recovery)
                msg = f"restored {applied} edit{'s' * (applied != 1)} (not saved yet: ctrl+s)"
                if problems:
                    msg += f"; {len(problems)} could not be applied: " + "; ".join(problems[:3])
                self.notify(msg, severity="warning" if problems else "information")
                self.refresh_screens()
            elif value == "discard":
                self.session.discard_recovery()
                self.notify("earlier unsaved edits discarded")
            # None (escape): leave the file for next time

        self.push_screen(
            Choice(
                question,
                [("r", "restore", "restore them"), ("d", "discard", "discard them")],
                title="Recover unsaved edits?",
            ),
            answered,
        )

    @work(thread=True, exclusive=True, group="corpus", exit_on_error=False)
    def load_corpus(self) -> None:
        from ..core.corpus import load_corpus
        from ..core.errors import InputError

        path = self.corpus_path
        try:
            corpus = load_corpus(path)
        except InputError as e:
            self.call_from_thread(self._corpus_failed, "; ".join(str(p) for p in e.problems[:3]))
            return
        self.call_from_thread(self._corpus_loaded, corpus)

    def _corpus_failed(self, message: str) -> None:
        self.corpus_error = message
        self.notify(f"corpus not loaded: {message}", severity="error", timeout=8)
        self.refresh_screens()

    def _corpus_loaded(self, corpus) -> None:
        self.corpus = corpus
        gc.freeze()  # a million chunks must not be walked by every later collection
        self.refresh_screens()
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
                if self.session is None or self.corpus is None:
                    return
                session = self.session
                generation = session.generation
                report = find_stale(session.doc, self.corpus, self.corpus_path)
                self.call_from_thread(self._stale_checked, report, session, generation)
        finally:
            self._stale_running = False
            if self._stale_wanted:  # asked for between the last check and here
                try:
                    self.call_from_thread(self.check_stale)
                except Exception:  # the app is closing
                    pass

    def _stale_checked(self, report, session=None, generation=None) -> None:
        if session is not None and (session is not self.session or generation != session.generation):
            return  # edited meanwhile: a newer check is on its way
        self.stale_report = report
        self.refresh_screens()

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def build_index(self) -> None:
        from .data import build_index

        if self.corpus is None:
            return
        try:
            index = build_index(self.corpus, self.doc.settings.language if self.doc else None)
        except Exception as e:  # the picker says so; the rest of the app keeps working
            self.call_from_thread(self._index_failed, str(e))
            return
        self.call_from_thread(self._index_built, index)

    def _index_failed(self, message: str) -> None:
        self.index_error = message
        self.refresh_screens()

    def _index_built(self, index) -> None:
        self.index = index
        gc.freeze()
        self.refresh_screens()

    # -- one place where edits happen ------------------------------------------------------
    def edit(self, op: str, *args, **kwargs):
        """Apply one document operation through the session and refresh every screen.

        Raises ``TestSetError`` (nothing changed) on a bad value."""
        result = self.session.apply(op, *args, **kwargs)
        self.after_edit()
        return result

    def after_edit(self) -> None:
        self.refresh_screens()
        if self.corpus is not None:
            self.check_stale()

    def refresh_screens(self) -> None:
        for screen in self.screen_stack:
            hook = getattr(screen, "on_state_changed", None)
            if hook is not None and getattr(screen, "_ready", False):
                hook()

    def _commit_screens(self) -> bool:
        """Ask open forms to apply what was typed; False if one has an error."""
        ok = True
        for screen in self.screen_stack:
            commit = getattr(screen, "commit", None)
            if commit is not None and not commit():
                ok = False
        return ok

    # -- actions -----------------------------------------------------------------------
    def action_save(self) -> None:
        if self.session is None:
            self.notify("still loading")
            return
        if not self._commit_screens():
            self.notify("fix the fields marked in red first; nothing saved", severity="error")
            return
        self._save(force=False)

    def _save(self, force: bool) -> bool:
        from ..core.errors import ConflictError, InputError

        try:
            recorded = self.session.save(self.corpus, force=force)
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
        msg = f"saved {self.session.doc.path.name}"
        if recorded:
            msg += f" · recorded {len(recorded)} label{'s' * (len(recorded) != 1)}"
        self.notify(msg)
        self.refresh_screens()
        return True

    def _offer_conflict(self) -> None:
        def answered(value: str | None) -> None:
            if value == "reload":
                self.reload_keeping_edits()
            elif value == "overwrite":
                self._save(force=True)

        self.push_screen(
            Choice(
                f"{self.testset_path.name} changed on disk since it was opened; it was not overwritten.",
                [
                    ("r", "reload", "reload it from disk and re-apply my edits"),
                    ("o", "overwrite", "overwrite it with my version"),
                    ("escape", "cancel", "cancel (keep editing, save later)"),
                ],
                title="File changed on disk",
            ),
            answered,
        )

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def reload_keeping_edits(self) -> None:
        from ..core.document import TestSetDocument
        from ..core.errors import InputError

        old = self.session
        try:
            doc = TestSetDocument.load(self.testset_path, use_cache=False)
        except InputError as e:
            self.call_from_thread(
                self.notify, "reload failed: " + "; ".join(str(p) for p in e.problems[:2]), severity="error"
            )
            return
        self.call_from_thread(self._reloaded, doc, list(old.ops) if old else [])

    def _reloaded(self, doc, ops: list[dict]) -> None:
        from .session import Recovery

        self.session = Session(doc, recovery=self.recovery_enabled)
        applied, problems = self.session.replay(Recovery(self.session.recovery_file, ops, None, None))
        msg = f"reloaded from disk; re-applied {applied} edit{'s' * (applied != 1)}"
        if problems:
            msg += f"; {len(problems)} could not be applied"
        self.notify(msg, severity="warning" if problems else "information")
        self.refresh_screens()
        if self.corpus is not None:
            self.check_stale()

    def action_undo(self) -> None:
        if self.session is None:
            return
        self._commit_screens()
        before = self._case_objects()
        if self.session.undo():
            self.notify("undone", timeout=1.5)
            self.after_edit()
            self._show_touched(before)
        else:
            self.notify("nothing to undo", timeout=1.5)

    def action_redo(self) -> None:
        if self.session is None:
            return
        before = self._case_objects()
        if self.session.redo():
            self.notify("redone", timeout=1.5)
            self.after_edit()
            self._show_touched(before)
        else:
            self.notify("nothing to redo", timeout=1.5)

    def _case_objects(self) -> set[int]:
        return {id(c) for c in self.session.doc.cases}

    def _show_touched(self, before: set[int]) -> None:
        """Put the Cases cursor on the case an undo/redo brought back or changed (a deleted
        case restored by ctrl+z was left off-screen, the cursor on its neighbour)."""
        table = getattr(self.screen, "table", None)
        if not isinstance(self.screen, CasesScreen) or table is None:
            return
        touched = next((c.id for c in self.session.doc.cases if id(c) not in before), None)
        if touched is not None and touched != table.current_id:
            table.move_to(touched)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen))

    def action_request_quit(self) -> None:
        if isinstance(self.screen, Choice):
            return  # a question is open: answer it first
        if self.session is None or not self._dirty():
            self.exit(0)
            return

        def answered(value: str | None) -> None:
            if value == "save":
                if self._save(force=False):
                    self.exit(0)
            elif value == "discard":
                self.session.discard_recovery()
                self.exit(0)

        self.push_screen(
            Choice(
                "There are unsaved changes.",
                [
                    ("s", "save", "save and quit"),
                    ("d", "discard", "quit without saving (discard)"),
                    ("escape", "cancel", "cancel, keep editing"),
                ],
                title="Quit?",
            ),
            answered,
        )

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


def make_app(testset_path, run_path=None, corpus_path=None, **options) -> RagtriageApp:
    """The app on one test set; shared by ``ragtriage edit`` and the tests."""
    return RagtriageApp(testset_path, run_path, corpus_path, **options)
