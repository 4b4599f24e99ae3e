"""The messages the app and its screens exchange.

Two kinds:

* **State announcements**, posted by the app to every screen on the stack:
  :class:`DocumentChanged` after every change of the test set (edit, undo, redo,
  load, reload, save) and :class:`AppStateChanged` when anything else a screen
  shows changed (corpus, search index, stale labels, the run's reasons). Screens
  handle them with ``@on``; nothing calls into a screen by name.
* **Worker results**, posted from worker threads (``post_message`` is
  thread-safe) to the app or to the screen that started the work, instead of
  positional ``call_from_thread`` calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.errors import InputError
    from ..core.schema import Case
    from ..core.staleness import StaleEntry
    from .session import Session


# ------------------------------------------------------------------ state announcements
class DocumentChanged(Message, bubble=False):
    """The test set changed.

    ``case_ids``: the cases an edit touched (None: any may have changed, e.g. a
    load, an undo or a reload). ``focus``: a case the Cases screen should put its
    cursor on (the case an undo brought back)."""

    def __init__(
        self, case_ids: frozenset[str] | None = None, focus: str | None = None, saved: bool = False
    ) -> None:
        super().__init__()
        self.case_ids = case_ids
        self.focus = focus
        self.saved = saved  # the change is a save: the file on disk is the document now


class AppStateChanged(Message, bubble=False):
    """Something a screen shows besides the test set changed: the corpus, the search
    index, the stale labels, the run's reasons or the preview of a big file."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AppStateChanged)


# ------------------------------------------------------------------ worker results (to the app)
class PreviewRead(Message):
    """The first cases of a big test set, read before the whole file."""

    def __init__(self, cases: list[Case]) -> None:
        super().__init__()
        self.cases = cases


class DocumentLoaded(Message):
    def __init__(self, doc: TestSetDocument, reasons: dict[str, str]) -> None:
        super().__init__()
        self.doc = doc
        self.reasons = reasons


class LoadFailed(Message):
    """The test set or the run could not be read: the app exits with status 2."""

    def __init__(self, error: InputError) -> None:
        super().__init__()
        self.error = error


class CorpusLoaded(Message):
    def __init__(self, corpus: Corpus) -> None:
        super().__init__()
        self.corpus = corpus


class CorpusFailed(Message):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message


class IndexBuilt(Message):
    def __init__(self, index: Any) -> None:
        super().__init__()
        self.index = index


class IndexFailed(Message):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message


class StaleChecked(Message):
    """A stale-label check of ``session`` at ``generation`` finished."""

    def __init__(self, report: list[StaleEntry], session: Session, generation: int) -> None:
        super().__init__()
        self.report = report
        self.session = session
        self.generation = generation


class StaleCheckAgain(Message):
    """An edit arrived while the last check ran: check once more."""


class Reloaded(Message):
    """The test set was read again from disk; ``ops`` are the edits to re-apply."""

    def __init__(self, doc: TestSetDocument, ops: list[dict]) -> None:
        super().__init__()
        self.doc = doc
        self.ops = ops


class ReasonsRescored(Message):
    """The run's reasons, rescored against the test set (``tracker``: the RunReasons it came from)."""

    def __init__(self, tracker: object, reasons: dict[str, str]) -> None:
        super().__init__()
        self.tracker = tracker
        self.reasons = reasons


class Notice(Message):
    """A toast from a worker thread."""

    def __init__(self, text: str, severity: str = "information") -> None:
        super().__init__()
        self.text = text
        self.severity = severity


# ------------------------------------------------------------------ a run's progress (to a screen)
class RunProgress(Message):
    """New records of a run are waiting in the run's queue; a burst is one message."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunProgress)


class RunFinished(Message):
    """The run ended: ``summary`` (None when interrupted or failed), ``error`` when it failed."""

    def __init__(self, summary: dict | None, interrupted: bool, error: str | None, run: object) -> None:
        super().__init__()
        self.summary = summary
        self.interrupted = interrupted
        self.error = error
        self.run = run  # the run controller it reports on
