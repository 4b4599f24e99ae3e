"""Per-case values of every summary measure, so that a rate can carry an interval and
two runs can be compared case by case (evaluation.md, "Intervals and comparisons").

A summary rate (formats.md §5) is the mean of a per-case value over its own
denominator: ``hit`` is yes/no over the answerable cases, ``recall`` a score in
[0, 1] over the same cases, ``faithfulness`` yes/no over the answered ones, and so
on. :func:`case_values` gives those values and the ids they belong to, exactly the
cases :func:`~ragtriage.core.summary.summarize` counts; the mean of the values *is*
the summary's rate. ``pass`` (the case's reason is ``supported-correct`` or
``appropriate-abstention``) is the measure of the diff and the default comparison.

A case asked several times (``run --repeat N``) carries its later answers under
``repeats``: :func:`value` is then the mean over every answer (its pass share, a
score), which the comparison of two runs uses; :func:`case_values` keeps to the
first answers, whose figures the summary shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from .diagnosis import NOT_SCORED, PASSING
from .schema import AT_K_METRICS, parse_metric

#: measure -> (kind, which cases count). kind: "yes/no" or "score".
MEASURES: dict[str, tuple[str, str]] = {
    "pass": ("yes/no", "scored"),
    "hit": ("yes/no", "answerable"),
    "recall": ("score", "answerable"),
    "precision": ("score", "answerable"),
    "mrr": ("score", "answerable"),
    "doc_hit": ("yes/no", "documents"),
    "doc_recall": ("score", "documents"),
    "doc_precision": ("score", "documents"),
    "doc_mrr": ("score", "documents"),
    "supported": ("yes/no", "scored"),
    "faithfulness": ("yes/no", "answered"),
    "accuracy": ("yes/no", "scored"),
    "coverage": ("yes/no", "scored"),
    "unknown_abstention": ("yes/no", "unanswerable"),
}
RATE_METRICS = tuple(m for m in MEASURES if m != "pass")  # the summary's rates, in its order
#: what a paired comparison can take (faithfulness has a denominator that moves with the answers)
COMPARABLE = tuple(m for m in MEASURES if m != "faithfulness")


def unanswerable(rec: Mapping[str, Any]) -> bool:
    """As the summary decides it (an old record may lack the flag)."""
    return bool(rec.get("unanswerable")) or (
        rec.get("recall") is None and rec.get("reason") in ("appropriate-abstention", "unanswerable-answered")
    )


def chunk_gold(rec: Mapping[str, Any]) -> bool:
    """Is the case scored on chunks (an answerable case with ``expected`` ids; a case with
    document gold alone is not)? An old record without the field always was."""
    return bool(rec.get("expected")) or "expected" not in rec


def doc_gold(rec: Mapping[str, Any]) -> bool:
    """Is the case scored on documents (its record has the ``doc_*`` fields)?"""
    return "doc_hit" in rec


def _k_value(rec: Mapping[str, Any], name: str, k: int) -> float | None:
    from .metrics import retrieval

    if name.startswith("doc_"):
        ranking, gold, name = rec.get("doc_ranking") or (), rec.get("expected_docs") or (), name[4:]
    else:
        ranking, gold = rec.get("ranking") or (), rec.get("expected") or ()
    m = retrieval(ranking, gold, k, rec.get("expect") or "any")
    v = m["rr"] if name == "mrr" else m[name]
    return None if v is None else float(v)


def _counts_for(rec: Mapping[str, Any], who: str, unans: bool, abst: bool) -> bool:
    """Does a scored case count for a measure over ``who`` (MEASURES)?"""
    if who == "answerable":
        return not unans and chunk_gold(rec)
    if who == "documents":
        return doc_gold(rec)
    if who == "unanswerable":
        return unans
    return not (who == "answered" and abst)


def one_value(rec: Mapping[str, Any], name: str, k: int | None = None) -> float | None:
    """The value of measure ``name`` (at ``k`` for the retrieval ones, when given) for one
    answer, or None when the case does not count for it."""
    reason = rec.get("reason")
    if name == "pass":
        return None if reason == "unlabelled" else float(reason in PASSING)
    if reason in NOT_SCORED:
        return None
    _, who = MEASURES[name]
    unans = unanswerable(rec)
    abst = bool(rec.get("abstained"))
    if not _counts_for(rec, who, unans, abst):
        return None
    if name in AT_K_METRICS and k is not None:
        return _k_value(rec, name, k)
    if name.startswith("doc_"):
        v = rec.get("doc_rr" if name == "doc_mrr" else name)
        return float(bool(v)) if name == "doc_hit" else float(v or 0.0)
    if name == "mrr":
        return float(rec.get("rr") or 0.0)
    if name in ("recall", "precision"):
        return float(rec.get(name) or 0.0)
    if name == "hit":
        return float(bool(rec.get("hit")))
    if name in ("supported", "faithfulness"):
        return float(bool(rec.get("supported")))
    if name == "accuracy":
        return float(bool(rec.get("correct")))
    if name == "coverage":
        return float(not abst)
    return float(abst)  # unknown_abstention


def repeat_records(rec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The case's answer and every later repeat of it (``run --repeat``)."""
    extra = rec.get("repeats")
    if not isinstance(extra, list):
        return [rec]
    base = {
        key: rec.get(key)
        for key in ("expected", "expect", "expected_docs", "unanswerable", "question", "id")
        if key in rec
    }
    return [rec] + [{**base, **r} for r in extra if isinstance(r, dict)]


def value(rec: Mapping[str, Any], name: str, k: int | None = None) -> float | None:
    """:func:`one_value`, averaged over the repeats when the case has them."""
    reps = repeat_records(rec)
    if len(reps) == 1:
        return one_value(rec, name, k)
    vals = [v for v in (one_value(r, name, k) for r in reps) if v is not None]
    return sum(vals) / len(vals) if vals else None


@dataclass(frozen=True)
class Values:
    """Per-case values of one measure: ``ids[i]`` has ``values[i]``."""

    metric: str
    kind: str  # "yes/no" or "score" (a yes/no averaged over repeats is a score)
    ids: list[str]
    values: list[float]


def measure_of(metric: str) -> tuple[str, int | None]:
    """``'hit@5'`` -> ``('hit', 5)``; ``'pass'`` -> ``('pass', None)``; ValueError otherwise."""
    if metric == "pass":
        return "pass", None
    name, k = parse_metric(metric)
    if name not in MEASURES:
        raise ValueError(f"{metric!r}: no per-case value (one of: {', '.join(MEASURES)})")
    return name, k


def case_values(records: Sequence[Mapping[str, Any]], metric: str, run_k: int | None = None) -> Values:
    """The values behind the summary rate ``metric`` (``hit@5`` recomputed at 5 from the
    stored rankings); ``run_k``: the run's own k (no recomputation at it)."""
    name, k = measure_of(metric)
    if k == run_k:
        k = None
    ids, vals = [], []
    for r in records:
        v = one_value(r, name, k)  # the run's own (first) answers: the summary's figure
        if v is None:
            continue
        ids.append(r["id"])
        vals.append(v)
    return Values(metric, MEASURES[name][0], ids, vals)


def value_table(records: Sequence[Mapping[str, Any]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every summary rate's per-case values in one pass: metric -> (index of the records
    that count, their values), as numpy arrays; the same values :func:`one_value` gives
    (a test compares them), built without its per-value dispatch for 100k-case runs."""
    import numpy as np

    n = len(records)
    cols = {m: np.full(n, np.nan) for m in RATE_METRICS}
    hit, rec_, prec, mrr = cols["hit"], cols["recall"], cols["precision"], cols["mrr"]
    sup, faith, acc, cov, unk = (cols[m] for m in ("supported", "faithfulness", "accuracy", "coverage",
                                                   "unknown_abstention"))  # fmt: skip
    for i, r in enumerate(records):
        reason = r.get("reason")
        if reason in NOT_SCORED:
            continue
        abst = bool(r.get("abstained"))
        s = float(bool(r.get("supported")))
        sup[i] = s
        acc[i] = float(bool(r.get("correct")))
        cov[i] = 0.0 if abst else 1.0
        if not abst:
            faith[i] = s
        if unanswerable(r):
            unk[i] = float(abst)
            continue
        if chunk_gold(r):
            hit[i] = float(bool(r.get("hit")))
            rec_[i] = float(r.get("recall") or 0.0)
            prec[i] = float(r.get("precision") or 0.0)
            mrr[i] = float(r.get("rr") or 0.0)
        if doc_gold(r):
            cols["doc_hit"][i] = float(bool(r.get("doc_hit")))
            cols["doc_recall"][i] = float(r.get("doc_recall") or 0.0)
            cols["doc_precision"][i] = float(r.get("doc_precision") or 0.0)
            cols["doc_mrr"][i] = float(r.get("doc_rr") or 0.0)
    out = {}
    for m, col in cols.items():
        idx = np.flatnonzero(~np.isnan(col))
        out[m] = (idx, col[idx])
    return out
