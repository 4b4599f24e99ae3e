"""The judge in triage (judge.md), as Rich text (no Textual): its verdict beside the
deterministic result — only once the answer is graded, so the verdict cannot pull the
grade toward it — the expert's grade, and the calibration line of the summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ..core.judge import calibrate, corrected_rates, disagreements, judged

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


def _iv(iv: Mapping[str, Any] | None) -> str:
    return "" if not iv else f" [{iv['lo']:.2f}, {iv['hi']:.2f}]"


def calibration_line(
    records: list[CaseRecord],
    grades: Mapping[tuple[str, str], Grade],
    min_kappa: float = 0.6,
    min_grades: int = 30,
) -> Text:
    """The judge in the triage summary, as ``ragtriage judge`` says it: per question the
    judge's rate corrected by the grades with its interval, κ with its interval and
    whether a CI bar may use the judge (κ's lower bound ≥ ``min_kappa`` on ≥ ``min_grades``)."""
    from ..core.judge import proven

    if not any("judge" in r for r in records):
        return Text()
    t = Text()
    if not grades:
        t.append("judge  ", style="bold")
        t.append("no grades yet: g grades answers blind, for κ and the judge's corrected rates\n")
        return t
    rep = calibrate(records, grades)
    fixed = corrected_rates(records, grades)  # the estimator of `ragtriage judge` (judge.md)
    t.append("judge vs grades  ", style="bold")
    t.append(f"a CI bar needs κ's lower bound ≥ {min_kappa:g} on ≥ {min_grades} graded\n")
    for q in ("supported", "correct"):
        a = rep[q]
        agree = "—" if a["agreement"] is None else f"{a['agreement']:.2f}"
        kappa = "—" if a["kappa"] is None else f"{a['kappa']:.2f}{_iv(a['kappa_interval'])}"
        bar = "bar allowed" if proven(a, min_kappa, min_grades) else "bar refused"
        t.append(f"  {q} n {a['n']} · agreement {agree} · κ {kappa} · {bar}\n")
        est = fixed.get(q)
        if est is None:
            t.append("    corrected rate: — (needs 2 or more graded answers)\n", style="dim")
        else:
            iv = est.interval
            method, _, caveat = iv.method.partition("; ")
            point = "unknown, within" if est.estimate is None else f"{est.estimate:.3f}"
            t.append(
                f"    judge {est.judge_rate:.3f} → corrected {point} [{iv.lo:.2f}, {iv.hi:.2f}]"
                f" · {method}, {est.graded} graded\n"
            )
            if caveat:
                t.append(f"      {caveat}\n", style="dim")
    g = rep["grounding"]
    t.append(f"  grounding check n {g['n']} · κ ")
    t.append("—" if g["kappa"] is None else f"{g['kappa']:.2f}{_iv(g['kappa_interval'])}")
    t.append("\n")
    return t
