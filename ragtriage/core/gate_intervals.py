"""The gate's intervals (``check``): a 95 % interval on every summary rate and on every
bar's value, so a bar can be held to the lower bound (``--on lower``), and the slices
by tag and by topic (the markdown and JSON reports show them).

A judge metric's interval is the prediction-powered one of ``ragtriage judge`` (the
judge's rate corrected by its measured error on the graded answers, stratified by the
judge's verdict, judge.md); without two graded answers it has none, and a bar held to
its lower bound fails. While a verdict has fewer than two grades the interval is the
worst case there (any rate), so the lower bound stays valid, only low.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .gate import CheckResult
from .records import RecordLike


def _judge_intervals(doc: Any, records: Sequence[RecordLike]) -> dict[str, Any]:
    from .judge import JUDGE_METRICS, corrected_rates, grades_path, latest, read_grades

    grades, _ = read_grades([grades_path(doc.path)])
    corrected = corrected_rates(records, latest(grades))
    return {m: (None if corrected[q] is None else corrected[q].interval) for m, q in JUDGE_METRICS.items()}


def attach(result: CheckResult, doc: Any, *, cluster_by: str = "doc", on: str = "value") -> None:
    """Fill ``result.intervals`` and each bar's ``interval`` (and ``on``), in place."""
    from . import clusters as clus
    from .outcomes import case_values, value_table
    from .rates import cluster_codes, interval_of, slices, summary_intervals

    labels, how = clus.resolve(result.records, cluster_by, doc.corpus_path)
    table = value_table(result.records)  # built once for the summary and both kinds of slice
    every = None if labels is None else cluster_codes(result.records, labels)  # (so are these)
    result.intervals = summary_intervals(result.records, labels, table=table, every=every)
    tags_of = {c.id: list(c.tags) for c in doc.cases}
    result.slices = {
        by: got
        for by, got in (
            ("tag", slices(result.records, "tag", tags_of, labels, table=table, every=every)),
            ("topic", slices(result.records, "topic", None, labels, table=table, every=every)),
        )
        if any(s.name not in ("(no tag)", "(no topic)") for s in got)
    }
    judge_ivs: dict[str, Any] | None = None
    for b in result.bars:
        b.on = on
        if b.bar.name.startswith("judge_"):
            if judge_ivs is None:
                judge_ivs = _judge_intervals(doc, result.records)
            b.interval = judge_ivs.get(b.bar.name)
            continue
        b.interval = interval_of(case_values(result.records, b.bar.metric, run_k=result.k), labels)
    result.notes.append(f"95 % intervals: {how}")
