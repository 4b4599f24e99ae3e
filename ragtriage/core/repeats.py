"""A case asked several times (``run --repeat N``), for systems that do not answer the
same way twice.

The run file keeps one line per case, as always: the first answer's record, so every
reader (triage, check, diff, the reports) sees an ordinary run. Its later answers go
under ``repeats`` (a list of the scored fields of each), with ``pass_share`` (the
share of the N answers that pass) and ``flaky`` (passes some times and fails others).
The comparison of two runs averages within a case (:mod:`ragtriage.core.outcomes`),
so it resamples cases, never repeats. The summary keeps the first answers' figures
and adds ``repeats``: ``{"n": N, "flaky": cases, "pass_share": mean over cases}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .diagnosis import PASSING

#: what each later answer keeps: enough to score it again at any k and to show it
KEPT = ("reason", "ranking", "answer", "rank", "hit", "precision", "recall", "rr", "abstained",
        "supported", "correct", "why", "error", "tokens", "latency_ms",
        "doc_ranking", "doc_rank", "doc_hit", "doc_precision", "doc_recall", "doc_rr")  # fmt: skip


def compact(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {key: rec[key] for key in KEPT if key in rec}


def merge(
    first: Sequence[dict[str, Any]], later: Sequence[Sequence[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    """The first run's records, each with its later answers (by id), pass share and flaky flag.
    A case missing from a later repeat counts as an error there."""
    by_id = [{r["id"]: r for r in rs} for rs in later]
    out = []
    for rec in first:
        rec = dict(rec)
        extra = [
            compact(m.get(rec["id"]) or {"reason": "error", "error": "no answer in this repeat"})
            for m in by_id
        ]
        rec["repeats"] = extra
        if rec.get("reason") not in ("unlabelled",):
            reasons = [rec.get("reason")] + [e.get("reason") for e in extra]
            share = sum(1 for r in reasons if r in PASSING) / len(reasons)
            rec["pass_share"] = share
            rec["flaky"] = 0.0 < share < 1.0
        out.append(rec)
    return out


def summary_block(records: Sequence[Mapping[str, Any]], n: int) -> dict[str, Any]:
    """The summary's ``repeats``: N, how many cases are flaky, the mean pass share."""
    shares = [r["pass_share"] for r in records if "pass_share" in r]
    return {
        "n": n,
        "flaky": sum(1 for r in records if r.get("flaky")),
        "pass_share": (sum(shares) / len(shares)) if shares else None,
    }
