"""One-sided tests of "B is worse than A" on paired cases.

- :func:`mcnemar`: the exact conditional McNemar test of a paired yes/no table, one
  sided, as a mid-p (the default: the methods literature's advice, Fagerland et al.
  2013) or as the exact binomial p (``conservative``). Only the discordant cases
  count: under "no change" each is a pass→fail with probability ½.
- :func:`sign_flip`: the paired sign-flip randomization test of a mean difference,
  on case differences or on cluster sums of them (cases that share a source
  document flip together). Exact when the distribution can be enumerated (integer
  differences by convolution at any size; other differences when at most
  ``EXACT_LIMIT`` clusters differ), else Monte Carlo with p = (k + 1)/(m + 1) and a
  fixed seed, so the same two runs always give the same p; beyond ``NORMAL_LIMIT``
  differing units (of non-whole differences) the distribution's normal limit.

Worked (n = 200): 4 ↓ / 0 ↑ → mid-p 0.031, exact 0.063; 9 ↓ / 2 ↑ → mid-p 0.019.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

SEED = 20251204  # every resampling in ragtriage starts here: the same runs, the same p
EXACT_LIMIT = 16  # clusters with a non-zero difference up to which signs are enumerated (2^16)
MC_RESAMPLES = 9999
NORMAL_LIMIT = 5000  # non-whole differences in more units than this: the normal limit, not Monte Carlo


@dataclass(frozen=True)
class TestResult:
    p: float  # one-sided: small when B is worse than A
    method: str


def binom_tail(k: int, n: int) -> tuple[float, float]:
    """(P(X ≥ k), P(X = k)) for X ~ Binomial(n, ½): exactly (integer arithmetic) up to
    n = 2,000 discordant cases, in log space beyond (double precision either way)."""
    if n == 0:
        return (1.0 if k <= 0 else 0.0), (1.0 if k == 0 else 0.0)
    if k <= 0:
        return 1.0, (0.5**n if k == 0 else 0.0)
    if k > n:
        return 0.0, 0.0
    if n <= 2000:
        total = 1 << n
        count = sum(math.comb(n, i) for i in range(k, n + 1))
        return count / total, math.comb(n, k) / total

    def log_pmf(i: int) -> float:
        return math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2.0)

    logs = [log_pmf(i) for i in range(k, n + 1)]
    top = max(logs)
    upper = math.exp(top) * math.fsum(math.exp(v - top) for v in logs)
    return min(upper, 1.0), math.exp(logs[0])


def mcnemar(worse: int, better: int, *, conservative: bool = False) -> TestResult:
    """One-sided McNemar of ``worse`` pass→fail against ``better`` fail→pass flips.

    exact p = P(X ≥ worse), mid-p = P(X > worse) + ½·P(X = worse), X ~ Bin(worse + better, ½)."""
    upper, at = binom_tail(worse, worse + better)
    if conservative:
        return TestResult(upper, "exact McNemar (binomial)")
    return TestResult(upper - at / 2.0, "mid-p McNemar")


def _cluster_sums(diffs: np.ndarray, clusters: np.ndarray | None) -> np.ndarray:
    if clusters is None:
        return diffs.astype(float)
    return np.bincount(clusters, weights=diffs.astype(float))


def _as_integers(s: np.ndarray) -> np.ndarray | None:
    """``s`` as integers when every value is one (to within rounding), else None."""
    r = np.rint(s)
    if s.size and np.all(np.abs(s - r) < 1e-9) and np.abs(r).sum() <= 4_000_000:
        ints: np.ndarray = r.astype(np.int64)
        return ints
    return None


def _binom_half(m: int) -> np.ndarray:
    """The Binomial(m, ½) probabilities of 0..m (in log space: any m)."""
    k = np.arange(m, dtype=float)
    logs = np.concatenate(([0.0], np.cumsum(np.log((m - k) / (k + 1)))))
    probs: np.ndarray = np.exp(logs - m * np.log(2.0))
    return probs


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Convolution of two probability vectors: directly when short, by FFT otherwise."""
    if min(len(a), len(b)) < 256:
        return np.convolve(a, b)
    n = len(a) + len(b) - 1
    size = 1 << (n - 1).bit_length()
    out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:n]
    return np.clip(out, 0.0, None)


def _convolved(s: np.ndarray) -> tuple[np.ndarray, int]:
    """Distribution of Σ ±s_c (fair signs) for integer s: probabilities over
    offsets −Σ|s| … +Σ|s| (returned with that offset). Sums of one size v are grouped:
    m of them give v·(2X − m) with X ~ Bin(m, ½), so the work is one convolution per
    distinct size, not per cluster."""
    a = np.abs(s[s != 0])
    values, counts = np.unique(a, return_counts=True)
    dist = np.array([1.0])
    total = 0
    for v, m in zip(values.tolist(), counts.tolist()):
        group = np.zeros(2 * v * m + 1)
        group[:: 2 * v] = _binom_half(m)
        dist = _convolve(dist, group)
        total += v * m
    return dist, total


def sign_flip(
    diffs: ArrayLike,
    clusters: np.ndarray | None = None,
    *,
    mid_p: bool = False,
    resamples: int = MC_RESAMPLES,
    seed: int = SEED,
) -> TestResult:
    """One-sided sign-flip test of mean(diffs) < 0 (diffs = B − A per case).

    ``clusters``: an integer code per case (0..C−1); the signs of whole clusters flip.
    ``mid_p``: half the probability of a tie with the observed sum (the mid-p of a
    discrete test; only used for yes/no outcomes)."""
    d = np.asarray(diffs, dtype=float)
    s = _cluster_sums(d, None if clusters is None else np.asarray(clusters))
    observed = float(s.sum())
    nz = s[s != 0]
    unit = "clusters" if clusters is not None else "cases"
    if nz.size == 0:
        return TestResult(0.5 if mid_p else 1.0, f"sign-flip over {unit} (exact: no difference)")
    ints = _as_integers(nz)
    if ints is not None:
        dist, off = _convolved(ints)
        obs = int(round(observed))
        below = float(dist[: obs + off].sum())
        at = float(dist[obs + off])
        p = below + (0.5 * at if mid_p else at)
        return TestResult(min(p, 1.0), f"sign-flip over {unit} (exact)")
    tol = 1e-9 * max(1.0, float(np.abs(nz).sum()))
    if nz.size <= EXACT_LIMIT:
        m = nz.size
        signs = ((np.arange(1 << m)[:, None] >> np.arange(m)) & 1) * 2 - 1
        sums = signs @ nz
        below = float(np.count_nonzero(sums < observed - tol)) / len(sums)
        at = float(np.count_nonzero(np.abs(sums - observed) <= tol)) / len(sums)
        return TestResult(below + (0.5 * at if mid_p else at), f"sign-flip over {unit} (exact, 2^{m})")
    if nz.size > NORMAL_LIMIT:  # the sign-flip sum's normal limit (Lindeberg: many bounded sums)
        from statistics import NormalDist

        z = observed / float(np.sqrt(np.sum(nz**2)))
        return TestResult(NormalDist().cdf(z), f"sign-flip over {unit} (normal limit, {nz.size:,} differ)")
    rng = np.random.default_rng(seed)
    k = 0
    block = max(1, min(resamples, 4_000_000 // nz.size))
    done = 0
    while done < resamples:
        b = min(block, resamples - done)
        signs = rng.integers(0, 2, size=(b, nz.size), dtype=np.int8) * 2 - 1
        k += int(np.count_nonzero(signs @ nz <= observed + tol))
        done += b
    return TestResult((k + 1) / (resamples + 1), f"sign-flip over {unit} (Monte Carlo, {resamples:,})")
