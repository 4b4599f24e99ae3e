"""An editing session on one test set: the document, the log of edits, recovery.

Pure logic (no Textual): every change the app makes goes through
:meth:`Session.apply` with an edit value (:mod:`ragtriage.tui.edits`), which
calls the test-set document, appends the edit to the log and rewrites the
recovery file of this window beside the test set (:mod:`.recovery`). Each
step answers with a :class:`~ragtriage.tui.edits.Change` — the cases and labels
it touched — and an undo or a redo answers with the change of the step it takes
back, so nothing downstream ever has to look at every case.

A crash or a killed terminal leaves the recovery file behind; the next
``ragtriage edit`` offers to replay it. Saving removes it. A save runs in two
halves (:meth:`Session.begin_save` on the interface thread, records the labels
and takes a copy; :meth:`SaveJob.run` in a worker, writes it), so no key waits
on the disk and an edit made during the save is kept, unsaved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.testset.savecopy import copy_for_save, saved_from, unsaved, version
from .edits import AddCase, Change, Edit, describe, edit_from_record, expected_of
from .recovery import (
    LOGGED,
    RECOVERY_MAX,
    RECOVERY_VERSION,
    Recovery,
    RecoveryFile,
    file_digest,
    find_recoveries,
    find_recovery,
    recovery_path,
    window_files,
)

__all__ = [
    "LOGGED",
    "RECOVERY_MAX",
    "RECOVERY_VERSION",
    "Recovery",
    "RecoveryFile",
    "SaveJob",
    "Session",
    "find_recoveries",
    "find_recovery",
    "recovery_path",
    "window_files",
]

if TYPE_CHECKING:
    from ..core.document import TestSetDocument
    from ..core.schema import Case


@dataclass
class SaveJob:
    """A save under way: ``run()`` (in a worker) writes the copy through the document's own
    ``save``; the session then takes the result back with :meth:`Session.finish_save`."""

    copy: TestSetDocument
    force: bool
    recorded: list[str]
    pointed: str | None  # the new value of ``corpus:``, if the save moved it
    generation: int
    logged: int  # entries of the edit log this save writes to disk
    written: bool = False
    error: BaseException | None = field(default=None, repr=False)

    def run(self) -> SaveJob:
        """Write the file (blocking: call it in a worker thread). Errors are kept, not raised."""
        try:
            self.written = self.copy.save(force=self.force, record_labels=False)
        except BaseException as e:  # handed back to the interface thread, which reports it
            self.error = e
        return self


class Session:
    """A loaded document plus the log of edits made to it since the last save."""

    def __init__(
        self, doc: TestSetDocument, *, recovery: bool = True, owner: RecoveryFile | None = None
    ) -> None:
        self.doc = doc
        self.ops: list[dict[str, Any]] = []
        self.recovery_enabled = recovery
        # this window's own recovery file (a reload keeps the window's: ``owner``)
        self.recovery = owner if owner is not None else RecoveryFile(doc.path)
        # what an open form holds and has not applied yet, by form (logged as it is typed)
        self.typing: dict[str, dict[str, Any]] = {}
        self._base = file_digest(Path(doc.path))
        self.generation = 0  # bumped on every change; views compare it to refresh
        self._done: list[Change] = []  # the change of each undo step, newest last
        self._undone: list[Change] = []
        # A save records labels as an undo step of its own; the user never made it, so
        # the next undo takes it together with the change before it (one ctrl+z, one change).
        self._labels_step: Change | None = None
        self.saving: SaveJob | None = None
        self._replaying = False  # a recovery being replayed: its edits are written once, at the end

    # -- edits -------------------------------------------------------------------------
    def apply(self, edit: Edit) -> Change:
        """Apply one edit, log it and write the recovery file; returns what it changed.

        Raises whatever the document raises (``TestSetError`` on a bad value); nothing
        is logged then. An edit that changes nothing is not a step (``Change.edit`` None)."""
        doc = self.doc
        ids = edit.cases()
        before = self._cases(ids)
        was = version(doc)
        edit.apply(doc)
        if version(doc) == was:
            return Change(frozenset(), frozenset(), describe(edit, before, before))
        after = self._cases(ids)
        labels = expected_of(before.values()) | expected_of(after.values()) | edit.labels()
        focus = next(iter(after)) if isinstance(edit, AddCase) else None
        change = Change(frozenset(ids), frozenset(labels), describe(edit, before, after), focus, edit)
        self._labels_step = None
        self._done.append(change)
        self._undone.clear()
        self._log(edit.record())
        return change

    def _cases(self, ids: frozenset[str]) -> dict[str, Case]:
        doc = self.doc
        return {cid: doc.case(cid) for cid in ids if cid in doc}

    def undo(self) -> Change | None:
        """Undo the last change (with the labels a save recorded for it); returns the change
        it took back (``what`` in words), or None when there was nothing to undo."""
        doc = self.doc
        extra = self._labels_step
        if extra is not None:
            self._labels_step = None
            if doc.undo():
                self._log({"op": "undo"})
            else:
                extra = None
        if not doc.undo():
            return extra
        self._log({"op": "undo"})
        change = self._done.pop() if self._done else Change(None, None)
        self._undone.append(change)
        return self._landed(change | extra if extra is not None else change)

    def redo(self) -> Change | None:
        """Redo the last undone change; returns it, or None."""
        self._labels_step = None
        if not self.doc.redo():
            return None
        self._log({"op": "redo"})
        change = self._undone.pop() if self._undone else Change(None, None)
        self._done.append(change)
        return self._landed(change)

    def _landed(self, change: Change) -> Change:
        """The change of an undo or redo, with the case it brought back to show."""
        ids = change.cases or frozenset()
        focus = next((cid for cid in sorted(ids) if cid in self.doc), None)
        return Change(change.cases, change.labels, change.what, focus, change.edit)

    @property
    def dirty(self) -> bool:
        """Unsaved edits, exactly (joins the whole text once per edit: ask it before a quit,
        not after every key)."""
        return bool(self.doc.dirty)

    @property
    def unsaved(self) -> bool:
        """Edits since the last load or save, without joining the text (what a status line
        shows; also True for edits that cancelled out)."""
        return unsaved(self.doc)

    # -- saving ------------------------------------------------------------------------
    def begin_save(self, corpus: Any = None, *, force: bool = False, point: str | None = None) -> SaveJob:
        """The interface thread's half of a save: record labels for newly expected chunks
        (and, with ``point``, set ``corpus:`` to it) as one undo step, then copy the document
        for the worker. Raises ``TestSetError`` when a label cannot be recorded (nothing is
        written then)."""
        doc = self.doc
        was = version(doc)
        if point is not None:
            with doc.batch():  # corpus: and the labels recorded: one undo step
                doc.update_settings(corpus=point)
                recorded = list(doc.record_labels(corpus) or [])
        else:
            recorded = list(doc.record_labels(corpus) or [])
        if version(doc) != was:
            self._labels_step = Change(frozenset(), frozenset(recorded), "labels recorded on save")
            self.generation += 1  # a check that read the labels before they were recorded is redone
        job = SaveJob(copy_for_save(doc), force, recorded, point, self.generation, len(self.ops))
        self.saving = job
        return job

    def finish_save(self, job: SaveJob) -> None:
        """The worker wrote (or failed): take its result back. Re-raises the worker's error
        (``ConflictError``, ``InputError``, ``OSError``) for the caller to report."""
        if self.saving is job:
            self.saving = None
        if job.error is not None:
            raise job.error
        saved_from(self.doc, job.copy)
        # the edits logged before the save are on disk now; those made during it stay logged
        del self.ops[: job.logged]
        self._base = file_digest(Path(self.doc.path))
        if (self.ops or self.typing) and self.recovery_enabled:
            self._write_recovery()
        else:
            self.discard_recovery()
        self.generation += 1

    def save(self, corpus: Any = None, force: bool = False) -> list[str]:
        """Save now, on this thread (scripts and tests); returns the chunk ids recorded."""
        job = self.begin_save(corpus, force=force)
        self.finish_save(job.run())
        return job.recorded

    # -- recovery ----------------------------------------------------------------------
    @property
    def recovery_file(self) -> Path:
        """This window's recovery file (written at the first edit, locked while it lives)."""
        return self.recovery.path

    def replay(self, recovery: Recovery) -> tuple[int, list[str]]:
        """Re-apply the edits of ``recovery``; returns (applied, problems). Text that was
        being typed comes back as an edit of its fields (field by field when the whole
        form was not valid: the valid fields are kept)."""
        applied, problems = 0, []
        self._replaying = True  # the file is written once at the end, not once an edit
        try:
            for op in recovery.ops:
                name = op["op"]
                try:
                    if name == "undo":
                        self.undo()
                    elif name == "redo":
                        self.redo()
                    else:
                        self.apply(edit_from_record(op))
                        applied += 1
                except Exception as e:  # a stale recovery: keep going, report the rest
                    if op.get("typing") and name == "update_case" and self._replay_fields(op):
                        applied += 1
                        continue
                    problems.append(f"{name} {op.get('args', [''])[:1]}: {e}")
        finally:
            self._replaying = False
            if self.recovery_enabled and self.ops:
                self._write_recovery()
        return applied, problems

    def _replay_fields(self, op: dict[str, Any]) -> bool:
        kwargs = op.get("kwargs")
        ok = False
        for key, value in (kwargs if isinstance(kwargs, dict) else {}).items():
            try:
                self.apply(edit_from_record({**op, "kwargs": {key: value}}))
                ok = True
            except Exception:  # this field's text is not a valid value: the others still count
                continue
        return ok

    def set_typing(self, form: str, record: dict[str, Any] | None, *, write: bool = True) -> None:
        """What ``form`` holds and has not applied (an edit's record), or None once applied
        or dropped; written to the recovery file at once unless ``write`` is False."""
        if record is None:
            if self.typing.pop(form, None) is None:
                return
        elif self.typing.get(form) == record:
            return
        else:
            self.typing[form] = record
        if write and self.recovery_enabled:
            self._write_recovery()

    def discard_recovery(self) -> None:
        """Remove this window's recovery file (the document is the saved file, or the
        person chose to drop the edits)."""
        self.typing.clear()
        self.recovery.discard()

    def release_recovery(self) -> None:
        """The window ends: let go of the lock, keeping the file for the next window."""
        self.recovery.release()

    def _log(self, entry: dict[str, Any]) -> None:
        self.ops.append(entry)
        self.generation += 1
        if self.recovery_enabled and not self._replaying:
            self._write_recovery()

    def _write_recovery(self) -> None:
        if not unsaved(self.doc) and not self.typing:
            # an edit and its undo: the document is the saved file again, nothing to recover
            # (a file left here would be offered on every open and restore nothing)
            self.recovery.discard()
            return
        self.recovery.write(
            {
                "version": RECOVERY_VERSION,
                "testset": Path(self.doc.path).name,
                "base": self._base,
                "ops": self.ops,
                "typing": list(self.typing.values()),
            }
        )
