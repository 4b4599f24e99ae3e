"""The expert's grades in the app (no Textual): one book per test set, and the queue.

:class:`GradeBook` reads ``<stem>.grades.jsonl`` once, appends to it and can take
back this session's grades. :func:`grading_queue` is the order a grader walks:
the answers the judge's calibration needs and that have no grade yet — first
those where the judge contradicts the deterministic check (a person has to
settle them anyway), then every other answer in a random order fixed by the run,
so the grades are a sample of the run and κ is not measured on hard cases only.
The queue never says why a case is in it, and the grading screen hides the
judge's verdict until the grade is given (judge.md: a grader shown the model's
label agrees with it more often, which inflates the κ that gates the judge).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.judge import disagreements, grades_path, judged, latest, make_grade, read_grades
from ..core.judge.grades import Grade, append_grade, grade_for, undo_append

if TYPE_CHECKING:
    from ..core.records import CaseRecord


class GradeBook:
    """One test set's grades for the session: read once, appended to, this session's grades undoable."""

    def __init__(self, testset_path: Path) -> None:
        self.path = grades_path(testset_path)
        grades, self.warnings = read_grades([self.path])
        self.table: dict[tuple[str, str], Grade] = latest(grades)
        self._given: list[tuple[Grade, Grade | None]] = []  # (grade given, the one it replaced)
        self._graded: set[str] | None = None

    def grade_of(self, record: CaseRecord) -> Grade | None:
        if record["id"] not in self._cases():  # most cases have none: no fingerprint needed
            return None
        return grade_for(record, self.table)

    def _cases(self) -> set[str]:
        if self._graded is None:
            self._graded = {case for case, _ in self.table}
        return self._graded

    def give(self, record: CaseRecord, supported: bool, correct: bool | None, by: str) -> Grade:
        """Append a grade of ``record``'s answer (raises ``InputError`` when the file cannot be written)."""
        g = make_grade(record, supported, correct, by=by)
        append_grade(self.path, g)
        key = (g.case, g.answer_sha)
        self._given.append((g, self.table.get(key)))
        self.table[key] = g
        self._graded = None
        return g

    def undo(self) -> tuple[str | None, str]:
        """Take back the session's last grade: (the case, what happened in words)."""
        if not self._given:
            return None, "no grade to undo"
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
            return g.case, f"cannot undo the grade of {g.case}: {self.path.name} has grades added after it"
        self._given.pop()
        if prev is None:
            self.table.pop(key, None)
        else:
            self.table[key] = prev
        self._graded = None
        return g.case, f"grade of {g.case} undone"


@dataclass(frozen=True)
class Progress:
    """How far the grades are toward a judge bar (judge.md: κ on ``judge_min_grades`` answers)."""

    graded: int  # answers of this run with a grade that applies to them
    paired: int  # of those, answers the judge gave a verdict on (what κ is measured on)
    needed: int  # judge_min_grades
    judged_run: bool  # the run has judge verdicts at all

    def text(self) -> str:
        if self.judged_run:
            return f"{self.paired} / {self.needed} toward a judge bar"
        return f"{self.graded} graded · run has no judge (a bar needs {self.needed} judged)"


def gradeable(record: CaseRecord) -> bool:
    return judged(record)


def grading_queue(records: Iterable[CaseRecord], book: GradeBook, seed: str) -> list[str]:
    """Case ids to grade, in order: ungraded answers where the judge disagrees with the
    deterministic check first, then the other ungraded answers shuffled by ``seed``."""
    first: list[str] = []
    rest: list[str] = []
    for rec in records:
        if not gradeable(rec) or book.grade_of(rec) is not None:
            continue
        (first if disagreements(rec) else rest).append(rec["id"])
    random.Random(seed).shuffle(rest)
    return first + rest


def progress(records: Iterable[CaseRecord], book: GradeBook, needed: int) -> Progress:
    graded = paired = 0
    judged_run = False
    for rec in records:
        j = rec.get("judge")
        has_verdict = isinstance(j, dict) and "error" not in j
        judged_run = judged_run or has_verdict
        if book.grade_of(rec) is None:
            continue
        graded += 1
        if has_verdict:
            paired += 1
    return Progress(graded, paired, needed, judged_run)
