"""The ragtriage app: one App, two sessions, screens in their own modules.

The app owns the state every screen reads, each in one Textual-free object:

* the editing :class:`~ragtriage.tui.session.Session` — the test-set document,
  undo/redo, the recovery file;
* the :class:`~ragtriage.tui.run_session.RunSession` — the open run's records,
  kept rescored against the test set, its sidecar, the test set's grades and
  review notes, and a run started from the app;
* the corpus, the picker's search index and the
  :class:`~ragtriage.tui.stale_state.StaleTracker` (the stale labels).

Workers load and compute them, so keys never wait on a file or a system, and
report back with messages (:mod:`ragtriage.tui.messages`). Every change of the
test set goes through :meth:`RagtriageApp.edit` with an edit value
(:mod:`ragtriage.tui.edits`); the session answers with the cases and labels it
touched, and the run, the stale check and every screen (a
:class:`~ragtriage.tui.messages.DocumentChanged` message) look at those only.
Screens are views: they read the two sessions, call the app's methods and move
between each other through the app's ``open_*`` methods, so no screen imports
another.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from .app_save import SavingApp
from .app_state import NotLoaded
from .dialogs.common import Choice, HelpScreen, quit_question
from .messages import (
    Notice,
    RerunDone,
    RunFinished,
    RunWoke,
)
from .screens.cases import CasesScreen

if TYPE_CHECKING:
    from .triage_run import RunController, RunRequest

TRIAGE = "triage"  # the name the Triage screen is installed under (one, kept between visits)
EDITOR = "editor"  # and the case editor's


class RagtriageApp(SavingApp):
    """``ragtriage edit`` / ``ragtriage triage``: author, label and triage one test set.

    The last of three layers: :class:`~ragtriage.tui.app_state.AppBase` (the state, loaded
    and kept), :class:`~ragtriage.tui.app_save.SavingApp` (saving), and this one: the
    screens and moving between them, runs started from the app, help, quit, the palette."""

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

    def on_mount(self) -> None:
        self.catch_terminal_signals()
        self.push_screen(CasesScreen())
        if self._run_file is not None:
            self._read_run(self._run_file)
        if self.mode == "triage":
            self.open_triage()  # Cases under it, so that escape leads there; the document
        else:  # loads once the run is on screen (the two loads do not share the CPU)
            self.load_document()

    def on_unmount(self) -> None:
        self.release_terminal_signals()
        if self._session is not None:  # the window ends: its recovery file is the next one's to offer
            self._session.release_recovery()

    # -- navigation: screens never import each other ---------------------------------------
    def open_editor(self, case_id: str | None, after: str | None = None) -> None:
        """The case editor on ``case_id`` (None: a new case, placed after ``after``)."""
        if self.closing:
            return  # q was pressed: the keys typed after it open nothing
        from .screens.editor import EditorScreen

        if not self.loaded:
            return
        if self.is_screen_installed(EDITOR) and self.get_screen(EDITOR) not in self.screen_stack:
            editor = self.get_screen(EDITOR)
            assert isinstance(editor, EditorScreen)
            editor.open(case_id, after=after)  # the kept one: no widgets built again
            self.push_screen(EDITOR)
            return
        if self.is_screen_installed(EDITOR):
            self.push_screen(EditorScreen(case_id, after=after))  # (a second one, over the first)
            return
        self.install_screen(EditorScreen(case_id, after=after), EDITOR)
        self.push_screen(EDITOR)

    def open_picker(self, case_id: str) -> None:
        if self.closing:
            return  # q was pressed: the keys typed after it open nothing
        from .screens.picker import PickerScreen

        self.push_screen(PickerScreen(case_id))

    def open_stale(self) -> None:
        if self.closing:
            return  # q was pressed: the keys typed after it open nothing
        from .screens.stale import StaleScreen

        if not self.loaded:
            return
        if self.corpus_path is None:
            self.notify("no corpus: the test set names none and --corpus was not given", severity="warning")
            return
        self.push_screen(StaleScreen())

    def open_triage(self) -> None:
        """The Triage screen: a view of the open run (kept installed, so a visit is instant)."""
        if self.closing:
            return  # q was pressed: the keys typed after it open nothing
        from .screens.triage import TriageScreen

        if self.run_path is None:
            self.notify("no run loaded: ctrl+r runs the test set (or open it with --run RUN.jsonl)")
            return
        if not self.is_screen_installed(TRIAGE):
            self.install_screen(TriageScreen(), TRIAGE)
        if self.screen is not self.get_screen(TRIAGE):
            self.push_screen(TRIAGE)

    def open_grading(self) -> None:
        if self.closing:
            return  # q was pressed: the keys typed after it open nothing
        from .screens.grading import GradingScreen

        if not self.run_session.loaded:
            self.notify("no run loaded: grading needs a run's answers")
            return
        self.push_screen(GradingScreen())

    def open_run(self) -> None:
        """Ask for a system, k and a run file; run the test set on the Triage screen."""
        if self.closing:
            return  # q was pressed: the keys typed after it open nothing
        from ..core.runpaths import default_run_path
        from .dialogs.run import RunDialog

        if not self.loaded:
            self.notify("still loading the test set")
            return
        if self.run_session.running:
            self.notify("a run is going on: c on Triage cancels it")
            return
        doc = self.doc
        system = self.run_session.system if self.run_session.loaded else (self.system_spec or "builtin")

        def chosen(req: RunRequest | None) -> None:
            if req is not None:
                self.start_run(req)

        self.push_screen(
            RunDialog(
                system,
                self.run_session.k if self.run_session.loaded else doc.settings.k,
                default_run_path(doc.path),
                len(doc),
            ),
            chosen,
        )

    def open_export(self) -> None:
        """Ask for a format (or a CI report) and a path; write it in a worker, then say where."""
        if self.closing:
            return  # q was pressed: the keys typed after it open nothing
        from .dialogs.export import ExportDialog, ExportRequest

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
        if self.session.unsaved:
            text += " (with the unsaved changes)"
        if done.notes:
            text += " · note: " + "; ".join(done.notes[:2])
        self.post_message(Notice(text, severity=done.severity))

    # -- a run from the app: the run session owns it, a worker runs it ------------------------
    def start_run(self, req: RunRequest) -> None:
        from .triage_run import WAKE_EVERY

        req.out.parent.mkdir(parents=True, exist_ok=True)
        controller = self.run_session.start(req, self.doc, self.corpus, self.session.generation)
        self._run_worker(controller)
        # the run wakes the app at most every WAKE_EVERY s, so the records that finish just
        # after a wake-up would wait for the next record (or the end, behind a slow case)
        self._drain_timer = self.set_interval(WAKE_EVERY, self._drain)
        self.open_triage()

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def _run_worker(self, run: RunController) -> None:
        outcome = run.run(lambda: self.post_message(RunWoke()))
        self.post_message(RunFinished(run, outcome))

    @on(RunWoke)
    def _drain(self) -> None:
        if self.loaded and self.run_session.running:
            self.run_session.take_finished(self.session)

    @on(RunFinished)
    def _run_finished(self, event: RunFinished) -> None:
        if self._drain_timer is not None:
            self._drain_timer.stop()
            self._drain_timer = None
        o = event.outcome
        self.run_session.finished(event.run, o.summary, o.interrupted, o.error, self.session)

    def cancel_run(self) -> bool:
        if self.run_session.controller is None:
            return False
        self.run_session.controller.stop()
        return True

    def rerun_case(self, case_id: str) -> None:
        """Ask the run's system again for one case (``R`` on Triage), in a worker."""
        self.notify(f"{case_id}: asking {self.run_session.system} again…", timeout=2)
        self._rerun_worker(case_id, self.run_session.system, self.run_session.k)

    @work(thread=True, group="rerun", exit_on_error=False)
    def _rerun_worker(self, case_id: str, system: str, k: int) -> None:
        from ..core.errors import InputError
        from ..core.evaluate import evaluate

        try:
            run = evaluate(self.doc, system, k, ids=[case_id], corpus=self.corpus)
        except InputError as e:
            self.post_message(
                RerunDone(None, "re-run failed: " + "; ".join(p.message for p in e.problems[:2]))
            )
            return
        except Exception as e:  # a user's system blew up: say so, keep the app
            self.post_message(RerunDone(None, f"re-run failed: {type(e).__name__}: {e}"))
            return
        if run.cases:
            self.post_message(RerunDone(dict(run.cases[0])))

    @on(RerunDone)
    def _rerun_done(self, event: RerunDone) -> None:
        if event.error is not None:
            self.notify(event.error, severity="error")
        elif event.record is not None:
            self.run_session.rerun_done(event.record)  # type: ignore[arg-type]  # a CaseRecord from the engine

    # -- help, quit ----------------------------------------------------------------------------
    def action_help(self) -> None:
        if self.closing:
            return  # q was pressed: the keys typed after it open nothing
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen))

    def action_request_quit(self) -> None:
        if isinstance(self.screen, Choice):
            return  # a question is open: answer it first
        if not self.loaded or not self._dirty():
            if self.loaded:  # the document is the saved file: no recovery file is left behind
                self.session.discard_recovery()
            self.exit(0)
            return

        def answered(value: str | None) -> None:
            if value == "save":
                self.save(then=lambda: self.exit(0))
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

    def cases_cursor(self) -> str | None:
        """The case under the Cases screen's cursor, if that screen is open."""
        for screen in self.screen_stack:
            if isinstance(screen, CasesScreen):
                return screen.table.current_id
        return None

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
    """The app on one test set; shared by ``ragtriage edit``, ``ragtriage triage`` and the tests."""
    return RagtriageApp(testset_path, run_path, corpus_path, **options)


__all__ = ["NotLoaded", "RagtriageApp", "make_app"]
