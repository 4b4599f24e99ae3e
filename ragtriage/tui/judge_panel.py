"""The judge in triage (judge.md): its verdict beside the deterministic result,
grading an answer with ``g`` (undoable), and the calibration in the summary.

The triage screen calls three functions — :func:`judge_detail`,
:func:`calibration_summary`, :func:`grade_current` — so the screen itself
barely changes; the grades live in a :class:`GradeBook` per screen.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ..core.errors import InputError
from ..core.judge import calibrate, disagreements, grades_path, judged, latest, make_grade, read_grades
from ..core.judge.grades import Grade, answer_sha, append_grade, grade_for, undo_append

if TYPE_CHECKING:
    from ..core.records import CaseRecord


def _yes_no(v: Any) -> str:
    return "— n/a" if v is None else ("✓ yes" if v else "✗ no")


class GradeBook:
    """One test set's grades for the session: read once, appended to, the session's grades undoable."""

    def __init__(self, testset_path: Path):
        self.path = grades_path(testset_path)
        grades, self.warnings = read_grades([self.path])
        self.table: dict[tuple[str, str], Grade] = latest(grades)
        self._given: list[tuple[Grade, Grade | None]] = []  # (grade given, the one it replaced)

    def grade_of(self, record: CaseRecord) -> Grade | None:
        return grade_for(record, self.table)

    def give(self, record: CaseRecord, supported: bool, correct: bool | None) -> Grade:
        g = make_grade(record, supported, correct)
        append_grade(self.path, g)
        key = (g.case, g.answer_sha)
        self._given.append((g, self.table.get(key)))
        self.table[key] = g
        return g

    def undo(self) -> str:
        """Take back the session's last grade; what happened, in words."""
        if not self._given:
            return "no grade to undo"
        g, prev = self._given[-1]
        key = (g.case, g.answer_sha)
        if undo_append(self.path, g):
            pass
        elif prev is not None:  # grades were added since: re-give the earlier grade, history kept
            again = Grade(
                prev.case, prev.answer_sha, prev.prompt_ids, prev.supported, prev.correct, prev.by, g.when
            )
            append_grade(self.path, again)
            prev = again
        else:
            return f"cannot undo the grade of {g.case}: {self.path.name} has grades added after it"
        self._given.pop()
        if prev is None:
            self.table.pop(key, None)
        else:
            self.table[key] = prev
        return f"grade of {g.case} undone"


_books: weakref.WeakKeyDictionary[Any, GradeBook] = weakref.WeakKeyDictionary()


def book_for(screen: Any) -> GradeBook:
    book = _books.get(screen)
    if book is None:
        book = _books[screen] = GradeBook(Path(screen.app.testset_path))
    return book


# ---------------------------------------------------------------------------- what is shown


def judge_detail(screen: Any, record: CaseRecord) -> Text:
    """The judge's verdict and reason, where it disagrees, and the expert's grade."""
    t = Text()
    j = record.get("judge")
    grade = book_for(screen).grade_of(record) if isinstance(record.get("answer"), str) else None
    if not isinstance(j, dict) and grade is None:
        return t
    t.append("\n")
    if isinstance(j, dict):
        t.append("judge  ", style="bold")
        if "error" in j:
            t.append(f"error: {j['error']} (the result above stands)\n")
        else:
            t.append(f"supported {_yes_no(j.get('supported'))} · correct {_yes_no(j.get('correct'))}")
            t.append("  (cached)\n" if j.get("cached") else "\n")
            if j.get("reason"):
                t.append(f"       {j['reason']}\n", style="italic")
            where = disagreements(record)
            if where:
                names = {"supported": "the grounding check", "correct": "must-contain / the reference"}
                t.append(
                    "       ⚖ disagrees with " + " and ".join(names[w] for w in where) + "\n", style="bold"
                )
    if grade is not None:
        t.append("graded ", style="bold")
        t.append(
            f"supported {_yes_no(grade.supported)} · correct {_yes_no(grade.correct)}"
            f"  by {grade.by or '?'} {grade.when[:10]}  (g: grade again or undo)\n"
        )
    elif judged(record):
        t.append("not graded (g: grade this answer)\n", style="dim")
    return t


def calibration_summary(screen: Any, records: list[CaseRecord]) -> Text:
    """One line for the triage summary: the judge against the grades, κ beside the grounding check's."""
    book = book_for(screen)
    if not book.table or not any("judge" in r for r in records):
        return Text()
    rep = calibrate(records, book.table)

    def part(name: str) -> str:
        a = rep[name]
        kappa = "—" if a["kappa"] is None else f"{a['kappa']:.2f}"
        agree = "—" if a["agreement"] is None else f"{a['agreement']:.2f}"
        return f"{name} n {a['n']} · κ {kappa} · agreement {agree}"

    t = Text()
    t.append("judge vs grades  ", style="bold")
    t.append(f"{part('supported')}  │  {part('correct')}  │  grounding check κ ")
    g = rep["grounding"]["kappa"]
    t.append("—" if g is None else f"{g:.2f}")
    return t


# ---------------------------------------------------------------------------- grading


class GradeDialog(ModalScreen["tuple[bool, bool | None] | str | None"]):
    """Supported y/n, then correct y/n/s(kip); ``u`` takes back the session's last grade."""

    DEFAULT_CSS = """
    GradeDialog { align: center middle; }
    GradeDialog > Vertical { width: 72; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    GradeDialog .dialog-hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="grade.cancel")]

    def __init__(self, case_id: str, answer: str, current: Grade | None) -> None:
        super().__init__()
        self.case_id = case_id
        self.answer = " ".join(answer.split())
        self.current = current
        self.supported: bool | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Grade the answer — {self.case_id}", classes="dialog-title")
            yield Static(self.answer if len(self.answer) <= 300 else self.answer[:299] + "…")
            if self.current is not None:
                yield Static(
                    f"now: supported {_yes_no(self.current.supported)} · correct {_yes_no(self.current.correct)}",
                    classes="dialog-hint",
                )
            yield Static("Supported by its chunks?  y: yes · n: no", id="grade-question")
            yield Static("u: undo the last grade · escape: cancel", classes="dialog-hint")

    def on_key(self, event: Any) -> None:
        key = event.key
        if key == "u":
            event.stop()
            self.dismiss("undo")
            return
        if self.supported is None:
            if key in ("y", "n"):
                event.stop()
                self.supported = key == "y"
                self.query_one("#grade-question", Static).update(
                    f"supported {_yes_no(self.supported)} — Correct?  y: yes · n: no · s: skip (no reference)"
                )
            return
        if key in ("y", "n", "s"):
            event.stop()
            self.dismiss((self.supported, None if key == "s" else key == "y"))

    def action_cancel(self) -> None:
        self.dismiss(None)


def grade_current(screen: Any) -> None:
    """``g`` on the triage screen: grade the highlighted case's answer (judge.md)."""
    state = screen.state
    cid = screen.table.current_id if state is not None else None
    if cid is None or cid not in state:
        return
    rec = state.record(cid)
    answer = rec.get("answer")
    if not judged(rec) or not isinstance(answer, str):
        screen.notify("nothing to grade: the case declined, failed or has no answer", severity="warning")
        return
    book = book_for(screen)

    def done(result: Any) -> None:
        if result is None:
            return
        try:
            if result == "undo":
                screen.notify(book.undo(), timeout=2)
            else:
                sup, cor = result
                book.give(rec, sup, cor)
                screen.notify(f"graded {cid}: supported {_yes_no(sup)} · correct {_yes_no(cor)}", timeout=2)
        except InputError as e:
            screen.notify(str(e.problems[0]), severity="error")
            return
        screen._show_detail(cid)
        screen.refresh_summary()

    screen.app.push_screen(GradeDialog(cid, answer, book.grade_of(rec)), done)


__all__ = ["GradeBook", "GradeDialog", "answer_sha", "calibration_summary", "grade_current", "judge_detail"]
