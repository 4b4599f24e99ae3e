"""The summary of a run (formats.md §5) from its case records.

Cases with reason ``unlabelled`` or ``error`` are counted but left out of every
ratio; each ratio has its own denominator and is null where that is empty.
``answerable`` and ``answered`` count the scored cases (the denominators); of the
answerable ones, ``with_chunks`` have chunk gold (``expected``, or quotes that resolved:
the denominator of hit, recall, precision, mrr) and ``with_docs`` document gold (of the
``doc_*`` rates).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .diagnosis import NOT_SCORED, REASONS
from .records import RecordLike, Summary

#: with document gold (a case has ``expected_docs``), after ``mrr``: DOC_SUMMARY_KEYS
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

DOC_SUMMARY_KEYS = ("doc_hit", "doc_recall", "doc_precision", "doc_mrr", "with_chunks", "with_docs")


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


class _Found:
    """The retrieval rates of one level (chunks, or documents with ``doc_`` keys)."""

    __slots__ = ("n", "hits", "recall", "precision", "rr")

    def __init__(self) -> None:
        self.n = self.hits = 0
        self.recall = self.precision = self.rr = 0.0

    def add(self, r: RecordLike, pre: str = "") -> None:
        self.n += 1
        if r.get(pre + "hit"):
            self.hits += 1
        self.recall += r.get(pre + "recall") or 0.0
        self.precision += r.get(pre + "precision") or 0.0
        self.rr += r.get(pre + "rr") or 0.0

    def rates(self, pre: str = "") -> dict[str, float | None]:
        n = self.n
        return {
            pre + "hit": _ratio(self.hits, n),
            pre + "recall": _ratio(self.recall, n),
            pre + "precision": _ratio(self.precision, n),
            pre + "mrr": _ratio(self.rr, n),
        }


def _found(r: RecordLike, chunks: _Found, docs: _Found) -> None:
    """An answerable case's retrieval, at each level it has gold for."""
    if r.get("expected") or "expected" not in r:  # chunk gold (an old record: always)
        chunks.add(r)
    if "doc_hit" in r:  # document gold, scored
        docs.add(r, "doc_")


def _ordered(reasons: Counter[str | None]) -> dict[str, int]:
    """Reason counts in diagnosis order; unknown reasons are kept, never lost."""
    ordered = {name: reasons[name] for name in REASONS if reasons.get(name)}
    for name, c in reasons.items():
        if name not in ordered and c:
            ordered[str(name)] = c
    return ordered


def _summarize(case_records: list[RecordLike], k: int) -> Summary:
    n = unlabelled = errors = 0
    answerable = answered = scored = unanswerable = 0
    chunks, docs = _Found(), _Found()
    with_docs = False  # a case has document gold: the doc_* keys are written
    supported = faithful = correct = abstained_unans = 0
    tokens = 0
    any_tokens = False
    reasons: Counter[str | None] = Counter()
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
        if r.get("expected_docs"):
            with_docs = True
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
            _found(r, chunks, docs)
    ordered = _ordered(reasons)
    return {
        "k": k,
        "n": n,
        "answerable": answerable,
        "answered": answered,
        "unlabelled": unlabelled,
        "errors": errors,
        **chunks.rates(),
        **(dict(docs.rates("doc_"), with_chunks=chunks.n, with_docs=docs.n) if with_docs else {}),
        "supported": _ratio(supported, scored),
        "faithfulness": _ratio(faithful, answered),
        "accuracy": _ratio(correct, scored),
        "coverage": _ratio(answered, scored),
        "unknown_abstention": _ratio(abstained_unans, unanswerable),
        "tokens": tokens if any_tokens else None,
        "reasons": ordered,
    }
