"""Everything the HTML report shows, gathered from a judged run (the gate's
:class:`~ragtriage.core.gate.CheckResult`), its test set and, optionally, a
baseline run: the intervals, slices, sweep, comparison and judge figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import utc_now
from ..comparison import RunComparison
from ..gate import CheckResult
from ..rates import Slice
from ..stats import Interval

SWEEP_MAX_K = 20


@dataclass
class ChunkInfo:
    text: str
    doc: str | None = None


@dataclass
class ReportData:
    result: CheckResult
    tags_of: dict[str, list[str]]
    intervals: dict[str, Interval]
    slices: dict[str, list[Slice]]  # "tag" / "topic" -> slices
    sweep_ks: list[int]
    sweep: dict[str, list[float | None]]
    chunks: dict[str, ChunkInfo]
    clusters_note: str
    comparison: RunComparison | None = None
    baseline: str | None = None
    judge: dict[str, Any] | None = None  # calibration report + "corrected" (PPI) when grades exist
    generated: str = field(default_factory=utc_now)
    title: str = "ragtriage report"


def sweep_of(
    records: Sequence[Mapping[str, Any]], run_k: int
) -> tuple[list[int], dict[str, list[float | None]]]:
    """hit, recall, mrr and precision at every k from 1 to the rankings' depth (at most 20,
    and at least the run's k), from the stored rankings: no new call."""
    from ..metrics import retrieval_means, stored_positions

    depth = max((len(r.get("ranking") or ()) for r in records), default=0)
    kmax = max(min(depth, SWEEP_MAX_K), min(run_k, SWEEP_MAX_K), 1)
    pos = stored_positions(records)
    ks = list(range(1, kmax + 1))
    curves: dict[str, list[float | None]] = {"hit": [], "recall": [], "mrr": [], "precision": []}
    for k in ks:
        m = retrieval_means(pos, k)
        for name in curves:
            curves[name].append(m[name])
    return ks, curves


def wanted_chunks(result: CheckResult) -> set[str]:
    """The chunk ids a failing case shows: its expected ones and its top k."""
    out: set[str] = set()
    for r in result.failures():
        out.update(r.get("expected") or ())
        out.update((r.get("ranking") or ())[: result.k])
    return out


def chunk_texts(corpus_path: str | Path | None, ids: set[str]) -> dict[str, ChunkInfo]:
    """Text and document of the chunks named (streamed; {} without a readable corpus)."""
    if corpus_path is None or not ids:
        return {}
    from ..corpus import iter_chunks
    from ..errors import CorpusError

    out: dict[str, ChunkInfo] = {}
    try:
        for ch in iter_chunks(corpus_path, problems=[]):
            if ch.id in ids:
                out[ch.id] = ChunkInfo(ch.text, ch.doc if isinstance(ch.doc, str) else None)
    except (CorpusError, OSError):
        pass
    return out


def judge_figures(doc: Any, records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The calibration report and the PPI-corrected rates, when the run has judge verdicts."""
    if not any("judge" in r for r in records):
        return None
    from ..judge import calibrate, corrected_rates, grades_path, latest, read_grades

    grades, _ = read_grades([grades_path(doc.path)])
    table = latest(grades)
    report = calibrate(records, table)
    report["corrected"] = corrected_rates(records, table)
    return report


def gather(
    doc: Any,
    result: CheckResult,
    *,
    cluster_by: str = "doc",
    comparison: RunComparison | None = None,
    baseline: str | None = None,
    clusters: Mapping[str, str] | None = None,
    clusters_note: str | None = None,
) -> ReportData:
    """The report's data for ``result`` (records already judged against ``doc``)."""
    from .. import clusters as clus
    from ..outcomes import value_table
    from ..rates import slices, summary_intervals

    records = result.records
    how = clusters_note or ""
    if clusters is None:
        clusters, how = clus.resolve(records, cluster_by, doc.corpus_path)
    tags_of = {c.id: list(c.tags) for c in doc.cases}
    ks, curves = sweep_of(records, result.k)
    table = value_table(records)  # once for the summary and both kinds of slice
    return ReportData(
        result=result,
        tags_of=tags_of,
        intervals=summary_intervals(records, clusters, table=table),
        slices={
            "tag": slices(records, "tag", tags_of, clusters, table=table),
            "topic": slices(records, "topic", None, clusters, table=table),
        },
        sweep_ks=ks,
        sweep=curves,
        chunks=chunk_texts(doc.corpus_path, wanted_chunks(result)),
        clusters_note=how or clus.describe(clusters, cluster_by),
        comparison=comparison,
        baseline=baseline,
        judge=judge_figures(doc, records),
    )
