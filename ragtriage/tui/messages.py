"""The messages the app and its screens exchange (small typed dataclasses).

Two kinds:

* **State announcements**, posted by the app to every screen on the stack:
  :class:`DocumentChanged` after every change of the test set (edit, undo, redo,
  load, reload, save), :class:`RunChanged` with each event of the open run
  (:mod:`ragtriage.tui.run_session`), and :class:`AppStateChanged` when anything
  else a screen shows changed (corpus, search index, stale labels). Screens
  handle them in :class:`~ragtriage.tui.base.AppScreen`; nothing calls into a
  screen by name.
* **Worker results**, posted from worker threads (``post_message`` is
  thread-safe) to the app, instead of positional ``call_from_thread`` calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.errors import InputError
    from ..core.schema import Case
    from ..core.search import LexicalIndex
    from .edits import Change
    from .run_session import LoadedRun, RescoreJob, RunEvent
    from .session import SaveJob
    from .stale_state import StaleJob
    from .triage_run import Outcome, RunController


# ------------------------------------------------------------------ state announcements
@dataclass
class DocumentChanged(Message, bubble=False):
    """The test set changed: ``change`` says which cases and labels (None: any may have,
    e.g. a load or a reload); ``saved``: the file on disk is the document now."""

    change: Change
    saved: bool = False

    @property
    def case_ids(self) -> frozenset[str] | None:
        return self.change.cases

    @property
    def focus(self) -> str | None:
        return self.change.focus


@dataclass
class RunChanged(Message, bubble=False):
    """An event of the open run: records recomputed or streamed in, marks, progress, end."""

    event: RunEvent


@dataclass
class AppStateChanged(Message, bubble=False):
    """Something a screen shows besides the test set and the run changed: the corpus,
    the search index, the stale labels or the preview of a big file."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AppStateChanged)


# ------------------------------------------------------------------ worker results (to the app)
@dataclass
class PreviewRead(Message):
    """The first cases of a big test set, read before the whole file."""

    cases: list[Case]


@dataclass
class DocumentLoaded(Message):
    doc: TestSetDocument


@dataclass
class LoadFailed(Message):
    """The test set or the run could not be read: the app exits with status 2."""

    error: InputError


@dataclass
class RunRead(Message):
    """The run file was read (or could not be: ``error``)."""

    path: object
    loaded: LoadedRun | None
    error: InputError | None = None


@dataclass
class Rescored(Message):
    """A full recompute of the run's records finished in a worker."""

    job: RescoreJob


@dataclass
class CorpusLoaded(Message):
    corpus: Corpus


@dataclass
class CorpusFailed(Message):
    message: str


@dataclass
class IndexBuilt(Message):
    index: LexicalIndex


@dataclass
class IndexFailed(Message):
    message: str


@dataclass
class StaleChecked(Message):
    """A stale-label check finished (``job`` knows which labels and which edit it saw)."""

    job: StaleJob


@dataclass
class Saved(Message):
    """A save's worker finished (written, unchanged, or with the error it met)."""

    job: SaveJob


@dataclass
class Reloaded(Message):
    """The test set was read again from disk; ``ops`` are the edits to re-apply."""

    doc: TestSetDocument
    ops: list[dict] = field(default_factory=list)


@dataclass
class SystemAnswered(Message):
    """What ``edit --system SPEC`` retrieved for a case's question (or why it could not)."""

    case_id: str
    question: str
    ranking: list[str]
    error: str | None = None


@dataclass
class Notice(Message):
    """A toast from a worker thread."""

    text: str
    severity: str = "information"


# ------------------------------------------------------------------ a run's progress
@dataclass
class RunWoke(Message):
    """New records of a run are waiting in the run's queue; a burst is one message."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunWoke)


@dataclass
class RunFinished(Message):
    """The run's worker ended: ``outcome`` (summary None when interrupted or failed)."""

    run: RunController
    outcome: Outcome


@dataclass
class RerunDone(Message):
    """One case asked again (``R`` on Triage): its new record, or what went wrong."""

    record: dict | None
    error: str | None = None
