"""The summary of a run (formats.md §5) from its case records.

Cases with reason ``unlabelled`` or ``error`` are counted but left out of every
ratio; each ratio has its own denominator and is null where that is empty.
``answerable`` and ``answered`` count the scored cases (the denominators).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .diagnosis import NOT_SCORED, REASONS
from .records import RecordLike, Summary

SUMMARY_KEYS = (
    "k",
    "n",
    "answerable",
    "answered",
    "unlabelled",
    "errors",
    "hit",
    "recall",
    "precision",
    "mrr",
    "supported",
    "faithfulness",
    "accuracy",
    "coverage",
    "unknown_abstention",
    "tokens",
    "reasons",
)


def _ratio(num: float, den: int) -> float | None:
    return None if den == 0 else num / den


def summarize(case_records: Iterable[RecordLike], k: int) -> Summary:
    """Exactly the keys of formats.md §5 (and judge.md's ``judge_*`` keys when a case has a verdict)."""
    case_records = case_records if isinstance(case_records, list) else list(case_records)
    out = _summarize(case_records, k)
    if any("judge" in r for r in case_records):
        from .judge import judge_summary

        out.update(judge_summary(case_records) or {})
    return out


def _summarize(case_records: list[RecordLike], k: int) -> Summary:
    n = unlabelled = errors = 0
    answerable = answered = scored = unanswerable = 0
    hits = 0
    recall = precision = rr = 0.0
    supported = faithful = correct = abstained_unans = 0
    tokens = 0
    any_tokens = False
    reasons: Counter = Counter()
    for r in case_records:
        n += 1
        reason = r.get("reason")
        reasons[reason] += 1
        t = r.get("tokens")
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            tokens += int(t)
            any_tokens = True
        if reason == "unlabelled":
            unlabelled += 1
        if reason == "error":
            errors += 1
        if reason in NOT_SCORED:
            continue
        scored += 1
        is_unans = bool(r.get("unanswerable")) or (
            r.get("recall") is None and reason in ("appropriate-abstention", "unanswerable-answered")
        )
        abst = bool(r.get("abstained"))
        sup = bool(r.get("supported"))
        if not abst:
            answered += 1
            if sup:
                faithful += 1
        if sup:
            supported += 1
        if r.get("correct"):
            correct += 1
        if is_unans:
            unanswerable += 1
            if abst:
                abstained_unans += 1
        else:
            answerable += 1
            if r.get("hit"):
                hits += 1
            recall += r.get("recall") or 0.0
            precision += r.get("precision") or 0.0
            rr += r.get("rr") or 0.0
    ordered = {name: reasons[name] for name in REASONS if reasons.get(name)}
    for name, c in reasons.items():  # unknown reasons are kept, never lost
        if name not in ordered and c:
            ordered[str(name)] = c
    return {
        "k": k,
        "n": n,
        "answerable": answerable,
        "answered": answered,
        "unlabelled": unlabelled,
        "errors": errors,
        "hit": _ratio(hits, answerable),
        "recall": _ratio(recall, answerable),
        "precision": _ratio(precision, answerable),
        "mrr": _ratio(rr, answerable),
        "supported": _ratio(supported, scored),
        "faithfulness": _ratio(faithful, answered),
        "accuracy": _ratio(correct, scored),
        "coverage": _ratio(answered, scored),
        "unknown_abstention": _ratio(abstained_unans, unanswerable),
        "tokens": tokens if any_tokens else None,
        "reasons": ordered,
    }
