"""The summary a person reads in a terminal panel (the app's ``i`` in Triage): every
rate with its 95 % interval, then the slices by tag and by topic, as plain lines.

Textual-free, for the app to call from a worker (the app shows the lines as text,
never as markup). The CLI's ``run`` prints the same figures in its own tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .rates import Slice
from .stats import Interval

#: every rate of ``ragtriage run``'s summary table, in its order (label; {k} is the run's k)
PANEL_METRICS = (
    ("hit", "hit@{k}"),
    ("recall", "recall@{k}"),
    ("mrr", "mrr@{k}"),
    ("precision", "precision@{k}"),
    ("supported", "supported"),
    ("faithfulness", "faithfulness"),
    ("accuracy", "correct"),
    ("coverage", "coverage"),
    ("unknown_abstention", "unknown abstention"),
)
CHUNK_METRICS = ("hit", "recall", "mrr", "precision")
#: with document gold (formats.md §5): k counting documents
PANEL_DOC_METRICS = (
    ("doc_hit", "doc_hit@{k}"),
    ("doc_recall", "doc_recall@{k}"),
    ("doc_precision", "doc_precision@{k}"),
    ("doc_mrr", "doc_mrr@{k}"),
)
#: a slice's metrics (rates.SLICE_METRICS) as the panel names them
SLICE_LABELS = {"pass": "pass", "hit": "hit@{k}", "supported": "supported", "accuracy": "correct",
                "recall": "recall@{k}", "mrr": "mrr@{k}", "doc_hit": "doc_hit@{k}"}  # fmt: skip
COLUMN = 39  # two cells a line: the widest (unknown abstention) is 37 wide, so 80 columns hold it


def cell(label: str, v: float | None, iv: Interval | None) -> str:
    """``hit@3 0.850 [0.80, 0.89]``."""
    shown = "—" if v is None else f"{v:.3f}" + ("" if iv is None else f" [{iv.lo:.2f}, {iv.hi:.2f}]")
    return f"{label} {shown}"


def two_columns(cells: Sequence[str], indent: str = "", width: int = COLUMN) -> list[str]:
    """Cells two to a line, the first padded to ``width``."""
    out = []
    for i in range(0, len(cells), 2):
        pair = cells[i : i + 2]
        out.append(indent + (pair[0].ljust(width) + pair[1] if len(pair) == 2 else pair[0]).rstrip())
    return out


@dataclass
class SummaryPanel:
    k: int
    rates: dict[str, float | None]
    intervals: dict[str, Interval]
    clusters: str  # how the intervals resampled (for the panel's last line)
    slices: dict[str, list[Slice]] = field(default_factory=dict)
    chunk_gold: bool = True  # False: a set labelled by documents alone (no chunk rates to show)

    def _cell(self, m: str, label: str) -> str:
        return cell(label.format(k=self.k), self.rates.get(m), self.intervals.get(m))

    def rate_lines(self) -> list[str]:
        """Every summary rate with its interval, two to a line."""
        shown = [(m, label) for m, label in PANEL_METRICS if self.chunk_gold or m not in CHUNK_METRICS]
        if any(self.rates.get(m) is not None for m, _ in PANEL_DOC_METRICS):
            at = 4 if self.chunk_gold else 0
            shown[at:at] = list(PANEL_DOC_METRICS)
        return two_columns([self._cell(m, label) for m, label in shown])

    def slice_lines(self, max_slices: int = 12) -> list[str]:
        """Per tag and per topic: the name and n, then each metric with its interval."""
        from .safe_text import inline

        out = []
        for by, rows in self.slices.items():
            if not rows or all(s.name in ("(no topic)", "(no tag)") for s in rows):
                continue
            out.append(
                f"by {by} (95 % intervals"
                + ("; a case with several tags is in each):" if by == "tag" else "):")
            )
            for s in rows[:max_slices]:
                out.append(f"  {inline(s.name)}  n {s.n}")
                cells = [
                    cell(label.format(k=self.k), s.rates[m], s.intervals.get(m))
                    for m, label in SLICE_LABELS.items()
                    if m in s.rates
                ]
                out += two_columns(cells, indent="    ", width=COLUMN - 4)
            if len(rows) > max_slices:
                out.append(f"  … {len(rows) - max_slices} more (ragtriage run --by {by})")
        return out

    def lines(self, max_slices: int = 12) -> list[str]:
        return [*self.rate_lines(), f"95 % intervals; {self.clusters}", *self.slice_lines(max_slices)]


def summary_panel(
    records: Sequence[Mapping[str, Any]],
    k: int,
    summary: Mapping[str, Any],
    *,
    corpus_path: str | Path | None = None,
    tags_of: Mapping[str, Sequence[str]] | None = None,
    cluster_by: str = "doc",
    docs: Mapping[str, str] | None = None,
) -> SummaryPanel:
    """Rates, intervals and slices of ``records`` (the triage state's, rescored), resampled
    as ``ragtriage run --cluster CLUSTER_BY`` does; ``docs``: chunk id -> ``doc`` from a
    corpus in memory (else the corpus file is read for them)."""
    from . import clusters as clus
    from .outcomes import value_table
    from .rates import slices, summary_intervals

    labels, how = clus.resolve(records, cluster_by, corpus_path, docs)
    table = value_table(records)  # once for the summary and both kinds of slice
    return SummaryPanel(
        k=k,
        rates={m: summary.get(m) for m, _ in (*PANEL_METRICS, *PANEL_DOC_METRICS)},
        intervals=summary_intervals(records, labels, table=table),
        clusters=how,
        chunk_gold=summary.get("with_chunks", 1) != 0,
        slices={
            "tag": slices(records, "tag", tags_of, labels, table=table),
            "topic": slices(records, "topic", None, labels, table=table),
        },
    )
