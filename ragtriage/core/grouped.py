"""Warnings that would repeat once per case, said once: labels not recorded yet.

A new test set (``init``, ``import``, cases written by hand) has expected chunks whose
text nobody recorded; ``stale`` calls them ``unrecorded``. That is one condition with one
fix, however many cases share it: ``validate``, ``check`` and ``stale`` print one line
with the counts and the fix instead of a line per case."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import Any

UNRECORDED = "unrecorded"


def _get(e: Any, name: str) -> Any:
    return e.get(name) if isinstance(e, dict) else getattr(e, name, None)


def split_unrecorded(entries: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """``(unrecorded, others)``: the stale entries whose label is merely not recorded yet
    (and not already fixed), and every other entry, each in the order given."""
    unrecorded, others = [], []
    for e in entries:
        if _get(e, "status") == UNRECORDED and not _get(e, "fixed"):
            unrecorded.append(e)
        else:
            others.append(e)
    return unrecorded, others


def counts(entries: Iterable[Any]) -> tuple[int, int]:
    """How many distinct labels and cases ``entries`` concern."""
    labels, cases = set(), set()
    for e in entries:
        labels.add(_get(e, "label"))
        cases.add(_get(e, "case"))
    return len(labels), len(cases)


def unrecorded_message(entries: list[Any], testset: object) -> str:
    """One sentence for every unrecorded label: how many, in how many cases, and the fix."""
    n_labels, n_cases = counts(entries)
    labels = f"{n_labels:,} label{'s' * (n_labels != 1)}"
    cases = f"{n_cases:,} case{'s' * (n_cases != 1)}"
    return (
        f"{labels} not recorded yet (expected by {cases}): nothing remembers what those chunks said, so a "
        f"re-chunking could not be caught; record them all with `ragtriage stale {shlex.quote(str(testset))} "
        "--fix`, or save the test set in the app (ctrl+s)"
    )
