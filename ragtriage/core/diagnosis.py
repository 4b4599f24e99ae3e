"""Diagnosis: one reason per case, first match wins (evaluation.md).

The order is a fixed convention for comparing runs, not proof of cause: a
retrieval miss that was also answered wrongly is filed as ``retrieval-miss``.
"""

from __future__ import annotations

from .compat import StrEnum


class Reason(StrEnum):
    """The diagnosis reasons, in diagnosis order. A member *is* its string (``"retrieval-miss"``),
    so run files, summaries and comparisons with plain strings are unchanged."""

    ERROR = "error"
    UNLABELLED = "unlabelled"
    APPROPRIATE_ABSTENTION = "appropriate-abstention"
    UNANSWERABLE_ANSWERED = "unanswerable-answered"
    RETRIEVAL_MISS = "retrieval-miss"
    UNNECESSARY_ABSTENTION = "unnecessary-abstention"
    WRONG_ANSWER = "wrong-answer"
    UNSUPPORTED_ANSWER = "unsupported-answer"
    SUPPORTED_CORRECT = "supported-correct"


REASONS = tuple(r.value for r in Reason)
PASSING = frozenset({"appropriate-abstention", "supported-correct"})
NOT_SCORED = frozenset({"error", "unlabelled"})
# Triage order: failures first in diagnosis order, then the passing reasons, then the unscored.
TRIAGE_ORDER = (
    "unanswerable-answered",
    "retrieval-miss",
    "unnecessary-abstention",
    "wrong-answer",
    "unsupported-answer",
    "error",
    "unlabelled",
    "appropriate-abstention",
    "supported-correct",
)


def diagnose(
    *,
    error: bool,
    unanswerable: bool,
    unlabelled: bool,
    hit: bool | None,
    abstained: bool,
    correct: bool,
    supported: bool,
) -> Reason:
    """The one reason for a case."""
    if error:
        return Reason.ERROR
    if unlabelled:
        return Reason.UNLABELLED
    if unanswerable:
        return Reason.APPROPRIATE_ABSTENTION if abstained else Reason.UNANSWERABLE_ANSWERED
    if not hit:
        return Reason.RETRIEVAL_MISS
    if abstained:
        return Reason.UNNECESSARY_ABSTENTION
    if not correct:
        return Reason.WRONG_ANSWER
    if not supported:
        return Reason.UNSUPPORTED_ANSWER
    return Reason.SUPPORTED_CORRECT
