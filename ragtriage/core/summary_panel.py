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

PANEL_METRICS = (
    ("hit", "hit@{k}"),
    ("recall", "recall"),
    ("mrr", "mrr"),
    ("supported", "supported"),
    ("accuracy", "correct"),
    ("coverage", "coverage"),
)
#: with document gold (formats.md §5): a third line, k counting documents
PANEL_DOC_METRICS = (
    ("doc_hit", "doc_hit@{k}"),
    ("doc_recall", "doc_recall"),
    ("doc_mrr", "doc_mrr"),
)


@dataclass
class SummaryPanel:
    k: int
    rates: dict[str, float | None]
    intervals: dict[str, Interval]
    clusters: str  # how the intervals resampled (for the panel's last line)
    slices: dict[str, list[Slice]] = field(default_factory=dict)

    def _cell(self, m: str, label: str) -> str:
        v = self.rates.get(m)
        iv = self.intervals.get(m)
        shown = "—" if v is None else f"{v:.3f}" + ("" if iv is None else f" [{iv.lo:.2f}, {iv.hi:.2f}]")
        return f"{label.format(k=self.k)} {shown}"

    def lines(self, max_slices: int = 12) -> list[str]:
        from .safe_text import inline

        out = []
        cells = [self._cell(m, label) for m, label in PANEL_METRICS]
        out.append(" · ".join(cells[:3]))
        out.append(" · ".join(cells[3:]))
        if any(self.rates.get(m) is not None for m, _ in PANEL_DOC_METRICS):
            out.append(" · ".join(self._cell(m, label) for m, label in PANEL_DOC_METRICS))
        for by, rows in self.slices.items():
            if not rows or all(s.name in ("(no topic)", "(no tag)") for s in rows):
                continue
            out.append(f"by {by}:")
            for s in rows[:max_slices]:
                v, iv = s.rates.get("pass"), s.intervals.get("pass")
                pas = (
                    "—" if v is None else f"{v:.2f}" + ("" if iv is None else f" [{iv.lo:.2f}, {iv.hi:.2f}]")
                )
                out.append(f"  {inline(s.name)}  n {s.n} · pass {pas}")
            if len(rows) > max_slices:
                out.append(f"  … {len(rows) - max_slices} more (ragtriage run --by {by})")
        out.append(f"95 % intervals; {self.clusters}")
        return out


def summary_panel(
    records: Sequence[Mapping[str, Any]],
    k: int,
    summary: Mapping[str, Any],
    *,
    corpus_path: str | Path | None = None,
    tags_of: Mapping[str, Sequence[str]] | None = None,
    cluster_by: str = "doc",
) -> SummaryPanel:
    """Rates, intervals and slices of ``records`` (the triage state's, rescored)."""
    from . import clusters as clus
    from .rates import slices, summary_intervals

    labels, how = clus.resolve(records, cluster_by, corpus_path)
    return SummaryPanel(
        k=k,
        rates={m: summary.get(m) for m, _ in (*PANEL_METRICS, *PANEL_DOC_METRICS)},
        intervals=summary_intervals(records, labels),
        clusters=how,
        slices={
            "tag": slices(records, "tag", tags_of, labels),
            "topic": slices(records, "topic", None, labels),
        },
    )
