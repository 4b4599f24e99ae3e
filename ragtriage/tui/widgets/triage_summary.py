"""The Triage screen's summary: every rate of the run with its 95 % interval (as
``ragtriage run`` prints them), the judge against the grades, hit / supported /
correct against k, and the slices by tag and by topic.

:func:`compute` (no Textual) derives the numbers from the records, and
:func:`~ragtriage.core.summary_panel.summary_panel` the intervals and slices;
:class:`TriageSummary` runs both in a worker once the changes settle, one pass at a
time — the last request wins, an overtaken pass is dropped — and shows the result as
text (a tag or topic is never read as markup).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.message import Message
from textual.widgets import Static

from ..triage_state import TriageState, ranking_depth, retrieval_sweep

if TYPE_CHECKING:
    from ...core.corpus import Corpus
    from ...core.document import TestSetDocument
    from ...core.judge.grades import Grade
    from ...core.schema import Case
    from ...core.summary_panel import SummaryPanel
    from ..grading import GradeBook

SWEEP_MAX_K = 10
ANSWER_SWEEP_LIMIT = 500  # cases: above this the chart shows retrieval only (answers need a local re-run)

AnswerSweep = Callable[[int], "dict[int, tuple[float | None, float | None]] | None"]


def fmt(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def bar(v: float | None, width: int = 10) -> str:
    """A text bar of ``width`` cells for a ratio in [0, 1]."""
    if v is None:
        return "·" * width
    eighths = round(max(0.0, min(1.0, v)) * width * 8)
    full, part = divmod(eighths, 8)
    s = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
    return s.ljust(width, "░")


def summary_text(
    summary: dict,
    k: int,
    sweep: list[dict] | None,
    panel: SummaryPanel | None = None,
    judge: Text | None = None,
) -> Text:
    """The set's metrics (with ``panel``: every rate with its interval, and the slices),
    the judge's lines and, with a sweep, hit / supported / correct against k."""
    t = Text()
    n = summary.get("n", 0)
    t.append("summary  ", style="bold")
    if panel is not None:
        t.append(f"{n} cases · k={k}" + (f" · {summary['errors']} errors" if summary.get("errors") else ""))
        if summary.get("tokens") is not None:
            t.append(f" · {summary['tokens']} prompt tokens")
        t.append("\n")
        t.append("\n".join(panel.rate_lines()) + "\n")
        if judge:
            t.append_text(judge)
        t.append(f"95 % intervals; {panel.clusters}\n", style="dim")
    else:
        t.append(
            f"{n} cases · hit@{k} {fmt(summary.get('hit'))} · recall {fmt(summary.get('recall'))} · "
            f"mrr {fmt(summary.get('mrr'))} · precision {fmt(summary.get('precision'))}\n"
        )
        t.append(
            f"         supported {fmt(summary.get('supported'))} · faithfulness {fmt(summary.get('faithfulness'))}"
            f" · correct {fmt(summary.get('accuracy'))} · coverage {fmt(summary.get('coverage'))}"
            f" · unknown abstention {fmt(summary.get('unknown_abstention'))}"
        )
        if summary.get("tokens") is not None:
            t.append(f" · {summary['tokens']} prompt tokens")
        t.append("\n")
    if judge and panel is None:
        t.append_text(judge)
    if sweep:
        t.append(f"{'':5}{'hit':<17}{'supported':<17}{'correct':<17}\n", style="dim")
        for row in sweep:
            mark = "◀ run" if row["k"] == k else ""
            t.append(f"k={row['k']:<3}")
            for key in ("hit", "supported", "correct"):
                v = row.get(key)
                t.append(f"{bar(v)} {fmt(v, 2):<5} ")
            t.append(mark + "\n", style="bold")
    if panel is not None:
        rows = panel.slice_lines()
        if rows:
            t.append("\n".join(rows) + "\n")
    return t


def panel_of(
    state: TriageState,
    summary: dict,
    cases: Sequence[Case] | Callable[[], Sequence[Case]] | None,
    corpus: Corpus | None,
    corpus_path: str | None,
) -> SummaryPanel:
    """Intervals and slices of the state's records, clustered as ``ragtriage run`` does
    (by the gold's document; the documents read from the corpus in memory). ``cases`` may
    be a function that reads them (called here, on the worker, when a pass runs)."""
    from ...core.summary_panel import summary_panel

    if callable(cases):
        cases = cases()

    records = list(state.records)
    docs = None
    if corpus is not None:
        docs = {}
        for r in records:
            exp = list(r.get("expected") or ())
            ch = corpus.get(exp[0]) if exp else None
            if ch is not None and isinstance(ch.doc, str) and ch.doc:
                docs[exp[0]] = ch.doc
    tags_of = None if cases is None else {c.id: list(c.tags) for c in cases}
    return summary_panel(records, state.k, summary, corpus_path=corpus_path, tags_of=tags_of, docs=docs)


def builtin_answer_sweep(
    doc: TestSetDocument | None, corpus: Corpus | None, system: str | None, n: int
) -> AnswerSweep | None:
    """Supported / correct per k for a local ``builtin`` run (its answers are re-derived
    locally from one ranking, as ``ragtriage sweep`` does); None for other systems."""
    if system != "builtin" or doc is None or n > ANSWER_SWEEP_LIMIT:
        return None

    def answers(depth: int) -> dict[int, tuple[float | None, float | None]] | None:
        from ...core.sweep import sweep as core_sweep

        try:
            result = core_sweep(doc, "builtin", ks=list(range(1, depth + 1)), corpus=corpus)
        except Exception:  # the chart then shows retrieval only
            return None
        return {row["k"]: (row.get("supported"), row.get("correct")) for row in result["rows"]}

    return answers


def compute(
    state: TriageState, stored: dict | None, answer_sweep: AnswerSweep | None = None
) -> tuple[dict, list[dict] | None]:
    """The summary (``stored``, the run file's, while no case changed) and the sweep over k."""
    records = list(state.records)
    summary = state.summary() if stored is None or state.version else stored
    sweep: list[dict] | None = None
    depth = min(ranking_depth(records), SWEEP_MAX_K)
    if depth > 1:
        hits = retrieval_sweep(records, range(1, depth + 1))
        sweep = [{"k": k, "hit": h, "supported": None, "correct": None} for k, h in hits]
        for row in sweep:
            if row["k"] == state.k:
                row["supported"], row["correct"] = summary.get("supported"), summary.get("accuracy")
        answers = answer_sweep(depth) if answer_sweep is not None else None
        if answers:
            for row in sweep:
                a = answers.get(row["k"])
                if a is not None and row["k"] != state.k:
                    row["supported"], row["correct"] = a
    return summary, sweep


@dataclass(frozen=True)
class Context:
    """What the summary needs from the app beyond the records (taken on the UI thread)."""

    #: the test set's cases, for their tags: or the function that reads them when the
    #: settled pass runs (an edit rebuilds 100k cases; a burst of edits reads them once)
    cases: Sequence[Case] | Callable[[], Sequence[Case]] | None = None
    corpus: Corpus | None = None
    corpus_path: str | None = None
    min_kappa: float = 0.6
    min_grades: int = 30


#: a change waits this long for the next one before the summary is recomputed (a burst of
#: edits is one pass, and the pass never competes with the frame of the edit that asked)
SETTLE = 0.3
#: ... but no longer than this after the first change not yet shown
SETTLE_MAX = 1.5
#: below this many cases a pass takes a few milliseconds: it runs at once
SETTLE_FROM = 5_000


class TriageSummary(Static):
    """The summary pane; ``i`` on Triage shows or hides it, ``I`` shows it in full.

    :meth:`request` is cheap and may be called on every change: the pass runs in one
    thread worker once the changes settle (:data:`SETTLE` after the last one, at most
    :data:`SETTLE_MAX` after the first), on the last request's inputs. Every request
    bumps a generation; a pass that a newer request overtook stops between its stages
    and its result is dropped, so what the pane ends up showing is always the last
    request's."""

    @dataclass
    class Ready(Message):
        state: TriageState
        summary: dict | None
        sweep: list[dict] | None
        calibration: Text
        panel: SummaryPanel | None = None
        generation: int = 0

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._lock = threading.Lock()
        self._busy = False  # a worker runs (or is about to): requests only hand it their inputs
        self._pending: tuple | None = None  # the last request not yet taken by the worker
        self._generation = 0
        self._first_at: float | None = None  # when the oldest change not yet computed came
        self._last_at = 0.0
        self._settle = SETTLE
        self.state: TriageState | None = None  # the state last asked for
        self.sweep: list[dict] | None = None
        self.panel: SummaryPanel | None = None
        self.shown_generation = 0  # the generation the pane shows (tests: it caught up)

    @property
    def generation(self) -> int:
        return self._generation

    def request(
        self,
        state: TriageState,
        stored: dict | None,
        answer_sweep: AnswerSweep | None,
        grades: GradeBook,
        context: Context | None = None,
    ) -> None:
        """Recompute for ``state`` once the changes settle, in a worker (the last request wins)."""
        self.state = state
        ctx = context or Context()
        now = time.monotonic()
        with self._lock:
            self._generation += 1
            self._pending = (self._generation, state, stored, answer_sweep, dict(grades.table), ctx)
            self._settle = SETTLE if len(state) >= SETTLE_FROM else 0.0
            self._last_at = now
            if self._first_at is None:
                self._first_at = now
            if self._busy:
                return
            self._busy = True
        self._compute()

    def _wait_settled(self) -> tuple | None:
        """(On the worker) sleep until the changes settle; then take the last request."""
        while True:
            with self._lock:
                now = time.monotonic()
                first = self._first_at if self._first_at is not None else now
                due = min(self._last_at + self._settle, first + SETTLE_MAX)
                if now >= due or self._pending is None:
                    job, self._pending, self._first_at = self._pending, None, None
                    if job is None:
                        self._busy = False
                    return job
            time.sleep(due - now)

    def _stale(self, generation: int) -> bool:
        return generation != self._generation

    @work(thread=True, group="triage-summary", exit_on_error=False)
    def _compute(self) -> None:
        try:
            while (job := self._wait_settled()) is not None:
                self._pass(*job)
        except BaseException:  # the error is the worker's; the next request starts a new one
            with self._lock:
                self._busy = False
            raise

    def _pass(
        self,
        generation: int,
        state: TriageState,
        stored: dict | None,
        answer_sweep: AnswerSweep | None,
        grades: dict[tuple[str, str], Grade],
        ctx: Context,
    ) -> None:
        """One pass (on the worker); it stops between stages once a newer request came."""
        from ..judge_panel import calibration_line

        summary, sweep = compute(state, stored, answer_sweep)
        if self._stale(generation):  # overtaken: the next request's pass starts now
            return
        panel = panel_of(state, summary, ctx.cases, ctx.corpus, ctx.corpus_path)
        if self._stale(generation):
            return
        calibration = calibration_line(list(state.records), grades, ctx.min_kappa, ctx.min_grades)
        if not self._stale(generation):
            self.post_message(self.Ready(state, summary, sweep, calibration, panel, generation))

    @on(Ready)
    def _ready(self, event: Ready) -> None:
        event.stop()
        if event.generation != self._generation or event.state is not self.state or event.summary is None:
            return  # a newer request is on its way
        self.shown_generation = event.generation
        self.sweep, self.panel = event.sweep, event.panel
        self.update(summary_text(event.summary, event.state.k, event.sweep, event.panel, event.calibration))
