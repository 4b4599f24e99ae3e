"""Diagnosis: one reason per case, first match wins (evaluation.md).

The order is a fixed convention for comparing runs, not proof of cause: a
retrieval miss that was also answered wrongly is filed as ``retrieval-miss``.
"""

from __future__ import annotations

REASONS = (
    "error",
    "unlabelled",
    "appropriate-abstention",
    "unanswerable-answered",
    "retrieval-miss",
    "unnecessary-abstention",
    "wrong-answer",
    "unsupported-answer",
    "supported-correct",
)
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
) -> str:
    """The one reason for a case."""
    if error:
        return "error"
    if unlabelled:
        return "unlabelled"
    if unanswerable:
        return "appropriate-abstention" if abstained else "unanswerable-answered"
    if not hit:
        return "retrieval-miss"
    if abstained:
        return "unnecessary-abstention"
    if not correct:
        return "wrong-answer"
    if not supported:
        return "unsupported-answer"
    return "supported-correct"


def is_failure(reason: str) -> bool:
    return reason not in PASSING
