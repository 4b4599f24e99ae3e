"""A run started from the app (no Textual): the worker's side and the screen's side.

:meth:`RunController.run` is called in a worker thread; it runs the test set
through ``core.evaluate`` (via :func:`~ragtriage.tui.triage_state.stream_run`),
puts every finished record on a queue and calls ``wake()`` — at most every
``WAKE_EVERY`` seconds, so a fast local system does not flood the UI — and the
screen takes the records with :meth:`RunController.drain` on its own thread. A
run never waits on the screen and keys never wait on the run.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import InputError
from .triage_state import Sidecar, TriageState, stream_run

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.records import CaseRecord

WAKE_EVERY = 0.05  # seconds between two wake-ups of the screen during a run


@dataclass(frozen=True)
class RunRequest:
    """What the run dialog asks for: a system, k and the run file to write."""

    system: str
    k: int
    out: Path


@dataclass
class Shown:
    """What the Triage screen showed before a run: brought back if the run fails before its first case."""

    state: TriageState | None
    meta: dict
    run_path: Path | None
    sidecar: Sidecar | None
    summary: dict | None


@dataclass
class Outcome:
    summary: dict | None  # None: interrupted or failed
    interrupted: bool
    error: str | None = None  # a failed run: what went wrong, for a person


class RunController:
    """One run of ``doc`` through ``system`` at ``k`` into the run file ``out``."""

    def __init__(
        self,
        doc: TestSetDocument,
        system: str,
        k: int,
        out: Path,
        *,
        corpus: Corpus | None = None,
        generation: int = 0,
        before: Shown | None = None,
    ) -> None:
        self.doc = doc
        self.system = system
        self.k = k
        self.out = Path(out)
        self.corpus = corpus
        self.generation = generation  # the session's generation when the run started
        self.before = before
        self.out_existed = self.out.exists()
        self.total = len(doc)
        self.started = time.monotonic()
        self.cancel = threading.Event()
        self._queue: deque[CaseRecord] = deque()
        self.done = 0

    def run(self, wake: Callable[[], object] = lambda: None) -> Outcome:
        """Run every case (blocking: call it in a worker thread)."""
        last = 0.0

        def on_record(rec: CaseRecord) -> None:
            nonlocal last
            self._queue.append(rec)
            now = time.monotonic()
            if now - last >= WAKE_EVERY:
                last = now
                wake()

        try:
            summary, interrupted = stream_run(
                self.doc, self.system, self.k, self.out, on_record, cancel=self.cancel, corpus=self.corpus
            )
        except InputError as e:
            return Outcome(None, True, "; ".join(p.message for p in e.problems[:2]))
        except Exception as e:  # the user's system or a disk error: keep what finished
            return Outcome(None, True, f"{type(e).__name__}: {e}")
        return Outcome(summary, interrupted)

    def drain(self) -> list[CaseRecord]:
        """The records finished since the last call (thread-safe: deque appends and pops)."""
        batch: list[CaseRecord] = []
        queue = self._queue
        while queue:
            batch.append(queue.popleft())
        self.done += len(batch)
        return batch

    def stop(self) -> None:
        """Ask the run to stop after the cases in flight; it keeps what finished."""
        self.cancel.set()

    def forget_output(self) -> None:
        """Remove a run file this run created and left without a case."""
        if not self.out_existed:
            try:
                self.out.unlink()
            except OSError:
                pass
