"""Two runs of one test set compared case by case, with a test, an interval and one
of three named verdicts (evaluation.md, "Comparing two runs"); what ``diff`` and
``check --baseline`` print.

Cases are paired by id. A case that errored or is missing in either run counts as a
failure there, and the unmatched ids are listed; unlabelled drafts count for
neither. The labels (answerable or not) are run B's, the run being judged. A case
asked several times (``run --repeat``) is averaged within the case first, so the
comparison resamples cases, never repeats.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .outcomes import COMPARABLE, MEASURES, chunk_gold, doc_gold, measure_of, unanswerable, value
from .stats import (
    INCONCLUSIVE,
    NO_REGRESSION,
    REGRESSION,
    Comparison,
    GateVerdict,
    benjamini_hochberg,
    codes,
    compare_binary,
    compare_scores,
    decide,
    detectable_change,
)

DEFAULT_ALPHA = 0.05


@dataclass
class Options:
    """How two runs are compared (``--alpha``, ``--margin``, ``--conservative``, ``--cluster``)."""

    alpha: float = DEFAULT_ALPHA
    margin: float = 0.0
    conservative: bool = False
    cluster_by: str = "doc"


@dataclass
class SliceComparison:
    """One tag's comparison of the first gated measure (exploratory: BH across tags)."""

    name: str
    comparison: Comparison
    q: float = math.nan  # Benjamini–Hochberg adjusted p

    def to_dict(self) -> dict[str, Any]:
        return {"tag": self.name, "q": self.q, **self.comparison.to_dict()}


@dataclass
class RunComparison:
    gate: GateVerdict
    options: Options
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    clusters_note: str = ""
    same_system: bool = False  # an A/A comparison: the same system on the same test set
    noise_floor: float | None = None  # A/A: the smallest change the flips between the two allow
    slices: list[SliceComparison] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return self.gate.verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.gate.to_dict(),
            "conservative": self.options.conservative,
            "cluster_by": self.options.cluster_by,
            "clusters": self.clusters_note,
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "a_a": self.same_system,
            "noise_floor": self.noise_floor,
            "slices": [s.to_dict() for s in self.slices],
        }


def _counts(ref: Mapping[str, Any], name: str) -> bool:
    """Does the case count for measure ``name``, by the labels of its record ``ref``?"""
    if ref.get("reason") == "unlabelled":
        return False
    who = MEASURES[name][1]
    if who == "answerable":
        return not unanswerable(ref) and chunk_gold(ref)
    if who == "documents":
        return doc_gold(ref)
    if who == "unanswerable":
        return unanswerable(ref)
    return True


def _value_in(rec: Mapping[str, Any] | None, name: str, k: int | None, run_k: int | None) -> float:
    if rec is None or rec.get("reason") == "error":
        return 0.0
    v = value(rec, name, None if k == run_k else k)
    return 0.0 if v is None else v


def paired_values(
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    metric: str,
    k_a: int | None = None,
    k_b: int | None = None,
    ids: Sequence[str] | None = None,
) -> tuple[list[str], np.ndarray, np.ndarray, bool]:
    """(ids, values in A, values in B, repeated) of ``metric`` over the cases that count for
    it; missing and errored cases are 0. ``ids`` limits the cases (a tag's)."""
    name, k = measure_of(metric)
    if name not in COMPARABLE:
        raise ValueError(f"{metric!r} cannot be compared case by case (its cases change with the answers)")
    by_a = {r["id"]: r for r in a}
    by_b = {r["id"]: r for r in b}
    order = list(ids) if ids is not None else list(dict.fromkeys([*by_a, *by_b]))
    keep, va, vb = [], [], []
    repeated = False
    for cid in order:
        ra, rb = by_a.get(cid), by_b.get(cid)
        ref = rb if rb is not None else ra
        if ref is None or not _counts(ref, name):
            continue
        keep.append(cid)
        va.append(_value_in(ra, name, k, k_a))
        vb.append(_value_in(rb, name, k, k_b))
        repeated = repeated or bool(ra and "repeats" in ra) or bool(rb and "repeats" in rb)
    return keep, np.array(va, dtype=float), np.array(vb, dtype=float), repeated


def compare_metric(
    metric: str,
    ids: list[str],
    va: np.ndarray,
    vb: np.ndarray,
    repeated: bool,
    clusters: Mapping[str, str] | None,
    opts: Options,
) -> Comparison:
    c = codes([clusters.get(i, f"case:{i}") for i in ids]) if clusters else None
    level = 1.0 - opts.alpha
    if MEASURES[measure_of(metric)[0]][0] == "yes/no" and not repeated:
        return compare_binary(metric, va > 0.5, vb > 0.5, c, level=level, conservative=opts.conservative)
    return compare_scores(metric, va, vb, c, level=level)


def compare_runs(
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    metrics: Sequence[str] = ("pass",),
    *,
    k_a: int | None = None,
    k_b: int | None = None,
    clusters: Mapping[str, str] | None = None,
    clusters_note: str = "",
    options: Options | None = None,
    tags_of: Mapping[str, Sequence[str]] | None = None,
    same_system: bool = False,
) -> RunComparison:
    """Compare ``metrics`` (Holm across them) of runs A and B; per tag, the first metric
    (BH across tags, exploratory)."""
    opts = options or Options()
    ids_a = {r["id"] for r in a}
    ids_b = {r["id"] for r in b}
    comps = []
    for m in metrics:
        ids, va, vb, rep = paired_values(a, b, m, k_a, k_b)
        comps.append(compare_metric(m, ids, va, vb, rep, clusters, opts))
    gate = decide(comps, alpha=opts.alpha, margin=opts.margin)
    out = RunComparison(
        gate,
        opts,
        only_a=[r["id"] for r in a if r["id"] not in ids_b],
        only_b=[r["id"] for r in b if r["id"] not in ids_a],
        clusters_note=clusters_note,
        same_system=same_system,
    )
    if same_system and comps:
        first = comps[0]
        out.noise_floor = detectable_change(first.diffs, first.cluster_codes, alpha=opts.alpha)
    if tags_of and metrics:
        out.slices = _tag_slices(a, b, metrics[0], k_a, k_b, clusters, opts, tags_of)
    return out


def _tag_slices(
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    metric: str,
    k_a: int | None,
    k_b: int | None,
    clusters: Mapping[str, str] | None,
    opts: Options,
    tags_of: Mapping[str, Sequence[str]],
) -> list[SliceComparison]:
    from .rates import slice_members

    recs = list({r["id"]: r for r in [*a, *b]}.values())
    groups = slice_members(recs, "tag", tags_of)
    if list(groups) == ["(no tag)"]:
        return []
    out = []
    for name, members in groups.items():
        ids, va, vb, rep = paired_values(a, b, metric, k_a, k_b, ids=[r["id"] for r in members])
        if not ids:
            continue
        out.append(SliceComparison(name, compare_metric(metric, ids, va, vb, rep, clusters, opts)))
    for s, q in zip(out, benjamini_hochberg([s.comparison.p for s in out])):
        s.q = q
    return out


__all__ = [
    "INCONCLUSIVE",
    "NO_REGRESSION",
    "REGRESSION",
    "Options",
    "RunComparison",
    "SliceComparison",
    "compare_runs",
    "paired_values",
]


def same_system(meta_a: Mapping[str, Any], meta_b: Mapping[str, Any]) -> bool:
    """An A/A pair: the same system spec, k and test-set version in both runs."""
    keys = ("system", "k", "testset_hash")
    return all(meta_a.get(k) is not None and meta_a.get(k) == meta_b.get(k) for k in keys)


def between_runs(
    a_records: Sequence[Mapping[str, Any]],
    a_meta: Mapping[str, Any],
    b_records: Sequence[Mapping[str, Any]],
    b_meta: Mapping[str, Any],
    *,
    doc: Any = None,
    metrics: Sequence[str] = ("pass",),
    options: Options | None = None,
) -> RunComparison:
    """:func:`compare_runs` with what the test set ``doc`` (when known) adds: the clusters
    (its corpus's documents, or its topics) and the tags."""
    from . import clusters as clus

    opts = options or Options()
    corpus = getattr(doc, "corpus_path", None) if doc is not None else b_meta.get("corpus")
    union = list({r["id"]: r for r in [*a_records, *b_records]}.values())
    labels, how = clus.resolve(union, opts.cluster_by, corpus)
    tags_of = {c.id: list(c.tags) for c in doc.cases} if doc is not None else None
    return compare_runs(
        a_records,
        b_records,
        metrics,
        k_a=a_meta.get("k"),
        k_b=b_meta.get("k"),
        clusters=labels,
        clusters_note=how,
        options=opts,
        tags_of=tags_of,
        same_system=same_system(a_meta, b_meta),
    )
