"""A 95 % interval on every summary rate, and the summary per slice (tag or topic).

The rule (evaluation.md, "Intervals"): a yes/no rate over independent cases gets the
Wilson interval; where cases share a cluster (the gold's document, or the topic),
the cluster bootstrap of the rate, never narrower than Wilson. A score's mean
(recall, precision, mrr) gets the bootstrap over cases or clusters; with fewer than
``FEW_UNITS`` resampled units (the percentile bootstrap is known to be too narrow
there) or when every case has the same score (the resampling then has nothing to
show), it is never narrower than the Wilson interval at that mean and n, the widest
a [0, 1] measure can need.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .diagnosis import PASSING
from .outcomes import RATE_METRICS, Values
from .stats import Interval, bootstrap_mean, codes, wilson

FEW_UNITS = 30


def interval_of(
    vals: Values, clusters: Mapping[str, str] | None = None, level: float = 0.95
) -> Interval | None:
    """The interval of the mean of ``vals`` (None when there is no case)."""
    c = None
    if clusters is not None:
        c = codes([clusters.get(i, f"case:{i}") for i in vals.ids])
    return _interval(np.asarray(vals.values, dtype=float), c, vals.kind, level)


def _interval(v: np.ndarray, c: np.ndarray | None, kind: str, level: float) -> Interval | None:
    """The rule of the module doc for values ``v`` and cluster codes ``c`` (None: independent)."""
    n = len(v)
    if n == 0:
        return None
    w = wilson(float(v.sum()), n, level)
    units = n
    if c is not None:
        c = np.unique(c, return_inverse=True)[1]
        units = int(c.max()) + 1
        if units == n:
            c = None
    if c is None and kind == "yes/no":
        return w
    if v.min() == v.max():
        return Interval(w.lo, w.hi, level, w.method + " (every case the same)")
    iv = bootstrap_mean(v, c, level=level, bounds=(0.0, 1.0))
    return iv.widened(w) if kind == "yes/no" or units < FEW_UNITS else iv


def summary_intervals(
    records: Sequence[Mapping[str, Any]],
    clusters: Mapping[str, str] | None = None,
    metrics: Sequence[str] = RATE_METRICS,
    level: float = 0.95,
    table: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    every: np.ndarray | None = None,
) -> dict[str, Interval]:
    """Interval of every summary rate that has a case (key = metric); ``table`` and
    ``every``: the records' :func:`~.outcomes.value_table` and :func:`cluster_codes` when
    the caller has them already."""
    from .outcomes import MEASURES, value_table

    if every is None and clusters is not None:
        every = cluster_codes(records, clusters)
    out = {}
    for m, (idx, vals) in (value_table(records) if table is None else table).items():
        if m not in metrics:
            continue
        iv = _interval(vals, None if every is None else every[idx], MEASURES[m][0], level)
        if iv is not None:
            out[m] = iv
    return out


def cluster_codes(records: Sequence[Mapping[str, Any]], clusters: Mapping[str, str]) -> np.ndarray:
    """Each record's cluster as an integer code (first seen -> 0; a case outside
    ``clusters`` is its own)."""
    return codes([clusters.get(r["id"], "case:" + r["id"]) for r in records])


@dataclass
class Slice:
    """The summary of the cases with one tag (or one topic)."""

    by: str  # "tag" or "topic"
    name: str
    n: int
    rates: dict[str, float] = field(default_factory=dict)
    intervals: dict[str, Interval] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "name": self.name,
            "n": self.n,
            "rates": dict(self.rates),
            "intervals": {k: v.to_dict() for k, v in self.intervals.items()},
            "reasons": dict(self.reasons),
        }


#: doc_hit only where cases have document gold (a slice without any has no doc_hit rate)
SLICE_METRICS = ("pass", "hit", "supported", "accuracy", "recall", "mrr", "doc_hit")


def slice_columns(got: Sequence[Slice]) -> tuple[str, ...]:
    """The slice metrics these slices have a value for, in :data:`SLICE_METRICS` order
    (doc_hit drops out of a run without document gold, hit out of one without chunk gold)."""
    return tuple(
        m for m in SLICE_METRICS if m in ("pass", "supported", "accuracy") or any(m in s.rates for s in got)
    )


def slice_members(
    records: Sequence[Mapping[str, Any]], by: str, tags_of: Mapping[str, Sequence[str]] | None = None
) -> dict[str, list[Mapping[str, Any]]]:
    """Slice name -> its records (a case with several tags is in each; untagged cases
    form ``(no tag)``; ``by`` is ``tag`` or ``topic``)."""
    return {name: [records[i] for i in rows] for name, rows in slice_rows(records, by, tags_of).items()}


def slice_rows(
    records: Sequence[Mapping[str, Any]], by: str, tags_of: Mapping[str, Sequence[str]] | None = None
) -> dict[str, list[int]]:
    """:func:`slice_members` as positions in ``records``."""
    groups: dict[str, list[int]] = {}
    if by == "topic":
        for i, r in enumerate(records):
            groups.setdefault(str(r.get("topic") or "(no topic)"), []).append(i)
    else:
        tags = tags_of or {}
        for i, r in enumerate(records):
            names = tags.get(r["id"]) or r.get("tags") or ("(no tag)",)
            for name in dict.fromkeys(names) if len(names) > 1 else names:
                groups.setdefault(str(name), []).append(i)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0].startswith("("), kv[0])))


def slices(
    records: Sequence[Mapping[str, Any]],
    by: str,
    tags_of: Mapping[str, Sequence[str]] | None = None,
    clusters: Mapping[str, str] | None = None,
    metrics: Sequence[str] = SLICE_METRICS,
    level: float = 0.95,
    table: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    every: np.ndarray | None = None,
) -> list[Slice]:
    """Every slice with n, its rates and their intervals: the values :func:`interval_of`
    gets from ``case_values`` of the slice's records, taken from one table of the whole run
    (a slice per topic of a 100k-case run is thousands of slices); ``every``: the records'
    :func:`cluster_codes` when the caller has them already."""
    from collections import Counter

    from .outcomes import MEASURES, value_table

    table = dict(value_table(records) if table is None else table)  # "pass" is added to a copy
    reasons = [r.get("reason") for r in records]
    pass_idx = [i for i, x in enumerate(reasons) if x != "unlabelled"]
    table["pass"] = (
        np.asarray(pass_idx, dtype=np.int64),
        np.fromiter((float(reasons[i] in PASSING) for i in pass_idx), float, len(pass_idx)),
    )
    named = list(map(str, reasons))
    if every is None and clusters is not None:
        every = cluster_codes(records, clusters)
    # per measure, where each record's value is in its table (−1: it does not count), so a
    # slice costs its own size, not the run's (thousands of topics × 100k cases otherwise)
    where = {}
    for m in metrics:
        idx = table[m][0]
        w = np.full(len(records), -1, dtype=np.int64)
        w[idx] = np.arange(len(idx))
        where[m] = w
    out = []
    for name, rows in slice_rows(records, by, tags_of).items():
        s = Slice(by, name, len(rows), reasons=dict(Counter(map(named.__getitem__, rows))))
        at = np.asarray(rows, dtype=np.int64)
        for m in metrics:
            idx, vals = table[m]
            pos = where[m][at]
            pos = pos[pos >= 0]
            if not len(pos):
                continue
            v = vals[pos]
            s.rates[m] = sum(v.tolist()) / len(v)  # added in case order, as before
            c = None if every is None else _first_seen(every[idx[pos]])
            iv = _interval(v, c, MEASURES[m][0], level)
            if iv is not None:
                s.intervals[m] = iv
        out.append(s)
    return out


def _first_seen(c: np.ndarray) -> np.ndarray:
    """Cluster codes renumbered by first appearance (as :func:`.stats.codes` numbers the
    labels of these cases alone), so a slice resamples exactly as on its own."""
    _, first, inv = np.unique(c, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inv.reshape(-1)]
