"""Saving, the app's second layer: the labels worked out and the file written in a
worker (only recording the labels found comes back to the interface thread), a conflict offered to a person (and the grader's name, asked
once: what a grade or a note written to disk carries)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on, work

from .app_state import AppBase
from .base import AppModal
from .dialogs.common import conflict_question
from .edits import EVERYTHING, Change
from .messages import (
    Notice,
    Reloaded,
    Saved,
)
from .session import Recovery, SaveJob, Session

if TYPE_CHECKING:
    pass


class SavingApp(AppBase):
    """Saving without a key waiting on the disk (:meth:`save`)."""

    # -- saving: a copy written in a worker, the labels it needs recorded here ---------------
    def action_save(self) -> None:
        if isinstance(self.screen, AppModal) and self.screen.FORM:
            self.screen.action_apply()  # ctrl+s in a dialog's form applies it; the next one saves
            return
        if not self.loaded:
            self.notify("still loading")
            return
        if not self._commit_screens():
            self.notify("fix the fields marked in red first; nothing saved", severity="error")
            return
        self.save(force=False)

    def save(self, force: bool = False, then: Callable[[], None] | None = None) -> None:
        """Save the test set (labels recorded) without making a key wait: the labels are
        worked out and the file written in a worker; ``then`` runs once it is written. A
        save asked for while one runs follows it."""
        session = self.session
        if session.saving is not None:
            self._save_again = True
            if then is not None:
                self._after_save = then
            return
        from .data import corpus_value

        point = corpus_value(session.doc, self.stale.fixed_against) if self.stale.fixed_against else None
        self._after_save = then
        self._save_worker(session.begin_save(self.corpus, force=force, point=point))
        self.announce_document(Change(frozenset(), frozenset()))  # "saving…" on the status lines

    @work(thread=True, group="save", exit_on_error=False)
    def _save_worker(self, job: SaveJob) -> None:
        self.post_message(Saved(job.run()))

    @on(Saved)
    def _saved(self, event: Saved) -> None:
        from ..core.errors import ConflictError, InputError

        job, session = event.job, self.session
        if job.planned:  # labels to record here, then the write
            if session.saving is not job:
                return  # the document was read again meanwhile: this save is dropped
            session.record_planned(job)
            if job.recorded:
                self.after_change(Change(frozenset(), frozenset(job.recorded), "labels recorded"))
            self._save_worker(job)
            return
        then, self._after_save = self._after_save, None
        try:
            session.finish_save(job)
        except ConflictError:
            self._offer_conflict(then)
            return
        except InputError as e:
            self.notify(
                "not saved: " + "; ".join(p.message for p in e.problems[:3]), severity="error", timeout=8
            )
            return
        except OSError as e:
            self.notify(f"not saved: {e}", severity="error", timeout=8)
            return
        self.notify(self._saved_text(job))
        self.stale.fixed_against = None
        self.run_session.saved(session.doc)
        self.announce_document(Change(frozenset(), frozenset()), saved=True)
        if self._save_again:
            self._save_again = False
            self.save(then=then)
        elif then is not None:
            then()

    def _saved_text(self, job: SaveJob) -> str:
        name = self.session.doc.path.name
        msg = f"saved {name}" if job.written else f"{name} unchanged on disk"
        if job.recorded:
            msg += f" · recorded {len(job.recorded)} label{'s' * (len(job.recorded) != 1)}"
        if job.pointed:
            msg += f" · corpus: now {job.pointed} (the chunks the fixed labels point at)"
            left = len(self.stale.report or ())
            if left:
                msg += (
                    f" · ⚠ {left} label{'s' * (left != 1)} still stale against it "
                    "(l reviews them; ragtriage validate lists them)"
                )
        if self.session.unsaved:
            msg += " · edits made while saving are not saved yet"
        return msg

    def _offer_conflict(self, then: Callable[[], None] | None) -> None:
        def answered(value: str | None) -> None:
            if value == "reload":
                self.reload_keeping_edits()
            elif value == "overwrite":
                self.save(force=True, then=then)

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
        old = self._session
        owner = old.recovery if old is not None else None  # the window keeps its own file
        session = self._session = Session(event.doc, recovery=self.recovery_enabled, owner=owner)
        if old is not None:
            session.typing.update(old.typing)  # what a form holds unapplied is still held
        applied, problems = session.replay(Recovery(session.recovery_file, event.ops))
        msg = f"reloaded from disk; re-applied {applied} edit{'s' * (applied != 1)}"
        if problems:
            msg += f"; {len(problems)} could not be applied"
        self.notify(msg, severity="warning" if problems else "information")
        self.after_change(EVERYTHING)

    # -- who grades: asked once, kept in the user's settings -----------------------------------
    def with_grader(self, then: Callable[[str], None]) -> None:
        """Call ``then(name)`` with the grader's name: ``$RAGTRIAGE_GRADER`` or the kept
        setting, else asked once (and kept) — every grade and review note carries it."""
        from ..core.judge.grades import default_grader
        from ..core.userconfig import config_path, grader_name, write_config
        from .dialogs.common import GraderDialog

        name = self._grader or grader_name()
        if name:
            then(name)
            return

        def answered(value: str | None) -> None:
            if not value:
                self.notify("not kept: a grade or a note needs your name", severity="warning")
                return
            try:
                where = write_config(grader=value)
                self.notify(f"“{value}” kept in {where} for every grade and note")
            except OSError as e:
                self.notify(f"your name is used for this session only: {e}", severity="warning")
                self._grader = value
            then(value)

        self.push_screen(GraderDialog(default_grader(), str(config_path())), answered)
