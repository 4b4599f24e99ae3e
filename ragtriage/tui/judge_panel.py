"""The judge in triage (judge.md), as Rich text (no Textual): its verdict beside the
deterministic result — only once the answer is graded, so the verdict cannot pull the
grade toward it — the expert's grade, and the calibration line of the summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ..core.judge import calibrate, disagreements, judged

if TYPE_CHECKING:
    from ..core.judge.grades import Grade
    from ..core.records import CaseRecord


def yes_no(v: Any) -> str:
    return "— n/a" if v is None else ("✓ yes" if v else "✗ no")


def judge_verdict(record: CaseRecord) -> Text:
    """The judge's verdict and reason, and where it disagrees with the deterministic result."""
    t = Text()
    j = record.get("judge")
    if not isinstance(j, dict):
        return t
    t.append("judge  ", style="bold")
    if "error" in j:
        t.append(f"error: {j['error']} (the result above stands)\n")
        return t
    t.append(f"supported {yes_no(j.get('supported'))} · correct {yes_no(j.get('correct'))}")
    t.append("  (cached)\n" if j.get("cached") else "\n")
    if j.get("reason"):
        t.append(f"       {j['reason']}\n", style="italic")
    where = disagreements(record)
    if where:
        names = {"supported": "the grounding check", "correct": "must-contain / the reference"}
        t.append("       ⚖ disagrees with " + " and ".join(names[w] for w in where) + "\n", style="bold")
    return t


def judge_detail(record: CaseRecord, grade: Grade | None) -> Text:
    """What triage shows of the judge for one case: the grade, and the judge's verdict once
    the answer is graded (before that it is hidden: grade it blind with ``g``)."""
    t = Text()
    j = record.get("judge")
    if not isinstance(j, dict) and grade is None:
        return t
    t.append("\n")
    if grade is not None:
        t.append_text(judge_verdict(record))
        t.append("graded ", style="bold")
        t.append(
            f"supported {yes_no(grade.supported)} · correct {yes_no(grade.correct)}"
            f"  by {grade.by or '?'} {grade.when[:10]}\n"
        )
    elif isinstance(j, dict) and "error" in j:
        t.append_text(judge_verdict(record))
    elif judged(record):
        t.append("judge  ", style="bold")
        t.append(
            "verdict hidden until the answer is graded (g: grade blind, in the grading queue)\n", style="dim"
        )
    return t


def calibration_line(records: list[CaseRecord], grades: Mapping[tuple[str, str], Grade]) -> Text:
    """One line for the triage summary: the judge against the grades, κ beside the grounding check's."""
    if not grades or not any("judge" in r for r in records):
        return Text()
    rep = calibrate(records, grades)

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
