"""Grading: the answers the judge's calibration needs, one after the other, graded blind.

Each answer is shown with its question, its citations and the text of every chunk
the model saw, and the reference when the case has one; the judge's verdict (and
the deterministic check's) stays hidden until the grade is given, then shows on
the line of the previous answer while the next one is already up. The order is
:func:`~ragtriage.tui.grading.grading_queue`'s; leaving (escape) and coming back
resumes at the first answer still without a grade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ...core.grounding import citations
from ..base import AppScreen
from ..grading import grading_queue, narrowest_queue, progress
from ..judge_panel import yes_no
from ..run_session import MarksChanged, RunEvent, RunOpened
from ..shown import plain, shown_line, shown_text
from ..triage_view import answer_text
from ..widgets.footer import Footer

if TYPE_CHECKING:
    from ...core.judge.grades import Grade
    from ...core.records import CaseRecord


class GradingScreen(AppScreen[None]):
    """``g`` on Triage: grade answers as a queue (judge.md)."""

    HELP_TITLE = "Grading"
    HELP_INTRO = """
The answers to grade, one after the other: first those with no grade where the
judge and the deterministic check disagree, then the others in a random order
kept for this run, so your grades are a sample of the run and not only its hard
cases. The judge's verdict is hidden until you have graded (a grader shown the
model's verdict agrees with it more often, which would inflate the κ that
decides whether a CI bar may use the judge).

Supported: does every claim of the answer follow from the chunks shown? {y} yes,
{n} no. Then correct: does it say what the reference says? {y} yes, {n} no,
{s} skip (no reference). The next answer follows by itself; {backspace} takes
the last grade back; {j} skips to the next answer, {k} goes back. Grades are
kept in <stem>.grades.jsonl beside the test set, with your name.

{N} toggles "narrowest first": the next answer is then one where a grade narrows
the interval of the judge's corrected rates most — from the group of answers the
judge said yes or no to where it has been wrong most often for the grades it has
(and is the largest), a group without grades first; within a group, the run's
random order. The summary's corrected rates count each group by its own grades,
so they stay right in either order.
"""

    DETAIL = "#grading-case"

    DEFAULT_CSS = """
    GradingScreen #grading-status { height: 1; background: $panel; color: $text; padding: 0 1; }
    GradingScreen #grading-case { height: 1fr; padding: 0 1; }
    GradingScreen #grading-ask { height: auto; padding: 0 1; background: $boost; text-style: bold; }
    GradingScreen #grading-last { height: auto; padding: 0 1; color: $text-muted; }
    """

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="grading.yes"),
        Binding("n", "answer(False)", "No", id="grading.no"),
        Binding("s", "skip_correct", "Skip (no reference)", id="grading.skip"),
        Binding("backspace", "undo", "Undo grade", id="grading.undo"),
        Binding("j,down", "move(1)", "Next answer", id="grading.next"),
        Binding("k,up", "move(-1)", "Previous answer", show=False, id="grading.previous"),
        Binding(
            "N",
            "toggle_narrowest",
            "Narrowest first",
            id="grading.narrowest",
            tooltip="next, the answer whose grade narrows the corrected rates' interval most",
        ),
        Binding("escape", "back", "Back", id="grading.back"),
        Binding("J", "scroll_detail(3)", "Scroll down", show=False, id="grading.detail_down"),
        Binding("K", "scroll_detail(-3)", "Scroll up", show=False, id="grading.detail_up"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.queue: list[str] = []
        self.at = 0
        self.supported: bool | None = None  # the first half of the grade being given
        self.last: Text = Text()

    def compose(self) -> ComposeResult:
        yield Static("", id="grading-status")
        with VerticalScroll(id="grading-case"):
            yield Static("", id="grading-text")
        yield Static("", id="grading-last")
        yield Static("", id="grading-ask")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._requeue()
        self.show_state()

    def on_screen_resume(self) -> None:
        self._requeue()
        self.show_state()

    def run_changed(self, event: RunEvent) -> None:
        if isinstance(event, RunOpened):
            self._requeue()
        if isinstance(event, (RunOpened, MarksChanged)):
            self.show_state()

    def _requeue(self, focus: str | None = None) -> None:
        run = self.rt.run_session
        state = run.state
        records = state.records if state is not None else []
        current = focus or self.current
        order = narrowest_queue if run.grades.narrowest_first else grading_queue
        self.queue = order(records, run.grades, seed=run.path.name if run.path else "")
        self.at = self.queue.index(current) if current in self.queue else 0
        self.supported = None

    @property
    def current(self) -> str | None:
        return self.queue[self.at] if 0 <= self.at < len(self.queue) else None

    def _needed(self) -> int:
        from ...core.judge import thresholds

        if not self.rt.loaded:
            return 30
        settings = self.rt.doc.settings
        return thresholds(settings.gates, settings)[1]

    # -- display -----------------------------------------------------------------------
    def show_state(self) -> None:
        run = self.rt.run_session
        state = run.state
        records = state.records if state is not None else []
        p = progress(records, run.grades, self._needed())
        left = len(self.queue) if self.current is not None else 0
        order = " · narrowest first" if run.grades.narrowest_first else ""
        status = f"Grading{order} · {left} to grade · {p.text()}"
        self.query_one("#grading-status", Static).update(plain(status))
        self.query_one("#grading-last", Static).update(shown_text(self.last))
        cid = self.current
        text = self.query_one("#grading-text", Static)
        ask = self.query_one("#grading-ask", Static)
        rec = run.record(cid) if cid is not None else None
        if rec is None:
            text.update(Text("Every answer of this run has a grade. escape goes back to Triage."))
            ask.update(Text(""))
            return
        text.update(shown_text(self._case_text(rec)))
        if self.supported is None:
            ask.update(
                plain(f"{shown_line(cid)}: supported by the chunks shown?  y yes · n no   (j skips it)")
            )
        else:
            ask.update(
                Text(
                    f"{cid}: supported {yes_no(self.supported)} — correct (says what the reference says)?"
                    "  y yes · n no · s skip"
                )
            )

    def _case_text(self, rec: CaseRecord) -> Text:
        """Question, answer with its citations, every chunk the model saw, the reference."""
        app = self.rt
        t = Text()
        t.append(rec["id"], style="bold")
        if rec.get("topic"):
            t.append(f"  · {rec['topic']}", style="italic")
        t.append("\n\nquestion  ", style="dim")
        t.append(str(rec.get("question", "")) + "\n")
        answer = str(rec.get("answer") or "")
        t.append("\nanswer  ", style="dim")
        t.append_text(answer_text(answer, ""))
        t.append("\n")
        cited = citations(answer)
        if cited:
            t.append("cites   ", style="dim")
            t.append(", ".join(cited) + "\n")
        seen = list(rec.get("prompt_ids") or (rec.get("ranking") or [])[: app.run_session.k])
        t.append(f"\nthe chunks the model saw ({len(seen)})\n", style="dim")
        corpus = app.corpus
        for cid in seen:
            chunk = corpus.get(cid) if corpus is not None else None
            t.append(f"● {cid}", style="bold")
            if cid in cited:
                t.append("  ★ cited", style="bold")
            if chunk is not None and chunk.doc:
                t.append(f"  ({chunk.doc})", style="dim")
            t.append("\n")
            if chunk is not None:
                t.append("  " + " ".join(chunk.text.split()) + "\n")
            else:
                t.append("  (text not in the loaded corpus)\n", style="dim italic")
        case = app.doc.case(rec["id"]) if app.loaded and rec["id"] in app.doc else None
        if case is not None and (case.answer or case.must_contain):
            t.append("\n")
            if case.answer:
                t.append("reference  ", style="dim")
                t.append(case.answer + "\n")
            if case.must_contain:
                t.append("must contain  ", style="dim")
                t.append(" · ".join(f"“{s}”" for s in case.must_contain) + "\n")
        elif case is not None:
            t.append("\nno reference answer: s skips “correct”\n", style="dim")
        return t

    # -- grading -----------------------------------------------------------------------
    def action_answer(self, yes: bool) -> None:
        if self.current is None:
            return
        if self.supported is None:
            self.supported = yes
            self.show_state()
            return
        self._give(self.supported, yes)

    def action_skip_correct(self) -> None:
        if self.current is not None and self.supported is not None:
            self._give(self.supported, None)

    def _give(self, supported: bool, correct: bool | None) -> None:
        cid = self.current
        if cid is None:
            return

        def give(name: str) -> None:
            run = self.rt.run_session
            grade = run.give_grade(cid, supported, correct, name)
            if grade is None:
                return
            rec = run.record(cid)
            self.last = self._revealed(rec, grade) if rec is not None else Text()
            self.queue.remove(cid)
            self.at = min(self.at, len(self.queue))
            if run.grades.narrowest_first:  # the grade moved the gains: the next pick again
                self._requeue(focus="")
                self.at = 0
            self.supported = None
            self.detail_home()
            self.show_state()

        self.rt.with_grader(give)

    @staticmethod
    def _revealed(rec: CaseRecord, grade: Grade) -> Text:
        """The previous answer's grade beside the judge's verdict, now that it is given."""
        t = Text()
        t.append(
            f"{rec['id']}: you said supported {yes_no(grade.supported)} · correct {yes_no(grade.correct)}"
        )
        j = rec.get("judge")
        if isinstance(j, dict) and "error" not in j:
            t.append(
                f" — the judge: supported {yes_no(j.get('supported'))} · correct {yes_no(j.get('correct'))}"
            )
            same = j.get("supported") == grade.supported and (
                grade.correct is None or j.get("correct") in (None, grade.correct)
            )
            t.append("  (agrees)" if same else "  (disagrees)", style="bold")
        return t

    def action_undo(self) -> None:
        case, text = self.rt.run_session.undo_grade()
        self.notify(text, timeout=2)
        self.last = Text()
        self._requeue(focus=case)  # the answer whose grade was taken back, to grade again
        self.show_state()

    def action_move(self, by: int) -> None:
        if self.queue:
            self.at = (self.at + by) % len(self.queue)
            self.supported = None
            self.detail_home()
            self.show_state()

    def action_toggle_narrowest(self) -> None:
        book = self.rt.run_session.grades
        book.narrowest_first = not book.narrowest_first
        self._requeue(focus="")
        self.at = 0
        self.detail_home()
        self.notify(
            "narrowest first: the answer whose grade narrows the corrected rates most"
            if book.narrowest_first
            else "the usual order: disagreements first, then the run's random order",
            timeout=3,
        )
        self.show_state()

    def action_back(self) -> None:
        self.dismiss()
