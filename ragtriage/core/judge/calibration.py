"""How far the judge agrees with the expert: n, agreement, Cohen's κ and the
confusion matrix for each question, and the grounding check's κ beside it.

κ = (p_o − p_e) / (1 − p_e), with p_o the observed agreement and p_e the
agreement expected by chance from each rater's own yes-rate. κ is ``None``
when nothing is paired or when p_e = 1 (both raters always said the same one
word, so agreement says nothing about judgement).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

from ..errors import InputError, Problem
from ..records import RecordLike
from .grades import Grade, grade_for

JUDGE_METRICS = {"judge_supported": "supported", "judge_correct": "correct"}
DEFAULT_KAPPA = 0.6
DEFAULT_MIN_GRADES = 30


class Agreement(TypedDict):
    n: int
    agreement: float | None
    kappa: float | None
    kappa_interval: dict[str, Any] | None  # {"lo", "hi", "level", "method"}
    confusion: list[list[int]]  # [[judge yes & human yes, judge yes & human no], [judge no & …]]


def agreement(pairs: Iterable[tuple[bool, bool]]) -> Agreement:
    """Agreement of (rater, human) yes/no pairs."""
    from ..stats import kappa as kappa_of

    yy = yn = ny = nn = 0
    pairs = list(pairs)
    for a, h in pairs:
        if a:
            if h:
                yy += 1
            else:
                yn += 1
        elif h:
            ny += 1
        else:
            nn += 1
    n = yy + yn + ny + nn
    if n == 0:
        return {
            "n": 0,
            "agreement": None,
            "kappa": None,
            "kappa_interval": None,
            "confusion": [[0, 0], [0, 0]],
        }
    po = (yy + nn) / n
    pe = ((yy + yn) / n) * ((yy + ny) / n) + ((ny + nn) / n) * ((yn + nn) / n)
    kappa = None if abs(1.0 - pe) < 1e-12 else (po - pe) / (1.0 - pe)
    iv = None
    if kappa is not None:
        k = kappa_of([a for a, _ in pairs], [h for _, h in pairs])
        iv = None if k.interval is None else k.interval.to_dict()
    return {"n": n, "agreement": po, "kappa": kappa, "kappa_interval": iv, "confusion": [[yy, yn], [ny, nn]]}


def kappa_lower(a: Mapping[str, Any]) -> float | None:
    """The lower bound of κ's 95 % interval (what a judge bar is held to), None when unknown."""
    iv = a.get("kappa_interval")
    return None if not iv else float(iv["lo"])


def _verdict(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    j = record.get("judge")
    if not isinstance(j, dict) or "error" in j:
        return None
    return j


def calibrate(
    records: Sequence[RecordLike],
    grades: Mapping[tuple[str, str], Grade],
    languages: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The report of judge.md for a run's records and the winning grades.

    ``languages`` maps case id -> language; when it holds more than one, the
    report gains ``by_language`` with the same figures per language."""
    pairs: dict[str, list[tuple[str, bool, bool]]] = {"supported": [], "correct": [], "grounding": []}
    graded = {case for case, _ in grades}  # most records have no grade: skip them before fingerprinting
    for rec in records:
        if rec.get("id") not in graded:
            continue
        g = grade_for(rec, grades)
        if g is None:
            continue
        lang = (languages or {}).get(rec["id"], "")
        j = _verdict(rec)
        if j is not None:
            if isinstance(j.get("supported"), bool):
                pairs["supported"].append((lang, j["supported"], g.supported))
            if isinstance(j.get("correct"), bool) and g.correct is not None:
                pairs["correct"].append((lang, j["correct"], g.correct))
        if isinstance(rec.get("supported"), bool) and not rec.get("error"):
            pairs["grounding"].append((lang, rec["supported"], g.supported))
    report: dict[str, Any] = {q: agreement((a, h) for _, a, h in ps) for q, ps in pairs.items()}
    langs = sorted(set((languages or {}).values()))
    if len(langs) > 1:
        report["by_language"] = {
            lang: {q: agreement((a, h) for la, a, h in ps if la == lang) for q, ps in pairs.items()}
            for lang in langs
        }
    return report


def thresholds(gates: Mapping[str, float], settings: Any = None) -> tuple[float, int]:
    """(judge_kappa, judge_min_grades): from ``gates``, else the settings, else 0.6 and 30."""
    kappa = gates.get("judge_kappa", getattr(settings, "judge_kappa", None))
    n = gates.get("judge_min_grades", getattr(settings, "judge_min_grades", None))
    return (
        DEFAULT_KAPPA if kappa is None else float(kappa),
        DEFAULT_MIN_GRADES if n is None else int(n),
    )


def kappa_text(a: Mapping[str, Any]) -> str:
    """``0.60 [0.25, 0.86]``, or ``unknown``."""
    k = a.get("kappa")
    if k is None:
        return "unknown"
    iv = a.get("kappa_interval")
    return f"{k:.2f}" + ("" if not iv else f" [{iv['lo']:.2f}, {iv['hi']:.2f}]")


def proven(a: Mapping[str, Any], min_kappa: float, min_grades: int) -> bool:
    """Is the judge on this question good enough for a CI bar: κ's lower bound at least
    ``min_kappa`` on at least ``min_grades`` graded answers (judge.md)."""
    lower = kappa_lower(a)
    return a["n"] >= min_grades and lower is not None and lower + 1e-9 >= min_kappa


def corrected_rates(
    records: Sequence[RecordLike], grades: Mapping[tuple[str, str], Grade], level: float = 0.95
) -> dict[str, Any]:
    """Per question (``supported``, ``correct``): the judge's rate over every judged answer
    corrected by its error on the graded ones, as a :class:`~ragtriage.core.stats.PPIEstimate`
    — stratified PPI with the judge's verdict (it said yes / no) as the strata (judge.md).
    It stays valid when the grading queue picks answers by the judge's verdict (narrowest
    first), since each stratum is graded in the run's random order; PPI++ would need the
    graded answers to be a random sample of all. None with fewer than 2 graded answers;
    ``estimate`` None (unknown, with a worst-case interval) while a verdict the judge gave
    has fewer than 2 grades. The one estimator of ``ragtriage judge``, the reports,
    ``check`` and the app."""
    from ..stats import Stratum, ppi_stratified

    out: dict[str, Any] = {}
    graded = {case for case, _ in grades}
    for q in ("supported", "correct"):
        parts: dict[bool, tuple[list[float], list[float], list[float]]] = {}
        for rec in records:
            j = _verdict(rec)
            if j is None or not isinstance(j.get(q), bool):
                continue
            f = j[q]
            y, fg, fu = parts.setdefault(f, ([], [], []))
            g = grade_for(rec, grades) if rec.get("id") in graded else None
            human = None if g is None else (g.supported if q == "supported" else g.correct)
            if isinstance(human, bool):
                y.append(float(human))
                fg.append(float(f))
            else:
                fu.append(float(f))
        strata = [Stratum(tuple(y), tuple(fg), tuple(fu)) for _, (y, fg, fu) in sorted(parts.items())]
        out[q] = ppi_stratified(strata, level=level)
    return out


def refuse_unproven(
    metrics: Iterable[str], report: Mapping[str, Any], min_kappa: float, min_grades: int, where: str
) -> None:
    """InputError (exit 2) naming every judge metric whose judge is not proven on enough grades."""
    problems = []
    for metric in metrics:
        q = JUDGE_METRICS.get(metric)
        if q is None:
            continue
        a = report[q]
        kappa = a["kappa"]
        lower = kappa_lower(a)
        if not proven(a, min_kappa, min_grades):
            problems.append(
                Problem(
                    where,
                    None,
                    f"{metric}: refused: the judge's κ on {q} is {kappa_text(a)} on {a['n']} graded case(s); "
                    f"a bar on a judge metric needs the lower bound of κ's 95 % interval ≥ {min_kappa:g} "
                    f"on ≥ {min_grades} graded"
                    + ("" if kappa is None or lower is None else f" (it is {lower:.2f})")
                    + " (see `ragtriage judge`; grade more answers with g in triage, or try another judge)",
                )
            )
    if problems:
        raise InputError(problems)
