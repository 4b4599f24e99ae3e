"""The expert's grades in the app (no Textual): one book per test set, and the queue.

:class:`GradeBook` reads ``<stem>.grades.jsonl`` once, appends to it and can take
back this session's grades. :func:`grading_queue` is the order a grader walks:
the answers the judge's calibration needs and that have no grade yet — first
those where the judge contradicts the deterministic check (a person has to
settle them anyway), then every other answer in a random order fixed by the run,
so the grades are a sample of the run and κ is not measured on hard cases only.
:func:`narrowest_queue` is the other order (``N`` in the queue): next, a case of the
stratum of the judge's verdict where one more grade narrows the interval of the
judge's corrected rates most (:func:`stratum_gains`), for the stratified estimate
of :func:`~ragtriage.core.stats.ppi_stratified`.
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
        self.narrowest_first = False  # the queue's order: N in the grading queue toggles it

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


# -- narrowest first -------------------------------------------------------------------------
QUESTIONS = ("supported", "correct")
Verdicts = tuple["bool | None", "bool | None"]  # the judge's (supported, correct) on one answer
NARROWEST_AHEAD = 200  # picks ordered by the gains; the rest follow in the queue's order


def verdicts(record: CaseRecord) -> Verdicts | None:
    """The judge's verdict on each question, None when the judge gave none on the answer."""
    j = record.get("judge")
    if not isinstance(j, dict) or "error" in j:
        return None
    sup, cor = j.get("supported"), j.get("correct")
    key = (sup if isinstance(sup, bool) else None, cor if isinstance(cor, bool) else None)
    return None if key == (None, None) else key


@dataclass
class Tally:
    """One stratum of one question: ``size`` answers the judge said ``verdict`` on,
    ``graded`` of them with a grade on the question, ``disagree`` of those the grade contradicts."""

    size: int = 0
    graded: int = 0
    disagree: float = 0  # a count; the queue's look-ahead adds expected shares

    def disagreement(self) -> float:
        """The disagreement rate with a Beta(1, 1) prior: ½ for a stratum without grades, never 0 or 1."""
        return (self.disagree + 1) / (self.graded + 2)


def tallies(records: Iterable[CaseRecord], book: GradeBook) -> dict[tuple[str, bool], Tally]:
    """(question, the judge's verdict) -> its :class:`Tally`."""
    out: dict[tuple[str, bool], Tally] = {}
    for rec in records:
        if not gradeable(rec):
            continue
        key = verdicts(rec)
        if key is None:
            continue
        g = book.grade_of(rec)
        for q, f in zip(QUESTIONS, key):
            if f is None:
                continue
            t = out.setdefault((q, f), Tally())
            t.size += 1
            human = None if g is None else (g.supported if q == "supported" else g.correct)
            if isinstance(human, bool):
                t.graded += 1
                t.disagree += human != f
    return out


def stratum_gain(t: Tally, total: int) -> float:
    """How much one more grade in this stratum lowers the variance of its question's
    stratified estimate: the stratum's share squared × p(1 − p) of the disagreement,
    from 1/(n + 1) to 1/(n + 2) (the prior counts as one grade, so an ungraded stratum
    is finite and the largest). Neyman's allocation is what taking the largest gain
    each time converges to: grades in proportion to size × √(p(1 − p))."""
    if not total:
        return 0.0
    p = t.disagreement()
    n = t.graded
    return (t.size / total) ** 2 * p * (1 - p) / ((n + 1) * (n + 2))


def stratum_gains(tally: dict[tuple[str, bool], Tally], key: Verdicts) -> float:
    """The gain of grading one answer with the judge's verdicts ``key``: its strata's, summed over the questions."""
    totals = {q: sum(t.size for (qq, _), t in tally.items() if qq == q) for q in QUESTIONS}
    return sum(
        stratum_gain(tally[(q, f)], totals[q])
        for q, f in zip(QUESTIONS, key)
        if f is not None and (q, f) in tally
    )


def narrowest_queue(records: Iterable[CaseRecord], book: GradeBook, seed: str) -> list[str]:
    """The ungraded answers in the order that narrows the corrected rates' intervals most:
    each next answer from the stratum (the judge's verdicts) with the largest
    :func:`stratum_gains`, counting the answers already picked as graded; within a stratum
    the run's random order (``seed``; so each stratum's grades stay a random sample of it,
    which the stratified estimate needs). Past ``NARROWEST_AHEAD`` picks the rest follow in
    that random order (the screen orders the queue again after every grade)."""
    records = list(records)
    tally = tallies(records, book)
    waiting: dict[Verdicts, list[str]] = {}
    loose: list[str] = []  # answers without a verdict: they narrow nothing, so they come last
    for rec in records:
        if not gradeable(rec) or book.grade_of(rec) is not None:
            continue
        key = verdicts(rec)
        (loose if key is None else waiting.setdefault(key, [])).append(rec["id"])
    rng = random.Random(seed)
    for ids in waiting.values():
        rng.shuffle(ids)
    order = list(waiting)  # ties go to the stratum seen first in the run
    out: list[str] = []
    at = dict.fromkeys(order, 0)
    while len(out) < NARROWEST_AHEAD:
        open_ = [k for k in order if at[k] < len(waiting[k])]
        if not open_:
            break
        best = max(open_, key=lambda k: stratum_gains(tally, k))
        out.append(waiting[best][at[best]])
        at[best] += 1
        for q, f in zip(QUESTIONS, best):
            if f is not None:  # as if graded, its disagreement rate kept
                t = tally[(q, f)]
                t.disagree += t.disagreement()
                t.graded += 1
    rest = [cid for k in order for cid in waiting[k][at[k] :]]
    rng.shuffle(rest)
    return out + rest + loose
