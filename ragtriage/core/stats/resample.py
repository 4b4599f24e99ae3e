"""Intervals by resampling: the paired bootstrap of a mean difference and the
bootstrap of a mean (a rate is the mean of yes/no), by cases or by clusters.

Cases that share a source document (or a ``topic``) are not independent: a change
to how that document is chunked moves all of them at once. Resampling then draws
whole clusters with replacement and takes the ratio Σ values / Σ cases over the
drawn clusters, so the interval is as wide as the clusters make it. The percentile
interval of ``BOOTSTRAP_RESAMPLES`` draws from a fixed seed (the same runs give the
same interval); beyond ``NORMAL_BEYOND`` clusters, where the bootstrap only
rediscovers the normal limit and costs seconds, the cluster-robust normal interval
of the same ratio is used instead.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator

import numpy as np
from numpy.typing import ArrayLike

from .intervals import Interval, z_of
from .paired_tests import SEED

BOOTSTRAP_RESAMPLES = 2000
NORMAL_BEYOND = 5_000  # clusters (or cases, unclustered) above which the normal interval is used


def codes(labels: Iterable[Hashable]) -> np.ndarray:
    """An integer cluster code per case from any hashable labels (first seen → 0)."""
    seen: dict[Hashable, int] = {}
    return np.fromiter((seen.setdefault(x, len(seen)) for x in labels), dtype=np.int64)


def _per_cluster(values: np.ndarray, clusters: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if clusters is None:
        return values.astype(float), np.ones(len(values))
    sums = np.bincount(clusters, weights=values.astype(float))
    sizes = np.bincount(clusters).astype(float)
    keep = sizes > 0
    return sums[keep], sizes[keep]


def robust_se(values: ArrayLike, clusters: np.ndarray | None = None) -> float:
    """Cluster-robust (linearised ratio) standard error of mean(values)."""
    v = np.asarray(values, dtype=float)
    s, m = _per_cluster(v, clusters)
    c = len(s)
    if c < 2:
        return math.nan
    mean = s.sum() / m.sum()
    resid = s - mean * m
    return float(math.sqrt(c / (c - 1) * float(np.sum(resid**2))) / m.sum())


def bootstrap_mean(
    values: ArrayLike,
    clusters: np.ndarray | None = None,
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = SEED,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> Interval:
    """Percentile bootstrap interval of mean(values), resampling clusters (or cases)."""
    v = np.asarray(values, dtype=float)
    s, m = _per_cluster(v, None if clusters is None else np.asarray(clusters))
    c = len(s)
    unit = "clusters" if clusters is not None else "cases"
    if c == 0:
        return Interval(bounds[0], bounds[1], level, "none (no case)")
    mean = float(s.sum() / m.sum())
    if c > NORMAL_BEYOND:
        half = z_of(level) * robust_se(v, None if clusters is None else np.asarray(clusters))
        lo, hi = max(bounds[0], mean - half), min(bounds[1], mean + half)
        return Interval(lo, hi, level, f"cluster-robust normal over {c:,} {unit}")
    stats = np.empty(resamples)
    ones = clusters is None  # every unit weighs 1: a resample's weight is c, exactly
    if c * resamples <= _KEEP:  # the draws of the last call are reused when they are these
        idx = _draws(seed, c, resamples)
        rows = max(1, _ROWS // c)  # a block of resamples at a time: the gathered values stay in cache
        for at in range(0, resamples, rows):
            part = idx[at : at + rows]
            stats[at : at + rows] = s[part].sum(axis=1) / (c if ones else m[part].sum(axis=1))
    else:
        for at, part in _blocks(np.random.default_rng(seed), c, resamples):
            stats[at : at + len(part)] = s[part].sum(axis=1) / (c if ones else m[part].sum(axis=1))
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(stats, [tail, 1.0 - tail])
    return Interval(
        max(bounds[0], float(lo)), min(bounds[1], float(hi)), level, f"bootstrap over {c:,} {unit}"
    )


_LAST_DRAWS: tuple[tuple[int, int, int] | None, np.ndarray | None] = (
    None,
    None,
)  # (seed, units, resamples), their draws (one tuple: thread-safe)


def _draws(seed: int, c: int, resamples: int) -> np.ndarray:
    """``resamples`` × ``c`` unit indices drawn with ``seed`` (what a fresh generator gives):
    the recall, precision and mrr of one set of cases resample the same units, so the last
    draws are kept (at most :data:`_KEEP` indices) instead of drawn again. Never written to."""
    global _LAST_DRAWS
    key = (seed, c, resamples)
    last = _LAST_DRAWS
    if last[0] == key and last[1] is not None:  # (set with the key: never None here)
        return last[1]
    idx = np.empty((resamples, c), dtype=np.int64)
    for at, part in _blocks(np.random.default_rng(seed), c, resamples):
        idx[at : at + len(part)] = part
    idx.setflags(write=False)
    _LAST_DRAWS = (key, idx)
    return idx


def _blocks(rng: np.random.Generator, c: int, resamples: int) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, rows) of the ``resamples`` × ``c`` draws, a few rows at a time. The
    generator's stream does not depend on how the draws are cut into calls, so these are
    the rows one ``rng.integers(0, c, size=(resamples, c))`` gives, drawn where they fit
    in the cache (tests/core/test_stats.py holds them equal). Drawn as int32 where ``c``
    fits: numpy draws any range under 2³² with the same 32-bit Lemire step for either
    type, so the values are those of the int64 draw, 30 % sooner."""
    rows = max(1, _ROWS // c)
    small = np.int32 if c < 1 << 31 else np.int64
    for at in range(0, resamples, rows):
        yield at, rng.integers(0, c, size=(min(rows, resamples - at), c), dtype=small)


_KEEP = 4_000_000  # indices kept between calls (32 MB)
_ROWS = 1 << 16  # indices drawn and gathered at a time (512 kB: the second-level cache)


def paired_bootstrap(
    diffs: ArrayLike, clusters: np.ndarray | None = None, *, level: float = 0.95, seed: int = SEED
) -> Interval:
    """Percentile bootstrap interval of the mean paired difference (B − A), resampling
    cases or clusters, never the two runs apart."""
    return bootstrap_mean(diffs, clusters, level=level, seed=seed, bounds=(-1.0, 1.0))
